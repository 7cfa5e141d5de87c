"""Atomic file writes: a temporary sibling, then ``os.replace``.

Every file kldcard writes (results, reports, cards, plots, generated docs) goes through here, so an
error or Ctrl-C never leaves half a file and never loses the old one. Capture directories and
llama.cpp base files are written incrementally and finalise the same way in their own writers.
"""

from __future__ import annotations

import os
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


@contextmanager
def atomic_path(path: str | os.PathLike[str], suffix: str = ".tmp") -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it replaces ``path`` (keeping an existing
    file's permission bits), on any exception it is removed and ``path`` is untouched."""
    p = Path(path)
    p.parent.mkdir(parents=True, exist_ok=True)
    mode = p.stat().st_mode & 0o7777 if p.is_file() else None
    fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.", suffix=suffix, dir=p.parent)
    os.close(fd)
    try:
        yield Path(tmp)
        if mode is not None:
            os.chmod(tmp, mode)
        os.replace(tmp, p)
    finally:
        if os.path.exists(tmp):
            os.unlink(tmp)


def write_atomic(path: str | os.PathLike[str], data: bytes | str) -> Path:
    """Replace ``path`` with ``data`` (str is written as UTF-8 with ``\\n`` line endings untouched)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_path(path) as tmp:
        with open(tmp, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
    return Path(path)
