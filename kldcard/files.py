"""Files in and out: the one output policy, the one atomic writer, its one error mapping, and the one reader.

Every file kldcard writes (results, reports, cards, plots, baselines) goes through :func:`atomic_path`
or :func:`write_atomic`: a temporary sibling, fsync, then ``os.replace``, so an error, Ctrl-C or kill
never leaves half a file and never loses the old one. Any OSError on the way becomes one
:class:`~kldcard.errors.InputError` line (exit 2) naming the path. Capture directories and llama.cpp
base files are written incrementally and finalise the same way in their own writers.

The output policy, the same for every writer:

- a target that is one of the run's inputs (same device and inode, so also through a symlink or a
  hard link) is refused before anything is written (:func:`check_output_file`, which commands call
  with their inputs while validating options);
- only a regular file (or a new name) is replaced: a FIFO, device or socket is refused, and ``-``
  means stdout only where an option says so;
- a symlink is followed and its *target* replaced, so the link stays a link;
- the replaced file keeps its permission bits; a new one gets the umask's (not mkstemp's 0600);
- a text file that began with a UTF-8 byte-order mark keeps it;
- a temporary file left by a killed run (our naming pattern, its process gone) is removed by the
  next write next to it.
"""

from __future__ import annotations

import hashlib
import os
import re
import stat
import sys
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from kldcard.errors import InputError

__all__ = ["BOM", "MAX_NESTING", "atomic_path", "check_output_dir", "check_output_file", "decode_utf8", "fsync_dir", "is_file", "keep_bom",
           "loads_json", "loads_toml", "output_errors", "read_bytes", "read_text", "regular_file", "sha256_file",
           "write_atomic"]

BOM = b"\xef\xbb\xbf"
# Temporary siblings are named ".<name>.kldcard-<pid>-<random><suffix>": the pid lets a later run tell
# a leftover of a killed process (removed) from the live temporary file of a concurrent one (kept).
_TMP_TAG = "kldcard-"
_TMP_PID = re.compile(r"kldcard-([0-9]+)-")


@contextmanager
def output_errors(path: str | os.PathLike[str]) -> Iterator[None]:
    """Turn an OSError while writing ``path`` into one InputError line (exit 2)."""
    try:
        yield
    except OSError as exc:
        raise InputError(f"cannot write {path}: {exc.strerror or exc}") from None


def _stat(path: Path, follow: bool = True) -> os.stat_result | None:
    """``path``'s stat, None when nothing is there (or the name cannot exist: too long, NUL byte)."""
    try:
        return path.stat() if follow else path.lstat()
    except (OSError, ValueError):
        return None


def is_file(path: str | os.PathLike[str]) -> bool:
    """True when ``path`` names a regular file (symlinks followed). Unlike ``Path.is_file`` it is
    False, not an OSError, for a name the system refuses (over 255 bytes, ENAMETOOLONG): names come
    from cards and project files, and a hostile one must read as "not there"."""
    st = _stat(Path(path))
    return st is not None and stat.S_ISREG(st.st_mode)


def _same_file(a: os.stat_result, b: os.stat_result) -> bool:
    return (a.st_dev, a.st_ino) == (b.st_dev, b.st_ino)


def _input_stats(inputs: Iterable[str | os.PathLike[str] | None]) -> Iterator[tuple[Path, os.stat_result]]:
    """(path, stat) of each input file; a directory input (a capture) stands for the files in it."""
    for item in inputs:
        if item is None:
            continue
        p = Path(item)
        st = _stat(p)
        if st is None:
            continue
        if stat.S_ISDIR(st.st_mode):
            try:
                children = list(p.iterdir())
            except OSError:
                continue
            for child in children:
                cst = _stat(child)
                if cst is not None and stat.S_ISREG(cst.st_mode):
                    yield child, cst
        else:
            yield p, st


