"""Content-addressed results of ``kldcard evaluate``, so a rerun does only what changed.

Keys are sha256 of a canonical JSON of everything that decides a number: the engine and its
library version, the model files' sha256, the text's sha256, positions, context, protocol, engine
settings and kldcard's version; a candidate's key adds the reference capture's key and its token
ids' and positions' sha256. Layout under the cache directory::

    reference/<key>/          the reference capture (a capture store, float32; atomic)
    results/<key>.per-token.npz
    results/<key>.json        the compare result
    results/<key>.entry.json  written last (its presence marks the entry complete): the key's inputs,
                              the sha256 of the two files above and the candidate's quantization, sealed
    parity/<key>.json         token parity across all engines of the job (sealed)
    sha256.json               the verified per-file hash cache (:mod:`kldcard.evaluate.hashes`)

What is served is proved first: a result only when its entry's seal holds, its inputs hash to the
key and both files match their sha256; the reference capture only when every file matches the sha256
its manifest lists (:func:`kldcard.capture.store.open_capture`, through the hash cache). Anything
else is discarded with one line saying so and computed again. A result names no candidate: the
name and a stated quantization are the project's, applied when it is read, so renaming or swapping
names cannot relabel a number. Every file is written with :mod:`kldcard.files` (temp + rename) and a
capture finalises by rename, so an interrupt (Ctrl-C or kill -9) leaves either a complete entry or
none; work directories of killed runs are removed by the next run (:mod:`kldcard.capture.partial`).
"""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
from collections.abc import Callable
from importlib import metadata
from pathlib import Path
from typing import Any

from kldcard import engines
from kldcard.errors import InputError
from kldcard.evaluate.hashes import FileHashes, seal, unseal
from kldcard.files import sha256_file, write_atomic

__all__ = ["ResultCache", "check_free_disk", "content_key", "engine_versions"]

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



_ENTRY = "kldcard-evaluate-entry"


