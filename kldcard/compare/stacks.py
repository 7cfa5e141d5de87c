"""Many stacks at once: the same tokens through several stacks, compared pairwise and to a centroid.

There is no objective "right" stack: engines, attention backends, GPUs and TP degrees each compute
a slightly different distribution from the same weights. This module takes N captures with identical
token ids and positions and reports, in float64 over the full vocabulary, in nats:

- the pairwise forward-KL matrix ``KL[i][j] = mean over positions of KL(P_i ‖ P_j)`` (row = reference);
- the pairwise top-1 disagreement matrix (fraction of positions whose argmax differs; ties resolve to
  the lowest token id, as ``numpy.argmax`` does);
- each stack's ``KL(P_stack ‖ M)`` to the **mean-probability centroid** ``M = (1/N) Σ_k P_k``;
- for each pair, the first position where the top-1 tokens differ and the clusters of disagreement.

Why the mean-probability centroid (and not the normalised geometric mean): ``M`` is the distribution
that minimises ``Σ_k KL(P_k ‖ M)``, so each stack's number is exactly its share of the generalised
Jensen-Shannon divergence of the set; it is bounded by ``log N`` and finite even when one stack puts
(near) zero probability on a token (a truncated or floored vocabulary). The normalised geometric mean
minimises the reverse sum ``Σ_k KL(C ‖ P_k)`` and is dragged towards zero wherever any single stack is,
so one outlier stack would move every other stack's distance.
"""

from __future__ import annotations

import contextlib
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from kldcard.capture.store import open_capture, to_float64
from kldcard.compare.divergence import RowKernel, log_softmax
from kldcard.compare.stacks_report import CENTROID, ManyStackReport, PairDivergence
from kldcard.compare.stream import default_threads, single_threaded_blas
from kldcard.errors import CaptureMismatch, NonFiniteLogits, UsageError
from kldcard.progress import position_progress

__all__ = [
    "CENTROID",
    "ManyStackReport",
    "PairDivergence",
    "block_rows",
    "build_report",
    "check_same_tokens",
    "check_stack_arguments",
    "compare_stacks",
    "log_mean_prob",
    "log_softmax",
    "stack_label",
    "stack_names",
]

_BLOCK_BYTES = 1 << 28


def _divergence(kernel: RowKernel, z_ref: np.ndarray, z_cand: np.ndarray, label: str, position: int) -> tuple:
    """(forward, reverse, js, ...) in nats from kldcard.compare.divergence's accurate float64 row kernel."""
    res = kernel(z_ref, z_cand)
    if res is None:
        raise NonFiniteLogits(f"{label} (or a stack it is compared with)", [position])
    return res


def log_mean_prob(logp: np.ndarray) -> np.ndarray:
    """log((1/N) Σ_k P_k) by log-sum-exp over the stacks: finite wherever any stack is, and exactly
    log P when all stacks agree (so identical stacks are exactly 0 nats from the centroid)."""
    lm = logp.max(axis=0)
    # An entry masked (-inf) on every stack stays -inf in the centroid.
    lm_safe = np.where(np.isfinite(lm), lm, 0.0)
    acc = np.zeros_like(lm)
    tmp = np.empty_like(lm)
    for k in range(logp.shape[0]):
        np.subtract(logp[k], lm_safe, out=tmp)
        np.exp(tmp, out=tmp)
        acc += tmp
    with np.errstate(divide="ignore"):
        np.log(acc, out=acc)
    acc += lm_safe
    acc -= np.log(logp.shape[0])
    return acc


def _clusters(positions: np.ndarray, mask: np.ndarray, gap: int) -> list[tuple[int, int, int]]:
    hits = positions[mask]
    if hits.size == 0:
        return []
    # A new cluster starts where the distance to the previous disagreement exceeds ``gap`` positions.
    breaks = np.flatnonzero(np.diff(hits) > gap) + 1
    out = []
    for seg in np.split(hits, breaks):
        out.append((int(seg[0]), int(seg[-1]), int(seg.size)))
    return out


def _first_difference(a: np.ndarray, b: np.ndarray) -> int:
    n = min(a.size, b.size)
    diff = np.flatnonzero(a[:n] != b[:n])
    return int(diff[0]) if diff.size else n


