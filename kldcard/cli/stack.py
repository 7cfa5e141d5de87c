"""``kldcard stack``: this machine's stack fingerprint for each installed engine.

``kldcard stack`` (or ``kldcard stack show``) prints, per installed engine, the coordinate a capture
made here would record: engine version and build, backend, device (GPU model and SM count, Apple
chip family, or CPU model), attention backend, threads, OS, Python and library versions. Model
dependent fields (weights dtype) appear in each capture's manifest.

Further subcommands (``splits``, ``simulate``) are registered by :mod:`kldcard.cli.stack_splits`
when it is present; each subparser sets ``stack_run``.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import import_module

# Modules that add ``kldcard stack <sub>`` commands through ``add_subcommands(subparsers)``.
SUBCOMMAND_MODULES = ("kldcard.cli.stack_splits",)


def _add_show_options(p: argparse.ArgumentParser) -> None:
    p.add_argument("--engine", action="append", default=None, metavar="NAME",
                   help="only this engine (repeatable): transformers, llama.cpp, mlx")
    p.add_argument("--json", action="store_true", help="print JSON")


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "stack",
        help="print this machine's stack fingerprint per installed engine",
        description="Print the stack fingerprint (engine build, backend, device, attention backend, "
        "threads, OS, library versions) that a capture on this machine would record, for each "
        "installed engine. A reference capture is a fixed target only on the exact same stack.",
    )
    _add_show_options(p)
    p.set_defaults(stack_run=run_show)
    sub = p.add_subparsers(dest="stack_command", metavar="SUBCOMMAND")
    show = sub.add_parser("show", help="print the fingerprint (the default)")
    _add_show_options(show)
    show.set_defaults(stack_run=run_show)
    for name in SUBCOMMAND_MODULES:
        try:
            mod = import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        mod.add_subcommands(sub)
    return p


def run(args: argparse.Namespace) -> int:
    return int(args.stack_run(args) or 0)


def run_show(args: argparse.Namespace) -> int:
    from kldcard.capture.engines import machine_fingerprints

    fps = machine_fingerprints(args.engine)
    if args.json:
        json.dump(fps, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    for name, fields in fps.items():
        print(f"== {name}")
        if isinstance(fields, str):
            print(f"  not installed: {fields}")
            continue
        for key, value in fields.items():
            if key == "libraries":
                value = ", ".join(f"{k} {v}" for k, v in value.items())
            if value is None:
                value = "-"
            print(f"  {key:<18} {value}")
    return 0
