"""A verified per-file sha256 cache, and sealed JSON records, for ``kldcard evaluate``'s cache.

Hashing a 16 GB model takes about 10 s, so ``kldcard evaluate`` remembers each file's sha256 next
to the file's identity: (device, inode, size, mtime_ns, ctime_ns). Any change to any of them means
the whole file is hashed again. ``ctime`` is the guard that matters: a file edited in place and then
given back its size and mtime (``touch -d``) still gets a new ctime, which no unprivileged process
can set. The index lives in ``sha256.json``, sealed like every cache record: a record carries the
sha256 of its own canonical JSON, so a hand-edited, truncated or garbage record is detected and
discarded (one line saying so), never trusted.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kldcard.files import sha256_file, write_atomic

__all__ = ["FileHashes", "seal", "unseal"]

_FORMAT = "kldcard-sha256-index"


def _digest(body: Any) -> str:
    return hashlib.sha256(json.dumps(body, sort_keys=True, separators=(",", ":")).encode()).hexdigest()


def seal(body: dict[str, Any]) -> str:
    """``body`` as JSON text carrying the sha256 of its own canonical form (key ``sha256``)."""
    return json.dumps({**body, "sha256": _digest(body)}, indent=1, sort_keys=True) + "\n"


def unseal(raw: bytes) -> tuple[dict[str, Any] | None, str]:
    """(the body of a sealed record, "") or (None, why it cannot be trusted)."""
    try:
        data = json.loads(raw)
    except (ValueError, RecursionError):
        return None, "is not valid JSON (truncated or garbage)"
    if not isinstance(data, dict) or not isinstance(data.get("sha256"), str):
        return None, "is not a sealed record"
    body = {k: v for k, v in data.items() if k != "sha256"}
    if _digest(body) != data["sha256"]:
        return None, "does not match its own sha256 (edited by hand?)"
    return body, ""


class FileHashes:
    """sha256 of files, computed once per (device, inode, size, mtime_ns, ctime_ns) of each file."""

    def __init__(self, index: Path, say: Callable[[str], None]):
        self.index, self.say = Path(index), say
        self._files: dict[str, dict[str, Any]] | None = None

    def _load(self) -> dict[str, dict[str, Any]]:
        if self._files is None:
            self._files = {}
            try:
                raw = self.index.read_bytes() if self.index.is_file() else None
            except OSError:
                raw = b""
            if raw is not None:
                body, why = unseal(raw)
                if body is None or body.get("format") != _FORMAT or not isinstance(body.get("files"), dict):
                    self.say(f"cache: {self.index} {why or 'is not a sha256 index of this kldcard'}; "
                             "discarded, files are hashed again")
                else:
                    self._files = body["files"]
        return self._files

    @staticmethod
    def _identity(st: os.stat_result) -> list[int]:
        return [st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]

    def sha256(self, path: Path) -> str:
        """The file's sha256, hashed again unless its identity is exactly the one recorded."""
        files, name = self._load(), str(Path(path).resolve())
        st = os.stat(name)
        rec = files.get(name)
        if isinstance(rec, dict) and rec.get("stat") == self._identity(st) and isinstance(rec.get("sha256"), str):
            return rec["sha256"]
        sha = sha256_file(name)
        after = os.stat(name)
        if self._identity(after) == self._identity(st):  # not changed while it was read
            files[name] = {"stat": self._identity(after), "sha256": sha}
            self._save()
        return sha

    def remember(self, shas: dict[Path, str]) -> None:
        """Record files this process has just written and hashed itself (a capture's shards: hashing
        them again would read gigabytes for nothing)."""
        files = self._load()
        for path, sha in shas.items():
            name = str(Path(path).resolve())
            files[name] = {"stat": self._identity(os.stat(name)), "sha256": sha}
        self._save()

    def _save(self) -> None:
        files = self._load()
        live = {k: v for k, v in files.items() if os.path.exists(k)}  # forget deleted files
        write_atomic(self.index, seal({"format": _FORMAT, "files": live}))
