"""Speed and memory of kldcard's float64 divergences against the obvious alternatives.

Run: ``python benchmarks/divergence.py`` (add ``--quick`` for a smoke run, ``--skip-rss`` to skip the
4 GB+ capture). Not a timed test. Prints, at vocabularies 151,936 and 262,144, milliseconds per
position for

  (a) kldcard: two BF16 captures on disk streamed through the kernel on all cores;
  (b) naive numpy float64: convert, log_softmax each side, exp, three sums (forward, reverse, JS);
  (c) torch float64: log_softmax + kl_div (torch's own threads);
  (d) floor: numpy doing only two exp and one log per vocabulary entry, one thread, cache-resident;

and the ratios a/b, a/c, a/d; then the peak RSS of a subprocess comparing a capture pair larger than
4 GB. Every timing is the best of several repeats (the machine may be shared; the minimum is the
least disturbed run). All divergences in nats; forward = KL(P_ref || P_cand).
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from kldcard.capture.store import CaptureWriter, bf16_to_f32, open_capture
from kldcard.compare.stream import default_threads, divergence_captures

META = {"model": {"name": "benchmark", "format": "npy"}}


def realistic_logits(rng: np.random.Generator, n: int, v: int) -> np.ndarray:
    """LLM-like rows: a broad body, a few dozen plausible tokens, one clear favourite."""
    z = rng.standard_normal((n, v), dtype=np.float32) * np.float32(2.0)
    z[:, :64] += rng.uniform(4.0, 10.0, size=(n, 64)).astype(np.float32)
    z[np.arange(n), rng.integers(0, 64, size=n)] += np.float32(4.0)
    return z


def make_pair(root: Path, v: int, n: int, sigma: float, seed: int = 0, chunk: int = 64, cycle: int | None = None):
    """Reference and candidate (reference + N(0, sigma) logit noise, like a quantized model)."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, v, size=n + 1)
    blocks = []
    with CaptureWriter(root / "ref", meta=META, n_vocab=v, token_ids=ids) as wr, \
            CaptureWriter(root / "cand", meta=META, n_vocab=v, token_ids=ids) as wc:
        for i in range(0, n, chunk):
            m = min(chunk, n - i)
            if cycle is None or len(blocks) < cycle:
                zr = realistic_logits(rng, chunk, v)
                zc = zr + rng.standard_normal(zr.shape, dtype=np.float32) * np.float32(sigma)
                blocks.append((zr, zc))
            zr, zc = blocks[(i // chunk) % len(blocks)]
            wr.append(np.arange(i, i + m), zr[:m])
            wc.append(np.arange(i, i + m), zc[:m])
    return open_capture(root / "ref", verify=False), open_capture(root / "cand", verify=False)


def best_of(fn, repeats: int) -> tuple[float, float]:
    """(best wall seconds, best CPU seconds of this process, all threads) over ``repeats`` runs."""
    wall = cpu = float("inf")
    for _ in range(repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fn()
        wall = min(wall, time.perf_counter() - t0)
        cpu = min(cpu, time.process_time() - c0)
    return wall, cpu


def naive_numpy(raw_r: np.ndarray, raw_c: np.ndarray):
    """The recipe written the obvious way, whole block at once."""
    zr = bf16_to_f32(raw_r).astype(np.float64)
    zc = bf16_to_f32(raw_c).astype(np.float64)

    def log_softmax(z):
        m = z.max(axis=1, keepdims=True)
        return z - (m + np.log(np.exp(z - m).sum(axis=1, keepdims=True)))

    lp, lq = log_softmax(zr), log_softmax(zc)
    p, q = np.exp(lp), np.exp(lq)
    fwd = (p * (lp - lq)).sum(axis=1)
    rev = (q * (lq - lp)).sum(axis=1)
    lm = np.log(0.5 * (p + q))
    js = 0.5 * (p * (lp - lm)).sum(axis=1) + 0.5 * (q * (lq - lm)).sum(axis=1)
    return fwd, rev, js


def torch_f64(torch, raw_r: np.ndarray, raw_c: np.ndarray):
    F = torch.nn.functional
    zr = torch.from_numpy(bf16_to_f32(raw_r)).double()
    zc = torch.from_numpy(bf16_to_f32(raw_c)).double()
    lp, lq = F.log_softmax(zr, dim=-1), F.log_softmax(zc, dim=-1)
    fwd = F.kl_div(lq, lp, reduction="none", log_target=True).sum(-1)  # KL(P || Q)
    rev = F.kl_div(lp, lq, reduction="none", log_target=True).sum(-1)
    lm = torch.logaddexp(lp, lq) - np.log(2.0)
    js = 0.5 * (F.kl_div(lm, lp, reduction="none", log_target=True).sum(-1)
                + F.kl_div(lm, lq, reduction="none", log_target=True).sum(-1))
    return fwd, rev, js


def floor_numpy(v: int, repeats: int) -> tuple[float, float]:
    x = np.random.default_rng(1).standard_normal(v)
    y = np.empty_like(x)
    z = np.empty_like(x)

    def work():
        np.exp(x, out=y)
        np.exp(x, out=z)
        np.log(y, out=y)

    return best_of(work, repeats * 4)


def _row(label: str, v: int, vals: list[float], extra: str = "") -> str:
    a, b, c, d = vals
    return (f"{label:>5} {v:>8} | {a:>11.3f} {b:>10.3f} {c:>10.3f} {d:>10.3f} | "
            f"{a / b:>6.3f} {a / c:>6.3f} {a / d:>6.3f}  {extra}")


def speed_table(n_rows: int, repeats: int, sigma: float) -> None:
    try:
        import torch
    except ImportError:  # pragma: no cover
        torch = None
    threads = default_threads()
    import numba

    print(f"machine: {platform.processor() or platform.machine()}, {os.cpu_count()} CPUs "
          f"({threads} usable), load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}, numpy "
          f"{np.__version__}, numba {numba.__version__}"
          + (f", torch {torch.__version__} ({torch.get_num_threads()} threads)" if torch else ""))
    print(f"{n_rows} positions per vocabulary, candidate = reference + N(0, {sigma}) logit noise, BF16 captures; "
          f"best of {repeats}; kldcard uses {threads} threads")
    hdr = f"{'':>5} {'vocab':>8} | {'(a) kldcard':>11} {'(b) naive':>10} {'(c) torch':>10} {'(d) floor':>10} | " \
          f"{'a/b':>6} {'a/c':>6} {'a/d':>6}"
    print(hdr)
    print("-" * (len(hdr) + 40))
    for v in (151936, 262144):
        with tempfile.TemporaryDirectory(prefix="kldcard-bench-") as tmp:
            ref, cand = make_pair(Path(tmp), v, n_rows, sigma)
            raw_r, raw_c = np.array(ref.raw_rows(0, n_rows)), np.array(cand.raw_rows(0, n_rows))
            res = {}
            ta = best_of(lambda: res.__setitem__("a", divergence_captures(ref, cand, threads=threads)), repeats)
            tb = best_of(lambda: res.__setitem__("b", naive_numpy(raw_r, raw_c)), repeats)
            tc = best_of(lambda: torch_f64(torch, raw_r, raw_c), repeats) if torch else (np.nan, np.nan)
            td = floor_numpy(v, repeats)
            a_mean, b_mean = res["a"].forward_kl.mean(), res["b"][0].mean()
            wall = [t[0] / n_rows * 1e3 for t in (ta, tb, tc)] + [td[0] * 1e3]
            cpu = [t[1] / n_rows * 1e3 for t in (ta, tb, tc)] + [td[1] * 1e3]
            print(_row("wall", v, wall, f"mean forward KL: kldcard {a_mean:.9e}, naive {b_mean:.9e} nats"))
            print(_row("cpu", v, cpu, "(CPU ms summed over threads: the work, whatever else runs)"))
    print("ms per position; a/b < 0.1 means >= 10x faster than naive, a/c <= 1 no slower than torch, "
          "a/d <= 2 within 2x of the floor")


RSS_CHILD = """
import resource, sys, time
def peak_kib():
    # VmHWM belongs to this process image; ru_maxrss would include the parent's RSS at fork
    try:
        for line in open("/proc/self/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1])
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
from kldcard.capture.store import open_capture
from kldcard.compare.stream import divergence_captures
ref, cand = open_capture(sys.argv[1], verify=False), open_capture(sys.argv[2], verify=False)
t0 = time.perf_counter()
td = divergence_captures(ref, cand)
dt = time.perf_counter() - t0
print(ref.n_positions, dt, peak_kib(), float(td.forward_kl.mean()))
"""


def rss_check(rows: int, v: int = 151936) -> None:
    with tempfile.TemporaryDirectory(prefix="kldcard-bench-rss-", dir=os.environ.get("KLDCARD_BENCH_DIR")) as tmp:
        t0 = time.perf_counter()
        ref, cand = make_pair(Path(tmp), v, rows, 0.1, chunk=128, cycle=4)
        size = sum(f.stat().st_size for f in Path(tmp).rglob("*") if f.is_file())
        print(f"\npeak memory: capture pair of {size / 2**30:.2f} GiB ({rows} positions x {v} vocab x 2, BF16), "
              f"written in {time.perf_counter() - t0:.0f} s")
        out = subprocess.run([sys.executable, "-c", RSS_CHILD, str(ref.path), str(cand.path)],
                             check=True, capture_output=True, text=True).stdout.split()
        n, dt, kb, mean = int(out[0]), float(out[1]), int(out[2]), float(out[3])
        print(f"compared {n} positions in {dt:.1f} s ({dt / n * 1e3:.3f} ms/position), "
              f"mean forward KL {mean:.6e} nats; peak RSS of the comparing process: {kb / 1024:.0f} MiB")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rows", type=int, default=48, help="positions per speed measurement")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--sigma", type=float, default=0.1, help="candidate logit noise (nats)")
    ap.add_argument("--rss-rows", type=int, default=7200, help="positions in the memory test (7200: 4.1 GiB pair)")
    ap.add_argument("--skip-rss", action="store_true")
    ap.add_argument("--quick", action="store_true", help="small run to check the script works")
    args = ap.parse_args()
    if args.quick:
        args.rows, args.repeats, args.rss_rows = 8, 1, 64
    speed_table(args.rows, args.repeats, args.sigma)
    if not args.skip_rss:
        rss_check(args.rss_rows)


if __name__ == "__main__":
    main()