def check_same_tokens(paths: Sequence[str | Path], caps: Sequence[Any]) -> None:
    """Raise CaptureMismatch unless all captures share the vocabulary size, token ids and positions."""
    first = caps[0]
    for p, c in zip(paths[1:], caps[1:]):
        if c.n_vocab != first.n_vocab:
            raise CaptureMismatch(
                f"{p} has {c.n_vocab} vocabulary entries but {paths[0]} has {first.n_vocab}; "
                "many-stack comparison needs identical vocabularies"
            )
        for what, a, b in (("token ids", first.token_ids, c.token_ids), ("positions", first.positions, c.positions)):
            if a.shape != b.shape or not np.array_equal(a, b):
                idx = _first_difference(a, b)
                raise CaptureMismatch(
                    f"{p} and {paths[0]} differ in their {what} (first at index {idx}); "
                    "stacks are compared only on the same tokens at the same positions"
                )


def check_stack_arguments(n_paths: int, labels: Sequence[str] | None, gap: int) -> None:
    """Raise UsageError for fewer than two captures, a label count that does not match, or a negative gap."""
    if n_paths < 2:
        raise UsageError("give at least two captures to compare stacks")
    if labels is not None and len(labels) != n_paths:
        raise UsageError(f"{len(labels)} labels for {n_paths} captures")
    if gap < 0:
        raise UsageError(f"cluster gap must be non-negative, got {gap}")


def stack_names(paths: Sequence[str | Path], caps: Sequence[Any], labels: Sequence[str] | None) -> tuple[list, list]:
    """(stack fingerprints as JSON dicts or None, labels): ``labels`` or the file name with its stack."""
    stacks = [c.manifest.stack.model_dump(mode="json") if c.manifest.stack is not None else None for c in caps]
    names = list(labels) if labels else [stack_label(Path(p), s) for p, s in zip(paths, stacks)]
    return stacks, names


