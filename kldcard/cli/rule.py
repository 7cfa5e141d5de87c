"""``kldcard rule CODE``: one rule's documentation (an alias of ``kldcard lint --show-rule``).

The text comes from the installed package's rule registry, so it works from a wheel outside any checkout.
"""

from __future__ import annotations

import argparse

from kldcard.cli.lint import show_rule


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "rule",
        help="show a lint rule's documentation",
        description="Show one lint rule's documentation (what it does, why, example, fix); "
        "the same as `kldcard lint --show-rule CODE`.",
    )
    p.add_argument("code", metavar="CODE", help="rule code, e.g. KLD303")
    return p


def run(args: argparse.Namespace) -> int:
    return show_rule(args.code)
