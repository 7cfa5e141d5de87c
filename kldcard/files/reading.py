"""Reading inputs: what a path names (a regular file, or the kind of thing it is instead) and its bytes
or UTF-8 text, each failure one :class:`~kldcard.errors.InputError` line (exit 2)."""

from __future__ import annotations

import hashlib
import os
import stat
from pathlib import Path
from typing import Any

from kldcard.errors import InputError


def stat_or_none(path: Path, follow: bool = True) -> os.stat_result | None:
    """``path``'s stat, None when nothing is there (or the name cannot exist: too long, NUL byte)."""
    try:
        return path.stat() if follow else path.lstat()
    except (OSError, ValueError):
        return None


def is_file(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` names a regular file (symlinks followed). Unlike ``Path.is_file`` it is
    False, not an OSError, for a name the system refuses (over 255 bytes, ENAMETOOLONG): names come
    from cards and project files, and a hostile one must read as "not there"."""
    st = stat_or_none(Path(path))
    return st is not None and stat.S_ISREG(st.st_mode)


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
        raise InputError(f"{what} {p} is {file_kind(st.st_mode)}, not a regular file; save it to a file first")
    return st


def file_kind(mode: int) -> str:
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
