"""The ``--scheduler`` options and the hooks the commands call when one is given.

``kldcard compare``, ``stacks`` and ``matrix`` keep their own printing; these functions only swap the
computation for its cluster twin in :mod:`kldcard.distributed`, which returns the same objects.
"""

from __future__ import annotations

import argparse
from collections.abc import Callable
from typing import ContextManager

from kldcard.distributed.cluster import DEFAULT_CONNECT_TIMEOUT, connect
from kldcard.errors import UsageError
from kldcard.progress import position_progress

__all__ = ["add_scheduler_arguments", "cluster_progress", "compare_from_args", "scheduler_from_args",
           "stacks_from_args"]


def add_scheduler_arguments(parser: argparse.ArgumentParser) -> None:
    """Add ``--scheduler ADDRESS``, ``--connect-timeout S`` and ``--task-positions N`` to a command
    (once: a parser that already has ``--scheduler`` is left as it is)."""
    if "--scheduler" in parser._option_string_actions:
        return
    g = parser.add_argument_group("distributed (Dask)")
    g.add_argument("--scheduler", metavar="ADDRESS", default=None,
                   help="run on a Dask cluster: scheduler address (tcp://host:8786) or a scheduler file (.json); "
                   "captures are opened by path or fsspec URL on the workers")
    g.add_argument("--connect-timeout", type=float, default=DEFAULT_CONNECT_TIMEOUT, metavar="S",
                   help=f"seconds to wait for the scheduler (default {DEFAULT_CONNECT_TIMEOUT:g})")
    g.add_argument("--task-positions", type=int, default=None, metavar="N",
                   help="positions per task (default: about 64 MB of logits per capture, cut at shard boundaries)")


def scheduler_from_args(args: argparse.Namespace):
    """The client for ``--scheduler`` (None without it)."""
    if getattr(args, "task_positions", None) is not None and args.task_positions < 1:
        raise UsageError("--task-positions must be >= 1")
    if not getattr(args, "scheduler", None):
        return None
    return connect(args.scheduler, args.connect_timeout)


def cluster_progress(total: int, what: str, enabled: bool = True) -> ContextManager[Callable[[int], None] | None]:
    """A progress bar over finished task positions on stderr (only on a terminal)."""
    return position_progress(total, what, enabled, unit="positions (cluster)")


def compare_from_args(args: argparse.Namespace, *, percentiles, show_progress: bool = True):
    """``kldcard compare`` on the cluster named by ``args.scheduler``: (CompareResult, TokenDivergence),
    identical to the local :func:`kldcard.compare.run.compare` (nats; forward = KL(P_ref ‖ P_cand)).
    Connects first, so an unreachable scheduler fails before any capture is read."""
    from kldcard.distributed.compare import compare_on_cluster
    from kldcard.distributed.urls import open_capture_url

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
    :func:`kldcard.compare.stacks.compare_stacks` (nats, float64, full vocabulary)."""
    from kldcard.distributed.compare import compare_stacks_on_cluster
    from kldcard.distributed.urls import open_capture_url

    client = scheduler_from_args(args)
    try:
        n = open_capture_url(args.captures[0]).n_positions if args.captures else 0
        with cluster_progress(n, "comparing stacks", show_progress) as progress:
            return compare_stacks_on_cluster(client, args.captures, labels=labels, gap=args.gap,
                                             verify=not args.no_verify, task_positions=args.task_positions,
                                             progress=progress)
    finally:
        client.close()
