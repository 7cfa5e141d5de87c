"""``kldcard demo [--out DIR]``: build tiny models, capture, compare, render a card and lint it.

The README's first command. Exit 0 when the card was rendered and lints clean, 1 when it has
findings, 2 when a step could not run (a one-line message names the fix, e.g. a missing extra).
"""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "demo",
        help="the whole job on tiny models built on the spot: capture, compare, render a card, lint it",
        description=(
            "Build a tiny Qwen3-architecture model that predicts the demo text (a bigram model of it in the "
            "embedding and output head; F32 GGUF reference, Q8_0 and Q4_K_M candidates), check "
            "token parity, capture full-vocabulary logits with llama.cpp, compare in float64 (forward "
            "KL(P_ref || P_cand) in nats, reverse KL, JS, top-1 agreement), render a model card with the "
            "KLD section, the chart of KLD against bits per weight and metadata, and lint it. Nothing is downloaded from a model hub."
        ),
    )
    p.add_argument("--out", default="demo-out", metavar="DIR", help="where everything goes (default: ./demo-out)")
    return p


def run(args: argparse.Namespace) -> int:
    from kldcard.demo.steps import run_demo

    result = run_demo(args.out)
    if result.card is None:
        return 2
    return 0 if result.ok else 1
