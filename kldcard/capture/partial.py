"""Hidden work directories of capture writers, and removing the ones killed runs left behind.

A capture is written into ``.<name>.partial-<random>`` next to its target and renamed into place
when complete (:mod:`kldcard.capture.store`); a replaced capture is moved aside as
``.<name>.old-<random>`` first. A kill -9 leaves either behind, and a reference capture's can be
hundreds of MB. The writer holds an exclusive ``flock`` on its work directory for as long as it
writes, so a later run tells a stale directory (no lock held: its writer is gone) from one a
concurrently running process is still writing, without trusting pids, which are reused.
"""

from __future__ import annotations

import os
import secrets
import shutil
import time
from pathlib import Path

from kldcard.errors import InputError

__all__ = ["make_partial_dir", "release_partial_dir", "remove_stale_work_dirs"]

try:  # POSIX; elsewhere only age decides (see remove_stale_work_dirs)
    import fcntl
except ImportError:  # pragma: no cover - Windows
    fcntl = None  # type: ignore[assignment]

_HELD: dict[str, int] = {}  # partial dir -> the fd holding its lock (released on finalize or abort)
_MIN_AGE_S = 60.0  # a directory younger than this may be between mkdir and flock: left alone
_UNLOCKABLE_AGE_S = 24 * 3600.0  # where flock does not exist, only a day-old directory is stale


def make_partial_dir(out_dir: Path) -> Path:
    """Create and lock the hidden sibling ``.<name>.partial-<random>`` a capture is written into;
    InputError (one line, exit 2) when ``out_dir``'s parent cannot hold it."""
    try:
        out_dir.parent.mkdir(parents=True, exist_ok=True)
        partial = out_dir.parent / f".{out_dir.name}.partial-{secrets.token_hex(4)}"
        partial.mkdir()
    except OSError as exc:
        raise InputError(f"cannot create {out_dir}: {exc.strerror or exc}") from None
    if fcntl is not None:
        fd = os.open(partial, os.O_RDONLY)
        fcntl.flock(fd, fcntl.LOCK_EX)
        _HELD[str(partial)] = fd
    return partial


def release_partial_dir(partial: Path) -> None:
    """Drop the lock of a work directory (after it was renamed into place or removed)."""
    fd = _HELD.pop(str(partial), None)
    if fd is not None:
        os.close(fd)


def _stale(path: Path, now: float) -> bool:
    try:
        age = now - path.stat().st_mtime
    except OSError:
        return False
    if fcntl is None:
        return age > _UNLOCKABLE_AGE_S
    if age < _MIN_AGE_S or str(path) in _HELD:
        return False
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return False
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:  # a live writer holds it
        os.close(fd)
        return False
    os.close(fd)
    return True


def remove_stale_work_dirs(parent: Path) -> tuple[int, int]:
    """Remove the ``.*.partial-*`` and ``.*.old-*`` directories under ``parent`` whose writer is gone;
    returns (directories removed, bytes freed). Those of a running writer are kept."""
    if not parent.is_dir():
        return 0, 0
    now, n, freed = time.time(), 0, 0
    for d in parent.iterdir():
        if not d.name.startswith(".") or not (".partial-" in d.name or ".old-" in d.name) or d.is_symlink() \
                or not d.is_dir() or not _stale(d, now):
            continue
        size = sum(f.stat().st_size for f in d.rglob("*") if f.is_file() and not f.is_symlink())
        shutil.rmtree(d, ignore_errors=True)
        if not d.exists():
            n, freed = n + 1, freed + size
    return n, freed
