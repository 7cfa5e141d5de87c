"""Local vs Dask-cluster compare on this machine, and a projection of a large study on N workers.

Run: ``python benchmarks/distributed.py`` (``--quick`` for a smoke run). Not a timed test.

1. Writes a BF16 capture pair (reference; candidate = reference + N(0, 0.1) logit noise) of a few
   hundred MB at vocabulary 262,144 in a temp dir, then times one ``compare`` (bootstrap 1000, seed 0):
   locally on 1 thread and on all usable cores, and on a real loopback Dask cluster (``dask scheduler`` +
   ``dask worker --nthreads 1``) with 1 and with 2 workers. Every run must give bit-identical
   per-token values (checked). Best of ``--repeats``.
2. Projects, from the measured 1-thread cost per position, a study of 10 stacks x 100k tokens x 262k
   vocabulary on N single-core workers.

Local streaming with bounded memory (captures larger than RAM) is measured by
``benchmarks/divergence.py`` (peak RSS of a process comparing a 4+ GiB pair; ``--rss-rows`` sets the
size); ``--beyond-ram`` here runs that same measurement on a pair larger than this machine's
available memory. All divergences in nats; forward = KL(P_ref || P_cand).
"""

from __future__ import annotations

import argparse
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
# Python puts this script's directory first on sys.path, where this file would shadow the
# ``distributed`` package itself: take it off, and load the sibling benchmark by file name.
sys.path = [p for p in sys.path if Path(p or ".").resolve() != HERE] + [str(HERE.parent / "tests")]


def _load(name: str, path: Path):
    import importlib.util

    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


_div = _load("kldcard_bench_divergence", HERE / "divergence.py")  # benchmarks/divergence.py
make_pair, rss_check = _div.make_pair, _div.rss_check

from helpers_dist import Cluster  # noqa: E402  (tests/helpers_dist.py: real scheduler + workers)

from kldcard.compare.run import compare  # noqa: E402
from kldcard.compare.stream import default_threads  # noqa: E402
from kldcard.distributed.cluster import connect  # noqa: E402
from kldcard.distributed.compare import CompareJob, compare_on_cluster  # noqa: E402
from kldcard.distributed.urls import open_capture_url  # noqa: E402

CPU = {}


def best(fn, repeats: int, label: str = ""):
    """(best wall seconds, last result); the best CPU seconds of this process go to CPU[label]."""
    out, t, c = None, float("inf"), float("inf")
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        out = fn()
        t, c = min(t, time.perf_counter() - t0), min(c, time.process_time() - c0)
    CPU[label] = c
    return t, out


def summary_seconds(n: int) -> float:
    """Client-side (serial) cost of one pair's summaries at n tokens: three bootstrapped means
    (1000 resamples), percentiles, ranges -- measured, as the compare result builds them."""
    from kldcard.compare.summary import BootstrapOptions, summarize

    x = np.random.default_rng(0).gamma(0.5, 0.01, size=n)
    t0 = time.perf_counter()
    for _ in range(3):
        summarize(x, bootstrap=BootstrapOptions(resamples=1000, seed=0))
    return time.perf_counter() - t0


def same(a, b) -> bool:
    ca, cb = a.columns(), b.columns()
    return all(ca[k].tobytes() == cb[k].tobytes() for k in ca)