def block_rows(n_stacks: int, n_vocab: int) -> int:
    """Positions per block so that N stacks' float64 logits and log-probs fit in :data:`_BLOCK_BYTES`."""
    return max(1, min(1024, _BLOCK_BYTES // (16 * n_stacks * n_vocab)))


def stack_label(path: Path, stack: dict[str, Any] | None) -> str:
    """The default label of a capture: its directory name and, when recorded, engine, attention and device."""
    if not stack:
        return path.name
    return f"{path.name} ({stack.get('engine')}, {stack.get('attention_backend')}, {stack.get('device')})"


def compare_stacks(
    paths: Sequence[str | Path],
    *,
    labels: Sequence[str] | None = None,
    gap: int = 8,
    verify: bool = True,
    progress: bool = False,
    threads: int | None = None,
) -> ManyStackReport:
    """Compare N ≥ 2 captures of the same tokens and positions from different stacks (nats, float64).

    ``gap``: two top-1 disagreements at most this many positions apart belong to the same cluster.
    ``threads``: worker threads (default: usable cores); results do not depend on it.
    """
    check_stack_arguments(len(paths), labels, gap)
    caps = [open_capture(p, verify=verify) for p in paths]
    check_same_tokens(paths, caps)
    n_stacks, n_vocab, n_pos = len(caps), caps[0].n_vocab, caps[0].n_positions
    stacks, names = stack_names(paths, caps, labels)

    kl_pos = np.zeros((n_stacks, n_stacks, n_pos))  # per position KL(P_i ‖ P_j)
    to_centroid = np.zeros((n_stacks, n_pos))
    top1 = np.zeros((n_stacks, n_pos), dtype=np.int64)
    block = block_rows(n_stacks, n_vocab)
    n_threads = max(1, threads if threads is not None else default_threads())
    positions = np.asarray(caps[0].positions, dtype=np.int64)

    def rows(start: int, r0: int, r1: int, logits: np.ndarray, logp: np.ndarray, log_m: np.ndarray) -> None:
        kernel = RowKernel(n_vocab)  # scratch buffers: one kernel per task, never shared
        for r in range(r0, r1):
            pos, col = int(positions[start + r]), start + r
            for i in range(n_stacks):
                for j in range(i + 1, n_stacks):
                    # One kernel call gives both directions: KL(P_i ‖ P_j) and KL(P_j ‖ P_i).
                    fwd, rev = _divergence(kernel, logits[i, r], logits[j, r], names[i], pos)[:2]
                    kl_pos[i, j, col], kl_pos[j, i, col] = fwd, rev
                # Log-probabilities, not raw logits, so that a stack equal to the centroid is
                # exactly 0 nats from it.
                to_centroid[i, col] = _divergence(kernel, logp[i, r], log_m[r], names[i], pos)[0]

    with contextlib.ExitStack() as ctx:
        # The compiled row kernel and numpy's loops release the GIL, so row-parallel threads use the
        # cores; BLAS is held to one thread so that its own pool does not oversubscribe them.
        ctx.enter_context(single_threaded_blas())
        pool = ctx.enter_context(ThreadPoolExecutor(n_threads)) if n_threads > 1 else None
        advance = ctx.enter_context(position_progress(n_pos, "comparing stacks", enabled=progress))
        # Row ranges, not iter_blocks: captures may be sharded differently, and blocks never
        # straddle a shard.
        for start in range(0, n_pos, block):
            stop = min(start + block, n_pos)
            logits = np.stack([to_float64(c.raw_rows(start, stop)) for c in caps])  # [N, b, V]
            logp = np.empty_like(logits)
            # NaN/+inf rows (or rows with no finite logit) give NaN here; the row kernel then
            # rejects them with NonFiniteLogits, naming the position.
            with np.errstate(invalid="ignore", over="ignore"):
                for k in range(n_stacks):
                    logp[k] = log_softmax(logits[k])
                log_m = log_mean_prob(logp)
            top1[:, start:stop] = logits.argmax(axis=-1)
            n = stop - start
            if pool is None:
                rows(start, 0, n, logits, logp, log_m)
            else:
                cuts = np.linspace(0, n, min(n_threads, n) + 1).astype(int)
                futures = [pool.submit(rows, start, a, b, logits, logp, log_m) for a, b in zip(cuts, cuts[1:])]
                for f in futures:
                    f.result()  # re-raises NonFiniteLogits from a worker
            del logits, logp, log_m
            if advance is not None:
                advance(n)

    # Summed in position order after the fact: the result does not depend on the thread count.
    return build_report(paths, names, stacks, n_vocab, positions, kl_pos, to_centroid, top1, gap)


def build_report(
    paths: Sequence[str | Path],
    labels: list[str],
    stacks: list[dict[str, Any] | None],
    n_vocab: int,
    positions: np.ndarray,
    kl_pos: np.ndarray,
    to_centroid: np.ndarray,
    top1: np.ndarray,
    gap: int,
) -> ManyStackReport:
    """The :class:`ManyStackReport` from per-position values (``kl_pos`` [N, N, n] KL(P_i ‖ P_j) and
    ``to_centroid`` [N, n] KL(P_i ‖ M), nats; ``top1`` [N, n]), summed in position order so that local
    and distributed runs give identical reports."""
    n_stacks, n_pos = len(labels), int(positions.size)
    kl_sum = kl_pos.sum(axis=2)
    kl_max = kl_pos.max(axis=2) if n_pos else np.zeros_like(kl_sum)
    disagree = np.zeros((n_stacks, n_stacks))
    pairs = []
    for i in range(n_stacks):
        for j in range(i + 1, n_stacks):
            mask = top1[i] != top1[j]
            disagree[i, j] = disagree[j, i] = mask.mean() if n_pos else 0.0
            first = int(positions[mask][0]) if mask.any() else None
            pairs.append(PairDivergence(i, j, int(mask.sum()), first, _clusters(positions, mask, gap)))
    return ManyStackReport(
        labels=labels,
        paths=[str(p) for p in paths],
        stacks=stacks,
        n_vocab=n_vocab,
        positions=positions,
        pairwise_kl_mean=kl_sum / max(n_pos, 1),
        pairwise_kl_max=kl_max,
        pairwise_kl=kl_pos,
        top1_disagreement=disagree,
        kl_to_centroid=to_centroid,
        top1=top1,
        pairs=pairs,
        gap=gap,
    )
