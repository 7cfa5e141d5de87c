"""``kldcard`` entry point: parse, build, run, exit.

Each subcommand lives in its own module under ``kldcard.cli`` and exposes
``add_parser(subparsers) -> argparse.ArgumentParser`` and ``run(args) -> int``. The module list below
is the only place a new command is registered. Library errors (:class:`KldcardError`) become one
line on stderr and their exit code (2 for unusable input); ``--debug`` shows the traceback. So does
an OSError that reached the top (a disk that filled during a capture, a standard output that is
full, closed or whose reader went away, as ``| head -c1`` does): one line, exit 2.
"""

from __future__ import annotations

import argparse
import errno
import os
import sys
from importlib import import_module

from kldcard import __version__
from kldcard.errors import KldcardError, printable

# Command name -> module under kldcard.cli. Order here is the order in ``kldcard --help``.
COMMANDS = {
    "lint": "lint",
    "rule": "rule",
    "comparable": "comparable",
    "capture": "capture",
    "capture-import": "capture_import",
    "tokens": "tokens",
    "compare": "compare",
    "rank": "rank",
    "evaluate": "evaluate",
    "render": "render",
    "demo": "demo",
    "stack": "stack",
    "stacks": "stacks",
    "llama": "llama",
    "import-llama-log": "import_llama_log",
    "matrix": "matrix",
}
GLOBAL_FLAGS = ("--debug",)


def _modules(names: list[str]) -> list:
    mods = []
    for name in names:
        module = f"kldcard.cli.{COMMANDS[name]}"
        try:
            mods.append(import_module(module))
        except ModuleNotFoundError as exc:
            # A command module that does not exist yet is simply absent; a missing dependency
            # *inside* an existing module is a real bug and must surface.
            if exc.name != module:
                raise
    return mods


def _requested(argv: list[str]) -> str | None:
    """The command ``argv`` runs, when it names one before any other option: then only that
    command's module is imported (``kldcard lint`` loads no numpy, numba or engine)."""
    for token in argv:
        if token in GLOBAL_FLAGS:
            continue
        return token if token in COMMANDS else None
    return None


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The CLI's parser: every command (``--help``, docs/cli.md), or ``only`` that one."""
    parser = argparse.ArgumentParser(
        prog="kldcard",
        description="Make KL-divergence claims on model cards mean something. "
        "All divergences are in nats; KLD means KL(P_ref || P_cand) unless labelled otherwise.",
        epilog="Exit codes: 0 success, 1 findings (lint, evaluate, render --check, tokens), 2 unusable input "
        "in one line: also an output that is one of the run's inputs (same file, through links too), a FIFO, "
        "device or socket as output, a full disk, or a standard output that is full, closed or gone. Outputs "
        "are written atomically; a symlinked card stays a link, a file keeps its mode and UTF-8 BOM, '-' is "
        "stdout where an option says so.",
    )
    parser.add_argument("--version", action="version", version=f"kldcard {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for mod in _modules([only] if only else list(COMMANDS)):
        p = mod.add_parser(sub)
        p.set_defaults(_run=mod.run)
    return parser


class _ClosedStream:
    """Standard output when the process was started with it closed (``>&-``): a write is an OSError,
    which :func:`main` reports in one line, instead of an AttributeError on None."""

    def write(self, _text: str) -> int:
        raise OSError(errno.EBADF, "standard output is closed")

    def flush(self) -> None:
        pass

    def isatty(self) -> bool:
        return False


def _output_failed(exc: OSError, stdout: bool = False) -> int:
    """One line for an OSError that reached the top; standard output is pointed at /dev/null after
    it failed, so the interpreter's own flush at exit does not print a second, raw error."""
    if exc.filename:
        where = f"{exc.filename}: "
    elif stdout or exc.errno in (errno.EPIPE, errno.EBADF):  # full, closed, or its reader went away
        where = "cannot write standard output: "
    elif exc.errno in (errno.ENOSPC, errno.EIO):  # a write that names no file: stdout or an open output
        where = "cannot write standard output or an output file: "
    else:
        where = ""
    print(printable(f"kldcard: error: {where}{exc.strerror or exc}"), file=sys.stderr)
    if exc.filename or exc.errno not in (errno.EPIPE, errno.EBADF, errno.ENOSPC, errno.EIO):
        return 2  # not standard output's failure: leave it alone
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, AttributeError, ValueError):  # no descriptor (closed, or a test's capture)
        pass
    return 2


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if sys.stdout is None:
        sys.stdout = _ClosedStream()  # type: ignore[assignment]
    parser = build_parser(_requested(argv))
    args = parser.parse_args(argv)
    try:
        code = int(args._run(args) or 0)
        try:
            sys.stdout.flush()  # a full or closed stdout fails here, inside main, not at exit
        except OSError as exc:
            if args.debug:
                raise
            return _output_failed(exc, stdout=True)
        return code
    except KldcardError as exc:
        if args.debug:
            raise
        print(f"kldcard: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except ModuleNotFoundError as exc:
        from kldcard.engines import missing_extra

        hint = missing_extra(exc)
        if hint is None or args.debug:
            raise
        print(f"kldcard: error: kldcard {args.command} needs {hint}", file=sys.stderr)
        return hint.exit_code
    except KeyboardInterrupt:
        print("kldcard: interrupted; nothing partial was left behind", file=sys.stderr)
        return 130
    except OSError as exc:
        if args.debug:
            raise
        return _output_failed(exc)


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
