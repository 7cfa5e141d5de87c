"""``kldcard matrix --reference CAP... --candidate CAP... -o table.json``: many comparisons at once.

Every reference is compared with every candidate of the same prompt (identical token ids and
positions), locally or, with ``--scheduler``, as one task graph on a Dask cluster. Writes one table
(JSON, optionally Markdown) and, with ``--results-dir``, one compare-result JSON per pair for
``kldcard render``. Divergences in nats; forward = KL(P_ref || P_cand).
"""

from __future__ import annotations

import argparse

from kldcard.cli.summary_options import add_summary_arguments, check_summary_arguments
from kldcard.errors import UsageError


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    from kldcard.cli.cluster import add_scheduler_arguments

    p = subparsers.add_parser(
        "matrix",
        help="compare many references x candidates x prompts at once (locally or on a Dask cluster)",
        description="Pair every --reference with every --candidate capture of the same prompt (identical token ids "
        "and positions) and compare each pair in float64: forward KL(P_ref || P_cand), reverse KL, "
        "Jensen-Shannon (nats), top-1 agreement, Δp. With --scheduler all pairs run as one task graph on a "
        "Dask cluster; results are identical to the local run.",
    )
    p.add_argument("--reference", nargs="+", required=True, metavar="CAP", help="reference captures (paths or URLs)")
    p.add_argument("--candidate", nargs="+", required=True, metavar="CAP", help="candidate captures (paths or URLs)")
    p.add_argument("-o", "--output", required=True, metavar="TABLE.json", help="table JSON (written atomically)")
    p.add_argument("--markdown", metavar="FILE", help="also write the table as Markdown")
    p.add_argument("--results-dir", metavar="DIR", help="also write one compare-result JSON per pair (for render)")
    add_summary_arguments(p)
    add_scheduler_arguments(p)
    return p


def run(args: argparse.Namespace) -> int:
    from kldcard.cli.cluster import cluster_progress, scheduler_from_args
    from kldcard.compare.summary import DEFAULT_PERCENTILES
    from kldcard.distributed.matrix import plan_matrix, run_matrix, write_table
    from kldcard.files import check_output_file

    check_summary_arguments(args)
    if args.uncertainty != "auto":  # the matrix summarises with the default block bootstrap
        raise UsageError("--uncertainty other than auto is not available in kldcard matrix yet")
    inputs = [*args.reference, *args.candidate]
    check_output_file(args.output, "-o", inputs)
    if args.markdown:
        check_output_file(args.markdown, "--markdown", [*inputs, args.output])
    client = scheduler_from_args(args)  # fail fast (exit 2) before reading any capture
    try:
        plan = plan_matrix(args.reference, args.candidate, verify=not args.no_verify)
        where = f"on {args.scheduler}" if client is not None else "locally"
        print(f"{len(plan.entries)} comparison(s), {plan.n_positions:,} positions in all, {where}")
        for u in plan.unmatched:
            print(f"  not compared (no partner with the same token ids and positions): {u}")
        with cluster_progress(plan.n_positions, "matrix", not args.no_progress) as progress:
            table = run_matrix(plan, client, align_vocab=args.align_vocab, buckets=args.buckets,
                               percentiles=args.percentiles or DEFAULT_PERCENTILES, bootstrap=args.bootstrap,
                               level=args.level, seed=args.seed, threads=args.threads,
                               task_positions=args.task_positions, progress=progress)
    finally:
        if client is not None:
            client.close()
    print("forward KL(P_ref || P_cand), token mean over the scored positions, nats, float64:")
    for r in table.rows:
        se = f" ± {r['forward_kl_se']:.3g}" if r["forward_kl_se"] is not None else ""
        print(f"  {r['prompt']}: {r['reference_label']} -> {r['candidate_label']}: {r['forward_kl_mean']:.6g}{se} "
              f"({r['n_positions']:,} positions, vocabulary {r['vocabulary']:,}, top-1 agreement "
              f"{r['top1_agreement']:.4%})")
    for path in write_table(table, args.output, args.markdown, args.results_dir):
        print(f"wrote {path}")
    return 0
