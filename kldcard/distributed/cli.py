"""Hooks the CLI commands call when ``--scheduler`` is given (see :func:`add_scheduler_arguments`).

``kldcard compare`` and ``kldcard stacks`` keep their own printing; these functions only swap the
computation for its cluster twin, which returns the same objects.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import ContextManager

from ..progress import position_progress
from .cluster import add_scheduler_arguments, scheduler_from_args

__all__ = ["add_scheduler_arguments", "cluster_progress", "compare_from_args", "stacks_from_args"]


def cluster_progress(total: int, what: str, enabled: bool = True) -> ContextManager[Callable[[int], None] | None]:
    """A progress bar over finished task positions on stderr (only on a terminal)."""
    return position_progress(total, what, enabled, unit="positions (cluster)")


def compare_from_args(args: argparse.Namespace, *, percentiles, show_progress: bool = True):
    """``kldcard compare`` on the cluster named by ``args.scheduler``: (CompareResult, TokenDivergence),
    identical to the local :func:`kldcard.compare.compare` (nats; forward = KL(P_ref ‖ P_cand)).
    Connects first, so an unreachable scheduler fails before any capture is read."""
    from .compare import compare_on_cluster
    from .urls import open_capture_url

    client = scheduler_from_args(args)
    try:
        ref = open_capture_url(args.reference, verify=not args.no_verify)
        cand = open_capture_url(args.candidate, verify=not args.no_verify)
        with cluster_progress(ref.n_positions, "comparing", show_progress) as progress:
            return compare_on_cluster(
                client, ref, cand, align_vocab=args.align_vocab, buckets=args.buckets, percentiles=percentiles,
                bootstrap=args.bootstrap, level=args.level, seed=args.seed, task_positions=args.task_positions,
                progress=progress, return_per_token=True,
            )
    finally:
        client.close()


def stacks_from_args(args: argparse.Namespace, *, labels=None, show_progress: bool = True):
    """``kldcard stacks`` on the cluster named by ``args.scheduler``: the same ManyStackReport as
    :func:`kldcard.stack.many.compare_stacks` (nats, float64, full vocabulary)."""
    from .compare import compare_stacks_on_cluster
    from .urls import open_capture_url

    client = scheduler_from_args(args)
    try:
        n = open_capture_url(args.captures[0]).n_positions if args.captures else 0
        with cluster_progress(n, "comparing stacks", show_progress) as progress:
            return compare_stacks_on_cluster(client, args.captures, labels=labels, gap=args.gap,
                                             verify=not args.no_verify, task_positions=args.task_positions,
                                             progress=progress)
    finally:
        client.close()