def check_output_file(path: str | os.PathLike[str], option: str,
                      inputs: Iterable[str | os.PathLike[str] | None] = (), *, stdout: bool = False) -> Path | None:
    """The output policy's checks, run by commands before computing or writing anything: raise one
    InputError line (exit 2) when ``path`` is a directory, a FIFO, device or socket, sits under a
    file, has a name the system refuses, or is the same file as one of ``inputs`` (a directory in
    ``inputs`` stands for its files). With ``stdout``, ``-`` means standard output (returns None)."""
    if stdout and str(path) == "-":
        return None
    p = Path(path)
    if any(len(os.fsencode(part)) > 255 for part in p.parts):
        raise InputError(f"{option} {str(p)[:60]}...: a file name in it is over 255 bytes")
    st = _stat(p)
    if st is not None:
        if stat.S_ISDIR(st.st_mode):
            raise InputError(f"{option} {p} is a directory; give a file name")
        if not stat.S_ISREG(st.st_mode):
            hint = f" (standard output is {option} -)" if stdout else ""
            raise InputError(f"{option} {p} is {_kind(st.st_mode)}; kldcard writes regular files only{hint}")
        for inp, ist in _input_stats(inputs):
            if _same_file(st, ist):
                same = "" if Path(inp) == p else f" ({inp})"
                raise InputError(f"{option} {p} is also an input of this run{same}; writing it would destroy it — "
                                 "give another file name")
    for parent in p.parents:
        if parent.exists():
            if not parent.is_dir():
                raise InputError(f"{option} {p}: {parent} is a file, not a directory")
            break
    return p


def check_output_dir(path: str | os.PathLike[str], option: str, inputs: Iterable[str | os.PathLike[str] | None]) -> None:
    """A capture directory to create (or, with --force, replace) must be no input of the run and
    hold none: replacing it would delete the model or the text it is made from."""
    out = Path(os.path.realpath(path))
    for item in inputs:
        if item is None or _stat(Path(item)) is None:
            continue
        inp = Path(os.path.realpath(item))
        if inp == out or inp.is_relative_to(out):
            raise InputError(f"{option} {path} is (or holds) {item}, an input of this run; give another directory")


def _target(p: Path) -> Path:
    """The file a write to ``p`` replaces: a symlink's target (so the link stays a link), else ``p``."""
    st = _stat(p, follow=False)
    return Path(os.path.realpath(p)) if st is not None and stat.S_ISLNK(st.st_mode) else p


def _new_file_mode() -> int:
    umask = os.umask(0)
    os.umask(umask)
    return 0o666 & ~umask


def _remove_stale_temps(directory: Path, name: str) -> None:
    """Remove temporary siblings of ``name`` that a killed run left (their process is gone)."""
    try:
        entries = [e for e in os.scandir(directory) if e.name.startswith(f".{name}.{_TMP_TAG}")]
    except OSError:
        return
    for e in entries:
        m = _TMP_PID.match(e.name, len(name) + 2)
        if m is None or int(m.group(1)) == os.getpid() or _alive(int(m.group(1))):
            continue
        try:
            if e.is_file(follow_symlinks=False):
                os.unlink(e.path)
        except OSError:
            pass


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)  # signal 0: only asks whether the process exists
    except ProcessLookupError:
        return False
    except (PermissionError, OverflowError):  # someone else's process, or not a pid: keep its file
        pass
    return True


@contextmanager
def atomic_path(path: str | os.PathLike[str], suffix: str = ".tmp", *, parents: bool = True) -> Iterator[Path]:
    """Yield a temporary path next to ``path``'s file; on success it replaces that file (see the
    module's output policy: a symlink's target, the old mode or the umask's), on any exception it is
    removed and the file is untouched. OSErrors, the caller's writes included, become
    :class:`InputError`. ``parents=False`` refuses a missing directory instead of creating it (a
    card path with a typo should not grow a folder)."""
    p = _target(Path(path))
    if not parents and not p.parent.is_dir():
        raise InputError(f"{p.parent}: no such directory to write {p.name} into")
    with output_errors(p):
        st = _stat(p)
        if st is not None and not stat.S_ISREG(st.st_mode):
            kind = "a directory" if stat.S_ISDIR(st.st_mode) else _kind(st.st_mode)
            raise InputError(f"{p} is {kind}; kldcard writes regular files only")
        p.parent.mkdir(parents=True, exist_ok=True)
        _remove_stale_temps(p.parent, p.name)
        mode = stat.S_IMODE(st.st_mode) if st is not None else _new_file_mode()
        fd, tmp = tempfile.mkstemp(prefix=f".{p.name}.{_TMP_TAG}{os.getpid()}-", suffix=suffix, dir=p.parent)
        os.close(fd)
        try:
            yield Path(tmp)
            os.chmod(tmp, mode)
            os.replace(tmp, p)
        finally:
            if os.path.exists(tmp):
                os.unlink(tmp)


