"""``kldcard import-llama-log LOGFILE``: a pasted llama-perplexity block as structured results.

The same as ``kldcard llama import-log``, at the top level where card authors look for it.
"""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "import-llama-log",
        help="parse pasted llama-perplexity --kl-divergence output into structured results",
        description="Parse a pasted llama-perplexity --kl-divergence block (current or pre-#16321 logs) and "
        "print its statistics with the disclosures the protocol implies: forward KL(P_base || Q_cand) in nats, "
        "positions n_ctx//2..n_ctx-2 of each chunk, the base file's storage floor, token mean ± i.i.d. SE.",
    )
    p.add_argument("logfile", metavar="LOGFILE", help="text file with the output, or - for stdin")
    p.add_argument("-o", "--output-format", choices=("text", "json"), default="text")
    p.add_argument("--n-ctx", type=int, default=None, help="the -c of the base pass (fills positions.n_scored)")
    p.add_argument("--floor", type=float, choices=(16.0, 24.0), default=16.0,
                   help="storage floor of the base file: 16 mainline (default), 24 ik_llama.cpp ≥ PR #325")
    return p


def run(args: argparse.Namespace) -> int:
    from .llama import _import_log

    return _import_log(args)
