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

from .. import __version__
from ..errors import KldcardError

# Order here is the order in ``kldcard --help``.
COMMANDS = [
    "lint",
    "capture",
    "capture_import",
    "tokens",
    "compare",
    "render",
    "demo",
    "stack",
    "stacks",
    "llama",
    "import_llama_log",
    "matrix",
]


def _available_modules() -> list:
    mods = []
    for name in COMMANDS:
        try:
            mods.append(import_module(f"kldcard.cli.{name}"))
        except ModuleNotFoundError as exc:
            # A command module that does not exist yet is simply absent; a missing dependency
            # *inside* an existing module is a real bug and must surface.
            if exc.name != f"kldcard.cli.{name}":
                raise
    return mods


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="kldcard",
        description="Make KL-divergence claims on model cards mean something. "
        "All divergences are in nats; KLD means KL(P_ref || P_cand) unless labelled otherwise.",
    )
    parser.add_argument("--version", action="version", version=f"kldcard {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks for errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    sub.required = True
    for mod in _available_modules():
        p = mod.add_parser(sub)
        p.set_defaults(_run=mod.run)
    return parser


def main(argv: list[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args._run(args) or 0)
    except KldcardError as exc:
        if args.debug:
            raise
        print(f"kldcard: error: {exc}", file=sys.stderr)
        return exc.exit_code
    except KeyboardInterrupt:
        print("kldcard: interrupted; nothing partial was left behind", file=sys.stderr)
        return 130
    except BrokenPipeError:
        return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