class ResultCache:
    """The cache directory of one ``kldcard evaluate`` run; ``say`` gets its one-line notices."""

    def __init__(self, root: Path, say: Callable[[str], None] = print):
        self.root, self.say = Path(root), say
        self.hashes = FileHashes(self.root / "sha256.json", say)

    # -- files ------------------------------------------------------------------------------------

    def files_sha256(self, path: Path) -> dict[str, str]:
        """sha256 of a file, or of every file in a directory (relative name -> sha256)."""
        path = Path(path)
        if not path.exists():
            raise InputError(f"{path}: no such model file or directory")
        files = [path] if path.is_file() else sorted(
            p for p in path.rglob("*") if p.is_file() and not any(part.startswith(".") for part in p.relative_to(path).parts))
        try:
            return {f.name if f == path else str(f.relative_to(path)): self.hashes.sha256(f) for f in files}
        except OSError as exc:
            raise InputError(f"cannot read {path}: {exc.strerror or exc}") from None

    def remove_stale_work(self) -> None:
        """Remove what killed runs left: capture work directories no live process holds."""
        from kldcard.capture.partial import remove_stale_work_dirs

        n, freed = remove_stale_work_dirs(self.root / "reference")
        if n:
            self.say(f"cache: removed {n} unfinished reference capture(s) of interrupted runs ({freed / 2**20:.1f} MiB)")

    # -- the reference ----------------------------------------------------------------------------

    def reference_dir(self, key: str) -> Path:
        return self.root / "reference" / key

    def open_reference(self, key: str):
        """The cached reference capture, every file checked against its manifest's sha256 (through
        the hash cache), or None when there is none or it failed the check (then it is removed)."""
        from kldcard.capture.store import open_capture
        from kldcard.errors import CorruptCapture

        d = self.reference_dir(key)
        if not (d / "manifest.json").is_file():
            return None
        try:
            return open_capture(d, verify=True, sha256=self.hashes.sha256)
        except (CorruptCapture, InputError, OSError) as exc:
            self.say(f"cache: reference capture {key[:12]} failed verification ({exc}); discarded, capturing it again")
            self._discard_dir(d)
            return None

    def remember_capture(self, cap) -> None:
        """Record the sha256 a capture's writer computed for its files (this process wrote them)."""
        m = cap.manifest
        self.hashes.remember({cap.path / f.file: f.sha256 for f in [m.tokens_file, *m.shards]})

    def _discard_dir(self, d: Path) -> None:
        aside = d.parent / f".{d.name}.old-{secrets.token_hex(4)}"
        try:
            os.replace(d, aside)
        except OSError:
            return
        shutil.rmtree(aside, ignore_errors=True)

    # -- results ----------------------------------------------------------------------------------

    def result_paths(self, key: str) -> tuple[Path, Path]:
        d = self.root / "results"
        return d / f"{key}.json", d / f"{key}.per-token.npz"

    def entry_path(self, key: str) -> Path:
        return self.root / "results" / f"{key}.entry.json"

    def load_result(self, key: str, inputs: dict[str, Any], name: str) -> tuple[Any, dict[str, Any]] | None:
        """(the verified :class:`CompareResult`, its entry) of ``key``, or None when there is none or
        it fails verification (then it is removed, with one line naming ``name``)."""
        js, npz = self.result_paths(key)
        entry = self.entry_path(key)
        if not (js.exists() or npz.exists() or entry.exists()):
            return None
        found, why = self._verified(key, inputs)
        if found is not None:
            return found
        self.say(f"cache: result {key[:12]} ({name}) {why}; discarded, evaluating it again")
        for f in (entry, js, npz):
            f.unlink(missing_ok=True)
        return None

    def _verified(self, key: str, inputs: dict[str, Any]) -> tuple[tuple[Any, dict[str, Any]] | None, str]:
        from pydantic import ValidationError

        from kldcard.capture.fingerprint import sha256_bytes
        from kldcard.compare.run import CompareResult

        js, npz = self.result_paths(key)
        try:
            raw_entry = self.entry_path(key).read_bytes()
            raw_js = js.read_bytes()
        except FileNotFoundError as exc:
            return None, f"is incomplete ({Path(exc.filename).name} is missing)"
        body, why = unseal(raw_entry)
        if body is None:
            return None, f"has an entry record that {why}"
        if body.get("format") != _ENTRY or body.get("key") != key or content_key(body.get("inputs")) != key \
                or content_key(inputs) != key:
            return None, "has an entry record of other inputs"
        shas = body.get("sha256_of") or {}
        if sha256_bytes(raw_js) != shas.get(js.name):
            return None, f"{js.name} does not match its entry's sha256 (edited or truncated)"
        if not npz.is_file() or sha256_file(npz) != shas.get(npz.name):
            return None, f"{npz.name} is missing or does not match its entry's sha256"
        try:
            return (CompareResult.model_validate_json(raw_js), body), ""
        except ValidationError:
            return None, f"{js.name} is not a result of this kldcard"

    def store_result(self, key: str, inputs: dict[str, Any], quantization: dict[str, Any] | None) -> None:
        """Seal the entry of the result and per-token files just written for ``key`` (written last:
        its presence marks the entry complete)."""
        js, npz = self.result_paths(key)
        body = {"format": _ENTRY, "key": key, "inputs": json.loads(json.dumps(inputs, default=str)),
                "sha256_of": {js.name: sha256_file(js), npz.name: sha256_file(npz)}, "quantization": quantization}
        write_atomic(self.entry_path(key), seal(body))

    def entries(self) -> int:
        d = self.root / "results"
        return len(list(d.glob("*.entry.json"))) if d.is_dir() else 0

    # -- parity -----------------------------------------------------------------------------------

    def parity_path(self, key: str) -> Path:
        return self.root / "parity" / f"{key}.json"

    def read_parity(self, key: str) -> dict[str, Any] | None:
        """The sealed parity record of ``key``, or None (an unsound one is removed, one line)."""
        path = self.parity_path(key)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            return None
        body, why = unseal(raw)
        if body is None or not isinstance(body.get("parity"), dict):
            self.say(f"cache: token parity record {key[:12]} {why or 'holds no parity'}; discarded, checking again")
            path.unlink(missing_ok=True)
            return None
        return body["parity"]

    def write_parity(self, key: str, parity: dict[str, Any]) -> None:
        write_atomic(self.parity_path(key), seal({"parity": parity}))

    def __repr__(self) -> str:
        return f"ResultCache({str(self.root)!r})"
