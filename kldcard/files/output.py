"""The output policy and the one atomic writer (see :mod:`kldcard.files` for the policy's rules):
checks a command runs before writing, a temporary sibling that replaces the file, and the one
mapping of an OSError to an :class:`~kldcard.errors.InputError` line (exit 2)."""

from __future__ import annotations

import os
import re
import stat
import tempfile
from collections.abc import Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path

from kldcard.errors import InputError
from kldcard.files.reading import file_kind as _kind
from kldcard.files.reading import is_file
from kldcard.files.reading import stat_or_none as _stat

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
