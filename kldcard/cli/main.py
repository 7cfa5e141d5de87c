"""``kldcard`` entry point: parse, build, run, exit.

Each subcommand lives in its own module under ``kldcard.cli`` and exposes
``add_parser(subparsers) -> argparse.ArgumentParser`` and ``run(args) -> int``. The module list below
is the only place a new command is registered. Library errors (:class:`KldcardError`) become one
line on stderr and their exit code (2 for unusable input); ``--debug`` shows the traceback.
"""

from __future__ import annotations

import argparse
import sys
from importlib import import_module

from kldcard import __version__
from kldcard.errors import KldcardError

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
    )
    parser.add_argument("--version", action="version", version=f"kldcard {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for mod in _modules([only] if only else list(COMMANDS)):
        p = mod.add_parser(sub)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    parser = build_parser(_requested(argv))
    args = parser.parse_args(argv)
    try:
        return int(args._run(args) or 0)
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
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
