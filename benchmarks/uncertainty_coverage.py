"""Coverage of kldcard's 95% intervals for a token-mean on series with known dependence, block
bootstrap (the default) next to the per-token i.i.d. bootstrap (``--uncertainty iid``).

Simulates the scenarios of ``tests/helpers_uncertainty.py`` (AR(1) with rho 0, 0.5, 0.9 of a
lognormal, clustered bursts), each as independent chunks with their ids (-> whole-window resampling)
and as one series (-> circular moving blocks, Politis-White length), and counts how often the
interval covers the true mean. The block method must cover 93-97% in every asserted case; the i.i.d.
one collapses as the dependence grows because its interval is too narrow.

Run: ``python benchmarks/uncertainty_coverage.py [--reps 500] [--iid-reps 500] [--resamples 999]
[--iid-resamples 199] [--jobs 2]``. Not a timed test.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from helpers_uncertainty import (  # noqa: E402
    ASSERTED,
    Cell,
    CHUNK_LEN,
    N_CHUNKS,
    SCENARIOS,
    SETTINGS,
    run_cell,
    true_mean,
)


def _run_cell_args(args: tuple) -> list[Cell]:
    return run_cell(*args)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--reps", type=int, default=500, help="replications per block-method cell")
    ap.add_argument("--iid-reps", type=int, default=500, help="replications per iid cell (O(n·resamples) each)")
    ap.add_argument("--resamples", type=int, default=999)
    ap.add_argument("--iid-resamples", type=int, default=199)
    ap.add_argument("--seed", type=int, default=20240601)
    ap.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1))
    ap.add_argument("--chunks", type=int, default=N_CHUNKS)
    ap.add_argument("--chunk-len", type=int, default=CHUNK_LEN)
    ap.add_argument("--scenarios", default=",".join(SCENARIOS))
    ap.add_argument("--settings", default=",".join(SETTINGS))
    ap.add_argument("--intervals", default="studentized,t,percentile,basic",
                    help="interval types to report for the block methods (first one is the default)")
    args = ap.parse_args(argv)
    intervals = args.intervals.split(",")
    jobs = []
    for sc in args.scenarios.split(","):
        for st in args.settings.split(","):
            jobs.append((sc, st, "auto", tuple(intervals), args.reps, args.resamples, args.seed, args.chunks,
                         args.chunk_len))
            if args.iid_reps > 0:
                jobs.append((sc, st, "iid", ("percentile",), args.iid_reps, args.iid_resamples, args.seed,
                             args.chunks, args.chunk_len))
    t0 = time.perf_counter()
    # longest jobs first (iid, then the circular-block series with short blocks)
    jobs.sort(key=lambda j: (j[2] != "iid", j[1] != "series"))
    if args.jobs > 1:
        with ProcessPoolExecutor(args.jobs) as ex:
            results = list(ex.map(_run_cell_args, jobs))
    else:
        results = [run_cell(*j) for j in jobs]
    order = {(sc, st): i for i, (sc, st) in enumerate((a, b) for a in SCENARIOS for b in SETTINGS)}
    cells = sorted((c for r in results for c in r),
                   key=lambda c: (order[(c.scenario, c.setting)], c.method == "iid"))
    wall = time.perf_counter() - t0

    n = args.chunks * args.chunk_len
    print(f"kldcard uncertainty: coverage of nominal 95% intervals for the mean; n = {n} tokens per replication "
          f"(chunked: {args.chunks} × {args.chunk_len} with chunk ids; series: one series, no ids); "
          f"{args.resamples} resamples ({args.iid_resamples} for iid); seed {args.seed}")
    print(f"numpy {np.__version__}, {args.jobs} process(es)")
    print()
    hdr = ("| scenario | setting | method | interval | reps | coverage | ± MC SE | in 93–97 | mean width | "
           "width/true mean | mean l or G | s/rep |")
    print(hdr)
    print("|---|---|---|---|---:|---:|---:|:---:|---:|---:|---:|---:|")
    for c in cells:
        mu = true_mean(c.scenario)
        method = "cluster" if (c.method == "auto" and c.setting == "chunked") else (
            "circular-block" if c.method == "auto" else c.method)
        ok = "yes" if 0.93 <= c.coverage <= 0.97 else "NO"
        if c.scenario not in ASSERTED:
            ok += " (stress)"
        if c.method == "iid":
            ok = "(iid)"
        print(f"| {c.scenario} | {c.setting} | {method} | {c.interval} | {c.reps} | {c.coverage:.1%} | "
              f"{c.mc_se:.1%} | {ok} | {c.width_sum / c.reps:.4g} | {c.width_sum / c.reps / mu:.3f} | "
              f"{c.block_sum / c.reps:.1f} | {c.seconds / c.reps:.4f} |")
    print()
    print("Side by side (default interval of the block method vs the per-token i.i.d. bootstrap):")
    print()
    print("| scenario | setting | block method | block coverage | i.i.d. coverage | width block / i.i.d. |")
    print("|---|---|---|---:|---:|---:|")
    by = {(c.scenario, c.setting, c.method, c.interval): c for c in cells}
    for sc in SCENARIOS:
        for st in SETTINGS:
            blk = by.get((sc, st, "auto", intervals[0]))
            iid = by.get((sc, st, "iid", "percentile"))
            if blk is None:
                continue
            name = "windows (cluster)" if st == "chunked" else "moving blocks"
            ratio = (blk.width_sum / blk.reps) / (iid.width_sum / iid.reps) if iid else float("nan")
            print(f"| {sc} | {st} | {name} | {blk.coverage:.1%} ({blk.reps}) | "
                  + (f"{iid.coverage:.1%} ({iid.reps})" if iid else "n/a") + f" | {ratio:.2f} |")
    print()
    print(f"wall time {wall:.1f} s")
    default_iv = intervals[0]
    bad = [c for c in cells if c.method == "auto" and c.interval == default_iv and c.scenario in ASSERTED
           and not 0.93 <= c.coverage <= 0.97]
    print(f"default interval {default_iv!r}: " + ("all block cells within 93–97%" if not bad else
          "OUT OF RANGE: " + ", ".join(f"{c.scenario}/{c.setting} {c.coverage:.1%}" for c in bad)))
    return 1 if bad else 0


if __name__ == "__main__":
    raise SystemExit(main())
