"""Distributed ``compare`` and many-stack comparison: identical results, computed on a Dask cluster.

The work is cut by shard and position range into pure tasks (:mod:`kldcard.distributed.tasks`); the client
puts the per-token values back in position order and summarises them with the same code as the
local run (:func:`kldcard.compare.run.build_result`, :mod:`kldcard.compare.summary`; the bootstrap is seeded),
so every per-token value is bit-for-bit the local one and so is every summary.

Divergences in nats; forward = KL(P_ref ‖ P_cand); full vocabulary (or the aligned common prefix).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np

from kldcard.compare.divergence import TokenDivergence
from kldcard.compare.summary import DEFAULT_PERCENTILES, BootstrapOptions
from kldcard.distributed.cluster import iter_ranges, run_tasks, total_threads
from kldcard.distributed.tasks import COMPARE_FIELDS, compare_rows, stack_rows
from kldcard.distributed.urls import UrlCapture, open_capture_url
from kldcard.errors import NonFiniteLogits, UsageError

__all__ = ["CompareJob", "compare_on_cluster", "compare_stacks_on_cluster", "task_rows"]

TASK_BYTES = 64 << 20  # raw logit bytes per capture per task: big enough to amortise, small to reschedule


def task_rows(row_bytes: int, task_positions: int | None) -> int:
    """Positions per task: ``task_positions`` or about :data:`TASK_BYTES` of one capture's logits."""
    if task_positions is not None:
        if task_positions < 1:
            raise UsageError("task positions must be >= 1")
        return task_positions
    return max(1, TASK_BYTES // max(1, row_bytes))


class CompareJob:
    """One reference/candidate comparison as tasks, and the assembly of their results."""

    def __init__(self, ref: UrlCapture, cand: UrlCapture, *, align_vocab: str | None = None,
                 task_positions: int | None = None, mmap: bool = True, slow_s: float = 0.0):
        from kldcard.compare.run import check_comparable

        self.ref, self.cand, self.mmap, self.slow_s = ref, cand, mmap, slow_s
        self.n_vocab, self.alignment = check_comparable(ref, cand, align_vocab)
        row_bytes = max(ref.n_vocab * ref.raw_dtype.itemsize, cand.n_vocab * cand.raw_dtype.itemsize)
        rows = task_rows(row_bytes, task_positions)
        self.ranges = list(iter_ranges([*ref.shard_starts, *cand.shard_starts, 0], ref.n_positions, rows))
        self.td = TokenDivergence.empty(ref.positions, ref.next_token_ids())
        self.bad: dict[str, list[int]] = {"reference": [], "candidate": []}
        self.done = 0

    def tasks(self) -> list[tuple[Callable, tuple]]:
        fps = (self.ref.fingerprint, self.cand.fingerprint)
        return [(compare_rows, (self.ref.url, self.cand.url, self.n_vocab, a, b, self.mmap, self.slow_s, fps))
                for a, b in self.ranges]

    def weights(self) -> list[int]:
        return [b - a for a, b in self.ranges]

    def add(self, res: dict) -> None:
        i0, i1 = res["i0"], res["i1"]
        for f in COMPARE_FIELDS:
            getattr(self.td, f)[i0:i1] = res[f]
        for side, pos in res["nonfinite"].items():
            self.bad[side].extend(pos)
        self.done += 1

    def result(self, *, buckets=None, percentiles: Sequence[float] = DEFAULT_PERCENTILES, bootstrap: int = 1000,
               level: float = 0.95, seed: int = 0, threads: int = 1):
        """The :class:`~kldcard.compare.run.CompareResult` (the local run's summary code) and the per-token
        values. Raises NonFiniteLogits as the local stream does."""
        from kldcard.compare.run import build_result

        if self.done != len(self.ranges):  # pragma: no cover - run_tasks returns only when all are in
            raise RuntimeError(f"{len(self.ranges) - self.done} task results missing")
        for side in ("reference", "candidate"):
            if self.bad[side]:
                raise NonFiniteLogits(side, sorted(self.bad[side]))
        boot = BootstrapOptions(resamples=bootstrap, level=level, seed=seed)
        res = build_result(self.ref, self.cand, self.td, self.n_vocab, self.alignment, buckets, list(percentiles),
                           boot, threads)
        return res, self.td


def compare_on_cluster(
    client,
    reference: str | os.PathLike | UrlCapture,
    candidate: str | os.PathLike | UrlCapture,
    *,
    align_vocab: str | None = None,
    buckets: str | Sequence[int] | None = None,
    percentiles: Sequence[float] = DEFAULT_PERCENTILES,
    bootstrap: int = 1000,
    level: float = 0.95,
    seed: int = 0,
    verify: bool = True,
    task_positions: int | None = None,
    mmap: bool = True,
    progress: Callable[[int], None] | None = None,
    return_per_token: bool = False,
    slow_s: float = 0.0,
):
    """:func:`kldcard.compare.run.compare` on a Dask cluster (``client``); same arguments, same result
    (``numerics.threads`` records the cluster's worker threads). ``reference``/``candidate`` are
    paths or fsspec URLs the workers can read. ``progress(n_positions)`` as tasks finish."""
    ref = reference if isinstance(reference, UrlCapture) else open_capture_url(reference, verify=verify, mmap=mmap)
    cand = candidate if isinstance(candidate, UrlCapture) else open_capture_url(candidate, verify=verify, mmap=mmap)
    job = CompareJob(ref, cand, align_vocab=align_vocab, task_positions=task_positions, mmap=mmap, slow_s=slow_s)
    run_tasks(client, job.tasks(), on_result=lambda i, r: job.add(r), progress=progress, weights=job.weights())
    result, td = job.result(buckets=buckets, percentiles=percentiles, bootstrap=bootstrap, level=level, seed=seed,
                            threads=total_threads(client))
    return (result, td) if return_per_token else result


# ----------------------------------------------------------------------------------------------
# Many stacks
# ----------------------------------------------------------------------------------------------


def compare_stacks_on_cluster(
    client,
    paths: Sequence[str | os.PathLike],
    *,
    labels: Sequence[str] | None = None,
    gap: int = 8,
    verify: bool = True,
    task_positions: int | None = None,
    mmap: bool = True,
    progress: Callable[[int], None] | None = None,
    slow_s: float = 0.0,
):
    """:func:`kldcard.compare.stacks.compare_stacks` on a Dask cluster: the same
    :class:`~kldcard.compare.stacks.ManyStackReport` (values in nats, float64, full vocabulary)."""
    from kldcard.compare.stacks import (
        block_rows,
        build_report,
        check_same_tokens,
        check_stack_arguments,
        stack_names,
    )

    check_stack_arguments(len(paths), labels, gap)
    urls = [str(p) for p in paths]
    caps = [open_capture_url(u, verify=verify, mmap=mmap) for u in urls]
    check_same_tokens(urls, caps)
    n_stacks, n_vocab, n_pos = len(caps), caps[0].n_vocab, caps[0].n_positions
    stacks, names = stack_names(urls, caps, labels)
    # the local block bound (memory of one block on a worker), then the task size
    rows = min(block_rows(n_stacks, n_vocab), task_rows(n_vocab * caps[0].raw_dtype.itemsize, task_positions))
    cuts = [0, *(s for c in caps for s in c.shard_starts)]
    ranges = list(iter_ranges(cuts, n_pos, rows))
    kl_pos = np.zeros((n_stacks, n_stacks, n_pos))
    to_centroid = np.zeros((n_stacks, n_pos))
    top1 = np.zeros((n_stacks, n_pos), dtype=np.int64)
    bad: list[tuple[str, int]] = []

    def add(_: int, res: dict[str, Any]) -> None:
        a, b = res["start"], res["stop"]
        if res["nonfinite"] is not None:
            bad.append(res["nonfinite"])
            return
        kl_pos[:, :, a:b], to_centroid[:, a:b], top1[:, a:b] = res["kl"], res["to_centroid"], res["top1"]

    fps = [c.fingerprint for c in caps]
    tasks = [(stack_rows, (urls, names, a, b, mmap, slow_s, fps)) for a, b in ranges]
    run_tasks(client, tasks, on_result=add, progress=progress, weights=[b - a for a, b in ranges])
    if bad:
        label, pos = min(bad, key=lambda x: x[1])
        raise NonFiniteLogits(f"{label} (or a stack it is compared with)", [pos])

    # Exactly the local assembly: the same function, summing in position order.
    return build_report(urls, names, stacks, n_vocab, np.asarray(caps[0].positions, dtype=np.int64), kl_pos,
                        to_centroid, top1, gap)
