"""Content-addressed results of ``kldcard evaluate``, so a rerun does only what changed.

Keys are sha256 of a canonical JSON of everything that decides a number: the engine and its
library version, the model files' sha256, the text's sha256, positions, context, protocol, engine
settings and kldcard's version; a candidate's key adds the reference capture's key and its token
ids' and positions' sha256. Layout under the cache directory::

    reference/<key>/          the reference capture (a capture store, float32; atomic)
    results/<key>.per-token.npz
    results/<key>.json        the compare result, written last: its presence marks the entry complete
    parity/<key>.json         token parity across all engines of the job
    sha256.json               file sha256 by (path, size, mtime), so large models are hashed once

Every file is written with :mod:`kldcard.files` (temp + rename) and a capture finalises by rename,
so an interrupt (Ctrl-C or kill -9) leaves either a complete entry or none at all.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from importlib import metadata
from pathlib import Path
from typing import Any

from kldcard import engines
from kldcard.errors import InputError
from kldcard.files import sha256_file, write_atomic

__all__ = ["ResultCache", "check_free_disk", "content_key"]

_ENGINE_PACKAGES = {"transformers": ("torch", "transformers"), "llama.cpp": ("llama_cpp_python",), "mlx": ("mlx", "mlx_lm")}


def content_key(parts: dict[str, Any]) -> str:
    return hashlib.sha256(json.dumps(parts, sort_keys=True, default=str).encode()).hexdigest()


def engine_versions(engine: str) -> dict[str, str | None]:
    """Library versions of ``engine`` (part of every key: another build may compute other logits)."""
    out: dict[str, str | None] = {}
    for dist in _ENGINE_PACKAGES.get(engines.canonical_name(engine), ()):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def check_free_disk(where: Path, need_bytes: int, what: str) -> None:
    """Refuse (InputError, with the numbers) to write ``need_bytes`` where less is free (+ 5 % slack)."""
    probe = where
    while not probe.exists():
        probe = probe.parent
    free = shutil.disk_usage(probe).free
    if need_bytes * 1.05 > free:
        raise InputError(f"{what} needs about {need_bytes / 2**30:.2f} GiB and {probe} has {free / 2**30:.2f} GiB "
                         f"free; free some space or point cache: elsewhere")


class ResultCache:
    def __init__(self, root: Path):
        self.root = Path(root)
        self._sha: dict[str, Any] | None = None

    # -- model files ------------------------------------------------------------------------------

    def files_sha256(self, path: Path) -> dict[str, str]:
        """sha256 of a file, or of every file in a directory (relative name -> sha256)."""
        path = Path(path)
        if not path.exists():
            raise InputError(f"{path}: no such model file or directory")
        files = [path] if path.is_file() else sorted(
            p for p in path.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts))
        out = {}
        for f in files:
            out[f.name if f == path else str(f.relative_to(path))] = self._sha256(f)
        return out

    def _sha256(self, f: Path) -> str:
        if self._sha is None:
            idx = self.root / "sha256.json"
            self._sha = json.loads(idx.read_text(encoding="utf-8")) if idx.is_file() else {}
        st = f.stat()
        k = f"{f.resolve()}|{st.st_size}|{st.st_mtime_ns}"
        if k not in self._sha:
            self._sha[k] = sha256_file(f)
            write_atomic(self.root / "sha256.json", json.dumps(self._sha, indent=0, sort_keys=True))
        return self._sha[k]

    # -- entries ----------------------------------------------------------------------------------

    def reference_dir(self, key: str) -> Path:
        return self.root / "reference" / key

    def result_paths(self, key: str) -> tuple[Path, Path]:
        d = self.root / "results"
        return d / f"{key}.json", d / f"{key}.per-token.npz"

    def has_result(self, key: str) -> bool:
        js, npz = self.result_paths(key)
        return js.is_file() and npz.is_file()

    def parity_path(self, key: str) -> Path:
        return self.root / "parity" / f"{key}.json"

    def read_json(self, path: Path) -> Any:
        return json.loads(path.read_text(encoding="utf-8"))

    def write_json(self, path: Path, data: Any) -> None:
        write_atomic(path, json.dumps(data, indent=2, sort_keys=True) + "\n")

    def entries(self) -> int:
        d = self.root / "results"
        return len(list(d.glob("*.json"))) if d.is_dir() else 0

    def __repr__(self) -> str:
        return f"ResultCache({str(self.root)!r})"