def keep_bom(old: bytes, new: bytes) -> bytes:
    """``new`` with the UTF-8 byte-order mark ``old`` began with (text only: ``new`` must be UTF-8)."""
    if old.startswith(BOM) and not new.startswith(BOM):
        try:
            new.decode("utf-8")
        except UnicodeDecodeError:
            return new
        return BOM + new
    return new


def write_atomic(path: str | os.PathLike[str], data: bytes | str, *, parents: bool = True) -> Path:
    """Replace ``path``'s file with ``data`` (str is written as UTF-8, line endings untouched; a BOM kept)."""
    raw = data.encode("utf-8") if isinstance(data, str) else data
    target = _target(Path(path))
    if is_file(target):
        with output_errors(target), open(target, "rb") as f:
            raw = keep_bom(f.read(len(BOM)), raw)
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


# JSON and TOML inputs (baselines, configs, results) nest a few levels; the standard parsers recurse
# per level (RecursionError near 1,000) and read "1e400" as inf and a 5,000-digit integer as a
# ValueError of their own. All three are one InputError line here.
MAX_NESTING = 100


def _nesting(text: str, toml: bool) -> int:
    """The deepest bracket nesting of ``text`` outside strings (and, for TOML, comments)."""
    depth = deepest = i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
        elif c == '"' or (toml and c == "'"):
            quote = text[i:i + 3] if toml and text.startswith(c * 3, i) else c
            i += len(quote)
            while i < n and not text.startswith(quote, i):
                i += 2 if (text[i] == "\\" and c == '"') else 1
            i += len(quote) - 1
        elif toml and c == "#":
            while i < n and text[i] != "\n":
                i += 1
        i += 1
    return deepest


def _finite(spelling: str) -> float:
    value = float(spelling)
    if value in (float("inf"), float("-inf")) or value != value:
        raise ValueError(f"the number {spelling[:40]} is not finite in float64")
    return value


def _number_problem(exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        return f"nests too deeply (over {MAX_NESTING} levels)"
    if "integer string conversion" in str(exc):  # Python's own limit, with advice meant for programmers
        return f"an integer has over {sys.get_int_max_str_digits():,} digits"
    return str(exc)[:200]


def loads_json(text: str, where: str) -> Any:
    """JSON within :data:`MAX_NESTING` levels and float64 range, or one InputError line."""
    import json

    if _nesting(text, toml=False) > MAX_NESTING:
        raise InputError(f"{where}: nests too deeply (over {MAX_NESTING} levels)")
    try:
        return json.loads(text, parse_float=_finite, parse_constant=_finite)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: not valid JSON: {exc}") from None
    except (ValueError, RecursionError) as exc:  # 1e400, NaN, a 5,000-digit integer
        raise InputError(f"{where}: unusable JSON: {_number_problem(exc)}") from None


def loads_toml(text: str, where: str) -> dict[str, Any]:
    """TOML within :data:`MAX_NESTING` levels and float64 range, or one InputError line."""
    import tomllib

    if _nesting(text, toml=True) > MAX_NESTING:
        raise InputError(f"{where}: nests too deeply (over {MAX_NESTING} levels)")
    try:
        return tomllib.loads(text, parse_float=_finite)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{where}: invalid TOML: {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{where}: unusable TOML: {_number_problem(exc)}") from None


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
