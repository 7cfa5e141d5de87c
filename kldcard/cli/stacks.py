"""``kldcard stacks CAPTURE...``: compare several stacks' captures of the same tokens at once."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from kldcard.errors import InputError
from kldcard.files import check_output_file, output_errors, write_atomic


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "stacks",
        help="compare captures of the same tokens from several stacks",
        description="Pairwise forward KL(P_row || P_col) and top-1 disagreement between N captures of the same "
        "tokens and positions, each stack's KL to the mean-probability centroid, and where top-1 diverges. "
        "All values in nats, float64, full vocabulary.",
    )
    p.add_argument("captures", nargs="+", metavar="CAPTURE", help="capture directories (at least two)")
    p.add_argument("-o", "--output", metavar="REPORT.json", help="write the JSON report here")
    p.add_argument("--plots", metavar="DIR", help="write stacks-heatmap.png and stacks-per-position.png here")
    p.add_argument("--labels", help="comma-separated labels, one per capture")
    p.add_argument("--gap", type=int, default=8, help="disagreements at most this many positions apart form one "
                   "cluster (default 8)")
    p.add_argument("--threads", type=int, default=None, help="worker threads (default: usable cores)")
    p.add_argument("--no-verify", action="store_true", help="skip shard checksums (sizes are still checked)")
    from kldcard.cli.cluster import add_scheduler_arguments

    add_scheduler_arguments(p)
    return p


def _write_json(path: Path, data: dict) -> None:
    with output_errors(path):
        write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False) + "\n")


def run(args: argparse.Namespace) -> int:
    from kldcard.compare.stacks import CENTROID, compare_stacks
    from kldcard.compare.stacks_plots import write_plots

    labels = [s.strip() for s in args.labels.split(",")] if args.labels else None
    out = Path(args.output) if args.output else None
    if out is not None:
        check_output_file(out, "-o", args.captures)
    if args.plots and Path(args.plots).exists() and not Path(args.plots).is_dir():
        raise InputError(f"--plots {args.plots} is a file; give a directory for the plots")
    if args.scheduler:
        from kldcard.cli.cluster import stacks_from_args

        report = stacks_from_args(args, labels=labels, show_progress=sys.stderr.isatty())
    else:
        report = compare_stacks(
            args.captures, labels=labels, gap=args.gap, verify=not args.no_verify, progress=sys.stderr.isatty(),
            threads=args.threads,
        )
    n = int(report.positions.size)
    print(f"{len(report.labels)} stacks, {n} positions, full vocabulary ({report.n_vocab}); values in nats")
    for i, lab in enumerate(report.labels):
        print(f"  S{i}: {lab}")
    print("mean forward KL(P_row ‖ P_col) over the positions, nats:")
    print("      " + "".join(f"{'S' + str(j):>11}" for j in range(len(report.labels))))
    for i, row in enumerate(report.pairwise_kl_mean):
        print(f"  S{i:<3}" + "".join(f"{v:>11.3e}" for v in row))
    print("top-1 disagreement (fraction of positions):")
    for i, row in enumerate(report.top1_disagreement):
        print(f"  S{i:<3}" + "".join(f"{v:>11.4f}" for v in row))
    print(f"KL(P_stack ‖ M), M = {CENTROID} centroid of the stacks, token mean, nats:")
    for i, v in enumerate(report.kl_to_centroid_mean):
        print(f"  S{i}: {v:.3e}")
    for pair in report.pairs:
        where = (
            f"first at position {pair.first_position}, {len(pair.clusters)} cluster(s)"
            if pair.first_position is not None
            else "never"
        )
        print(f"  top-1 S{pair.a} vs S{pair.b}: {pair.n_disagreements} disagreement(s), {where}")
    data = report.to_dict()
    for entry in data["portability"]:
        for d in entry["differences"]:
            print(f"  portability S{entry['a']} vs S{entry['b']}: {d['message']}")
    if out is not None:
        _write_json(out, data)
        print(f"report: {out}")
    if args.plots:
        with output_errors(args.plots):
            written = write_plots(report, args.plots)
        for path in written:
            print(f"plot: {path}")
    return 0
