"""``kldcard rank RESULT RESULT ... -o ranking.json``: paired ranking of candidates of one reference.

Reads compare results and their per-token files (``kldcard compare --per-token``), ranks the
candidates by mean forward KL(P_ref || P_cand) in nats with paired block-bootstrap intervals, marks
those that are not distinguishable on this text, and (``--control NAME``) reports each candidate's
excess over the control. ``kldcard render RESULT... ranking.json`` puts it in the card.
"""

from __future__ import annotations

import argparse

from kldcard.cli.summary_options import UNCERTAINTY_CHOICES
from kldcard.errors import UsageError


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "rank",
        help="rank candidates of one reference on the same positions (paired block bootstrap)",
        description="Rank candidates compared with the same reference by mean forward KL(P_ref || P_cand) "
        "(nats). Every pair gets a paired interval of its mean difference (the same blocks resampled for "
        "both); candidates whose interval contains 0 are not distinguishable on this text. With --control, "
        "each candidate's excess over the control (a floor measured on the same stack and text).",
    )
    p.add_argument("results", nargs="+", metavar="RESULT", help="compare result JSON files (same reference)")
    p.add_argument("-o", "--output", metavar="RANKING.json", required=True, help="the ranking JSON (atomic)")
    p.add_argument("--per-token", metavar="FILE", action="append", default=[],
                   help="per-token file of each RESULT in order (default: the file each result names)")
    p.add_argument("--control", metavar="NAME", help="the candidate that measures the comparison's own floor")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="bootstrap resamples (default 1000)")
    p.add_argument("--uncertainty", choices=tuple(UNCERTAINTY_CHOICES), default="auto",
                   help="auto (default): whole context windows with >= 20 of them, else circular moving blocks; "
                   "iid: single tokens, assumed independent")
    p.add_argument("--level", type=float, default=0.95, help="confidence level (default 0.95)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    return p


def run(args: argparse.Namespace) -> int:
    from kldcard.compare.io import read_per_token
    from kldcard.compare.rank import rank_results
    from kldcard.compare.summary import BootstrapOptions
    from kldcard.files import check_output_file, output_errors, write_atomic
    from kldcard.render.evaluation import load_result, per_token_path

    if args.bootstrap < 2:
        raise UsageError("--bootstrap must be >= 2 for a ranking")
    if not 0 < args.level < 1:
        raise UsageError("--level must lie strictly between 0 and 1")
    if args.per_token and len(args.per_token) != len(args.results):
        raise UsageError(f"--per-token given {len(args.per_token)} time(s) for {len(args.results)} result(s)")
    check_output_file(args.output, "-o", [*args.results, *args.per_token])
    results = [load_result(p) for p in args.results]
    files = args.per_token or [per_token_path(p, r) for p, r in zip(args.results, results)]
    ranking = rank_results(
        results, [read_per_token(f) for f in files], control=args.control, paths=args.results,
        bootstrap=BootstrapOptions(resamples=args.bootstrap, level=args.level, seed=args.seed,
                                   method=UNCERTAINTY_CHOICES[args.uncertainty]),
    )
    with output_errors(args.output):
        write_atomic(args.output, ranking.model_dump_json(indent=2) + "\n")
    for line in ranking.summary_lines():
        print(line)
    print(f"wrote {args.output}")
    return 0
