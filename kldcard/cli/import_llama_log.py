"""``kldcard import-llama-log LOGFILE``: a pasted llama-perplexity block as structured results.

The same as ``kldcard llama import-log``, at the top level where card authors look for it.
"""

from __future__ import annotations

import argparse

from kldcard.cli.llama import add_import_log_arguments, import_log


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "import-llama-log",
        help="parse pasted llama-perplexity --kl-divergence output into structured results",
        description="Parse a pasted llama-perplexity --kl-divergence block (current or pre-#16321 logs) and "
        "print its statistics with the disclosures the protocol implies: forward KL(P_base || Q_cand) in nats, "
        "positions n_ctx//2..n_ctx-2 of each chunk, the base file's storage floor, token mean ± i.i.d. SE.",
    )
    add_import_log_arguments(p)
    return p


def run(args: argparse.Namespace) -> int:
    return import_log(args)
