"""Files in and out: the one atomic writer, its one error mapping, and the one text reader.

Every file kldcard writes (results, reports, cards, plots, baselines) goes through :func:`atomic_path`
or :func:`write_atomic`: a temporary sibling, fsync, then ``os.replace``, so an error, Ctrl-C or kill
never leaves half a file and never loses the old one. Any OSError on the way becomes one
:class:`~kldcard.errors.InputError` line (exit 2) naming the path. Capture directories and llama.cpp
base files are written incrementally and finalise the same way in their own writers.
"""

from __future__ import annotations

import hashlib
import os
import stat
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kldcard.errors import InputError

__all__ = ["atomic_path", "fsync_dir", "sha256_file", "check_output_file", "decode_utf8", "output_errors", "read_bytes", "read_text", "regular_file", "write_atomic"]


@contextmanager
def output_errors(path: str | os.PathLike[str]) -> Iterator[None]:
    """Turn an OSError while writing ``path`` into one InputError line (exit 2)."""
    try:
        yield
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None


def check_output_file(path: str | os.PathLike[str], option: str) -> None:
    """Raise InputError if ``path`` cannot become a file (it is a directory, or a parent is a file);
    commands call this before computing, so a typo does not cost the whole run."""
    p = Path(path)
    if p.is_dir():
        raise InputError(f"{option} {p} is a directory; give a file name")
    for parent in p.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{option} {p}: {parent} is a file, not a directory")
            break


@contextmanager
def atomic_path(path: str | os.PathLike[str], suffix: str = ".tmp", *, parents: bool = True) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it replaces ``path`` (keeping an existing
    file's permission bits), on any exception it is removed and ``path`` is untouched. OSErrors,
    the caller's writes included, become :class:`InputError`. ``parents=False`` refuses a missing
    directory instead of creating it (a card path with a typo should not grow a folder)."""
    p = Path(path)
    if not parents and not p.parent.is_dir():
        raise InputError(f"{p.parent}: no such directory to write {p.name} into")
    with output_errors(p):
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


def write_atomic(path: str | os.PathLike[str], data: bytes | str, *, parents: bool = True) -> Path:
    """Replace ``path`` with ``data`` (str is written as UTF-8, line endings untouched)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    with atomic_path(path, parents=parents) as tmp:
        with open(tmp, "wb") as f:
            f.write(raw)
            f.flush()
            os.fsync(f.fileno())
    return Path(path)


def read_bytes(path: str | os.PathLike[str], what: str = "file", *, limit: int | None = None) -> bytes:
    """A regular file's bytes (at most ``limit``), or one InputError line saying why they cannot be read.

    Only regular files: a FIFO without a writer blocks ``open`` forever and ``/dev/zero`` never ends,
    so a path that names either must be refused before it is opened, not read with a timeout. The
    read itself stops at ``limit + 1`` bytes, because ``st_size`` is 0 for /proc files and a file may
    grow between ``stat`` and ``read``.
    """
    p = Path(path)
    st = regular_file(p, what)
    if limit is not None and st.st_size > limit:
        raise InputError(f"{what} {p} has {st.st_size} bytes, over the limit of {limit}")
    try:
        with open(p, "rb") as f:
            data = f.read() if limit is None else _read_at_most(f, limit + 1, st.st_size)
    except OSError as exc:
        raise InputError(f"cannot read {what} {p}: {exc.strerror or exc}") from None
    if limit is not None and len(data) > limit:
        raise InputError(f"{what} {p} has more than {limit} bytes, over the limit")
    return data


def _read_at_most(f: Any, n: int, size: int) -> bytes:
    """Up to ``n`` bytes of ``f``; ``read(n)`` would allocate ``n`` bytes up front, so the stated size
    (+1, to see growth) is read first and the rest, if the file grew or lied, in 1 MiB blocks."""
    parts = [f.read(min(n, size + 1))]
    got = len(parts[0])
    while got < n and len(parts[-1]) > 0 and got > size:
        parts.append(f.read(min(n - got, 1 << 20)))
        got += len(parts[-1])
    return b"".join(parts)


def regular_file(path: str | os.PathLike[str], what: str = "file") -> os.stat_result:
    """``path``'s stat when it is a regular file (symlinks followed), else one InputError line.

    Call it before opening any input: a FIFO without a writer blocks ``open`` forever and a device
    such as ``/dev/zero`` never ends, so both must be refused before they are opened.
    """
    p = Path(path)
    try:
        st = p.stat()
    except FileNotFoundError:
        raise InputError(f"{what} {p} does not exist") from None
    except OSError as exc:
        raise InputError(f"cannot read {what} {p}: {exc.strerror or exc}") from None
    if stat.S_ISDIR(st.st_mode):
        raise InputError(f"{what} {p} is a directory, not a file")
    if not stat.S_ISREG(st.st_mode):
        raise InputError(f"{what} {p} is {_kind(st.st_mode)}, not a regular file; save it to a file first")
    return st


def _kind(mode: int) -> str:
    if stat.S_ISFIFO(mode):
        return "a named pipe (FIFO)"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def decode_utf8(data: bytes, path: str | os.PathLike[str], what: str = "file") -> str:
    """``data`` as UTF-8 text, or one InputError line naming the first bad byte."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(
            f"{what} {path} is not valid UTF-8 (byte {exc.start}: {data[exc.start:exc.start + 1]!r})"
        ) from None


def read_text(path: str | os.PathLike[str], what: str = "file") -> str:
    """A UTF-8 text file's content, or one InputError line saying why it cannot be read."""
    return decode_utf8(read_bytes(path, what), path, what)


def sha256_file(path: str | os.PathLike[str]) -> str:
    """Hex sha256 of a file, read in 8 MiB blocks."""
    h = hashlib.sha256()
    buf = bytearray(8 << 20)
    view = memoryview(buf)
    with open(path, "rb") as f:
        while n := f.readinto(buf):
            h.update(view[:n])
    return h.hexdigest()


def fsync_dir(path: str | os.PathLike[str]) -> None:
    """Flush a directory entry (after a rename), where the platform has directory descriptors."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:  # pragma: no cover - platforms without directory fds
        return
    try:
        os.fsync(fd)
    except OSError:  # pragma: no cover
        pass
    finally:
        os.close(fd)