def fmt_s(s: float) -> str:
    if s < 120:
        return f"{s:.1f} s"
    if s < 7200:
        return f"{s / 60:.1f} min"
    if s < 48 * 3600:
        return f"{s / 3600:.1f} h"
    return f"{s / 86400:.1f} d"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--vocab", type=int, default=262144)
    ap.add_argument("--rows", type=int, default=400, help="positions (400 x 262,144 BF16 = 200 MiB per capture)")
    ap.add_argument("--repeats", type=int, default=2)
    ap.add_argument("--beyond-ram", action="store_true",
                    help="also run benchmarks/divergence.py's peak-RSS check on a pair larger than available memory")
    ap.add_argument("--quick", action="store_true")
    args = ap.parse_args()
    if args.quick:
        args.vocab, args.rows, args.repeats = 32768, 64, 1
    v, n = args.vocab, args.rows
    cores = default_threads()
    print(f"machine: {platform.machine()}, {os.cpu_count()} CPUs ({cores} usable), "
          f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}, python {platform.python_version()}")
    with tempfile.TemporaryDirectory(prefix="kldcard-bench-dist-") as tmp:
        root = Path(tmp)
        t0 = time.perf_counter()
        ref, cand = make_pair(root, v, n, 0.1, chunk=64)
        size = sum(f.stat().st_size for f in root.rglob("*") if f.is_file())
        print(f"capture pair: {n} positions x {v:,} vocabulary x 2, BF16, {size / 2**20:.0f} MiB "
              f"(written in {time.perf_counter() - t0:.1f} s; read from the page cache below)")
        kw = dict(bootstrap=1000, seed=0, verify=False, return_per_token=True)
        rows = []
        t_l1, (res_l1, td_l1) = best(lambda: compare(ref.path, cand.path, threads=1, **kw), args.repeats, "l1")
        rows.append(("local, 1 thread", t_l1, True))
        t_lc, (_, td) = best(lambda: compare(ref.path, cand.path, threads=cores, **kw), args.repeats)
        rows.append((f"local, {cores} threads", t_lc, same(td, td_l1)))
        (root / "c").mkdir()
        cluster = Cluster(root / "c", n_workers=1)
        try:
            client = connect(str(cluster.file), timeout=30)
            client.wait_for_workers(1, timeout=60)
            run = lambda: compare_on_cluster(client, str(ref.path), str(cand.path), **kw)  # noqa: E731
            run()  # warm the worker (imports, capture cache)
            t_w1, (_, td) = best(run, args.repeats)
            rows.append(("Dask, 1 worker x 1 thread", t_w1, same(td, td_l1)))
            cluster.workers.append(cluster.start_worker(1))
            client.wait_for_workers(2, timeout=60)
            run()
            t_w2, (res_w2, td) = best(run, args.repeats)
            rows.append(("Dask, 2 workers x 1 thread", t_w2, same(td, td_l1)))
            n_tasks = len(CompareJob(open_capture_url(ref.path), open_capture_url(cand.path)).ranges)
            client.close()
        finally:
            cluster.close()
    print(f"\none compare (bootstrap 1000), best of {args.repeats}; {n_tasks} tasks of <= 64 MiB per capture on "
          "the cluster")
    print(f"{'run':<28} {'wall':>9} {'ms/position':>12} {'speed-up vs 1 thread':>21}  identical per-token values")
    for name, t, ok in rows:
        print(f"{name:<28} {t:>8.2f}s {t / n * 1e3:>12.2f} {t_l1 / t:>20.2f}x  {'yes' if ok else 'NO'}")
    f = res_w2.forward_kl
    print(f"mean forward KL(P_ref || P_cand) {f.mean:.6e} nats over {n} positions, vocabulary {v:,} "
          f"(local and cluster agree exactly: {res_l1.forward_kl == f})")

    # ---- projection ---------------------------------------------------------------------------
    # Per-position cost from CPU seconds (this machine is shared: wall time includes other people's
    # load); linear in the vocabulary; tasks are independent, so compute divides by N; the client's
    # assembly and summaries are serial and measured separately.
    c1 = CPU["l1"] / n * 262144 / v
    eff = t_w1 / (2 * t_w2)
    row_bytes = 262144 * 2
    tokens, stacks = 100_000, 10
    s_pair = summary_seconds(tokens)
    print(f"\nprojection: 10 stacks x 100k tokens x 262,144 vocabulary, every token scored, BF16 captures "
          f"({tokens * row_bytes / 1e9:.0f} GB per stack)")
    print(f"assumptions: {c1 * 1e3:.2f} CPU ms per position-pair per core (measured here, 1 thread"
          + (f", at {v:,}, scaled linearly to 262,144" if v != 262144 else ", at 262,144") + "); "
          "one core per worker, tasks independent (time divides by N); "
          f"client summaries serial, {s_pair:.2f} s per pair (measured: 3 bootstrapped means of 100k tokens); "
          f"storage keeps up: each worker reads {2 * row_bytes / c1 / 1e6:.0f} MB/s "
          f"(N workers: N x that); this machine's CPU. Measured 1 -> 2 worker efficiency here: {eff:.0%} "
          f"(2 cores shared with other jobs, load average {os.getloadavg()[0]:.1f}; not assumed below)")
    print(f"{'workers':>8} {'9 pairs vs reference':>22} {'all 45 pairs':>14}")
    for workers in (1, 2, 8, 32, 128, 512):
        t_ref = (stacks - 1) * (tokens * c1 / workers + s_pair)
        t_all = stacks * (stacks - 1) // 2 * (tokens * c1 / workers + s_pair)
        print(f"{workers:>8} {fmt_s(t_ref):>22} {fmt_s(t_all):>14}")
    print("(pairs vs reference: 9 x 100k = 900k position-pairs; all pairs: 45 x 100k = 4.5M, each one kernel call "
          "giving both directions; all pairs in one matrix graph)")
    if args.beyond_ram:
        avail = int(next(ln.split()[1] for ln in open("/proc/meminfo") if ln.startswith("MemAvailable"))) * 1024
        v_rss = 151936
        rows_rss = int(avail * 1.1 / (2 * v_rss * 2)) + 1
        print(f"\nlocal streaming beyond RAM: {avail / 2**30:.1f} GiB available; pair of {rows_rss} positions")
        rss_check(rows_rss, v_rss)


if __name__ == "__main__":
    main()
