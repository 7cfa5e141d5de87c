"""Stream two captures through the divergence kernel, in blocks, on all cores.

Rows are read with plain file reads into per-thread buffers (not memory-mapped), so resident memory
is a few blocks per thread whatever the capture size. Blocks never straddle a shard of either
capture. Each thread hands whole blocks of stored rows (BF16 bits or F32, never converted in
Python) to the compiled kernel, which releases the GIL, so threads give real parallelism.
"""

from __future__ import annotations

import contextlib
import os
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import FIRST_COMPLETED, ThreadPoolExecutor, wait

import numpy as np

from kldcard.capture.store import Capture, to_float64
from kldcard.compare.divergence import RowKernel, TokenDivergence
from kldcard.errors import NonFiniteLogits

__all__ = ["default_threads", "divergence_captures", "nonfinite_side", "single_threaded_blas"]

_BLOCK_BYTES = 1 << 20  # raw bytes per side per block: small blocks keep threads evenly loaded to the end


def default_threads() -> int:
    """Usable CPU cores (affinity-aware)."""
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:  # pragma: no cover - non-Linux
        return max(1, os.cpu_count() or 1)


@contextlib.contextmanager
def single_threaded_blas() -> Iterator[None]:
    """Hold BLAS to one thread while row-parallel threads run numpy work (the many-stack report's
    log-softmax), so that BLAS's own pool does not oversubscribe the cores."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - threadpoolctl is a dependency; without it BLAS may oversubscribe
        yield
        return
    with threadpool_limits(limits=1, user_api="blas"):
        yield


def _blocks(ref: Capture, cand: Capture, rows: int) -> list[tuple[int, int]]:
    cuts = sorted(set(ref.shard_starts) | set(cand.shard_starts) | {ref.n_positions})
    out = []
    for a, b in zip(cuts, cuts[1:]):
        out.extend((i, min(i + rows, b)) for i in range(a, b, rows))
    return out


class _Worker(threading.local):
    def init(self, ref: Capture, cand: Capture, n_vocab: int, rows: int) -> None:
        if getattr(self, "ready", False):
            return
        self.kern = RowKernel(n_vocab)
        self.buf_r = np.empty((rows, ref.n_vocab), dtype=ref.raw_dtype)
        self.buf_c = np.empty((rows, cand.n_vocab), dtype=cand.raw_dtype)
        self.ready = True


def nonfinite_side(zr: np.ndarray, zc: np.ndarray) -> str:
    """Which side of a row the kernel rejected: "reference" if it has NaN/+inf (or no finite logit)."""

    def bad(z: np.ndarray) -> bool:
        return bool(np.isnan(z).any() or np.isposinf(z).any() or np.isneginf(z).all())

    return "reference" if bad(zr) else "candidate"


def divergence_captures(
    ref: Capture,
    cand: Capture,
    *,
    n_vocab: int | None = None,
    threads: int | None = None,
    progress: Callable[[int], None] | None = None,
) -> TokenDivergence:
    """Per-position divergences (nats) of two aligned captures over their first ``n_vocab`` entries.

    The caller has checked that positions and token ids agree. ``progress(n_rows_done)`` is called
    from the calling thread as blocks finish. NaN/+inf logits raise NonFiniteLogits (all bad
    positions of the first offending side are named).
    """
    n_vocab = n_vocab or ref.n_vocab
    threads = threads or default_threads()
    row_bytes = max(ref.n_vocab * ref.raw_dtype.itemsize, cand.n_vocab * cand.raw_dtype.itemsize)
    rows = max(1, min(256, _BLOCK_BYTES // row_bytes))
    out = TokenDivergence.empty(ref.positions, ref.next_token_ids())
    worker = _Worker()
    bad: dict[str, list[int]] = {"reference": [], "candidate": []}
    lock = threading.Lock()

    def run(i0: int, i1: int) -> int:
        worker.init(ref, cand, n_vocab, rows)
        br = ref.read_rows_into(i0, i1, worker.buf_r)[:, :n_vocab]
        bc = cand.read_rows_into(i0, i1, worker.buf_c)[:, :n_vocab]
        for k in worker.kern.fill(br, bc, out, i0):  # the kernel reads BF16 bits / F32 directly
            zr, zc = to_float64(br[k]), to_float64(bc[k])
            with lock:
                bad[nonfinite_side(zr, zc)].append(int(out.positions[i0 + k]))
        return i1 - i0

    blocks = _blocks(ref, cand, rows)
    if threads == 1:
        for i0, i1 in blocks:
            done = run(i0, i1)
            if progress:
                progress(done)
    else:
        _run_threaded(run, blocks, threads, progress)
    for side in ("reference", "candidate"):
        if bad[side]:
            raise NonFiniteLogits(side, sorted(bad[side]))
    return out


def _run_threaded(run, blocks, threads: int, progress) -> None:
    pool = ThreadPoolExecutor(max_workers=threads, thread_name_prefix="kldcard")
    pending: set = set()
    it = iter(blocks)
    try:
        # keep a bounded queue so an interrupt stops promptly and memory stays flat
        for blk in it:
            pending.add(pool.submit(run, *blk))
            if len(pending) >= 2 * threads:
                break
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for f in done:
                n = f.result()
                if progress:
                    progress(n)
                nxt = next(it, None)
                if nxt is not None:
                    pending.add(pool.submit(run, *nxt))
    except BaseException:
        for f in pending:
            f.cancel()
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
