"""KL divergence when one or both sides only have the top k of the vocabulary (sparse captures).

A serving API reports per position the k most likely ids with their log-probabilities; the rest
of the vocabulary is one known mass (the tail), its split over ids unknown. The divergence over the
full vocabulary is then not computable; what is computed depends on how the tail is treated, and
the result always says which treatment was used:

``lumped``
    Coarse-grain both distributions onto the ids known on both sides plus ONE tail bucket holding
    everything else (for top-k vs full: the top-k ids of the sparse side). Both sides' bucket masses
    are exact, so this is a true KL of a coarse-graining: by the data-processing inequality it never
    exceeds the full-vocabulary KL (a lower bound).
``union-renormalised``
    Restrict both distributions to the union of the known ids and renormalise each to sum 1, the
    tail discarded. An id missing from a sparse side is given the largest probability consistent
    with it not having been reported: the smallest reported probability of that side (capped by its
    tail mass). Neither bound: it ignores most of the tail mass and how it differs.

All divergences in nats, float64; forward = KL(P_ref ‖ P_cand), per position.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

import numpy as np
from pydantic import Field

from kldcard.capture.sparse import SparseCapture, open_any_capture, tail_logprob
from kldcard.compare.divergence import log_softmax
from kldcard.errors import CaptureMismatch, UsageError
from kldcard.schema import RecordModel

__all__ = ["TREATMENTS", "SparseRows", "TruncatedResult", "compare_truncated", "kl_truncated_rows", "needs_truncated",
           "sparse_rows"]

TREATMENTS = ("lumped", "union-renormalised")


@dataclass
class SparseRows:
    """Per position: known ids/log-probs (-1/-inf = empty) and the log tail mass; or full log-probs."""

    positions: np.ndarray
    ids: np.ndarray | None  # int [n, k]; None for a full side
    logprobs: np.ndarray | FullLogprobs  # [n, k] (sparse), or a full side read row by row; float64 nats
    tail: np.ndarray | None  # [n] float64
    n_vocab: int
    top_k: int | None  # None = full vocabulary


class FullLogprobs:
    """Log-probabilities of a full capture's rows, computed when a row is read: a top-k comparison
    touches one row at a time, so memory stays at one row however large the capture is."""

    def __init__(self, cap, rows: np.ndarray | None = None):
        self.cap = cap
        self.rows = np.arange(cap.n_positions) if rows is None else rows

    def __len__(self) -> int:
        return len(self.rows)

    def __getitem__(self, i):
        if isinstance(i, (int, np.integer)):
            r = int(self.rows[i])
            return log_softmax(self.cap.logits_f32(r, r + 1).astype(np.float64))[0]
        return FullLogprobs(self.cap, self.rows[i])


BLOCK_ROWS = 256  # rows per block when a full capture is cut to its own top k


def sparse_rows(cap, k: int | None = None) -> SparseRows:
    """Rows of a capture; a full capture is kept full (``k=None``) or cut to its own top ``k``."""
    if isinstance(cap, SparseCapture):
        ids, lps = cap.topk_ids.astype(np.int64), cap.topk_logprobs.astype(np.float64)
        if k is not None and k < ids.shape[1]:
            ids, lps = ids[:, :k], lps[:, :k]
            return SparseRows(cap.positions, ids, lps, tail_logprob(lps), cap.n_vocab, k)
        return SparseRows(cap.positions, ids, lps, cap.tail.copy(), cap.n_vocab, ids.shape[1])
    if k is None:
        return SparseRows(cap.positions, None, FullLogprobs(cap), None, cap.n_vocab, None)
    k = min(k, cap.n_vocab)
    ids_blocks, lps_blocks = [], []
    for r0 in range(0, cap.n_positions, BLOCK_ROWS):
        ls = log_softmax(cap.logits_f32(r0, min(r0 + BLOCK_ROWS, cap.n_positions)).astype(np.float64))
        part = np.argpartition(-ls, k - 1, axis=1)[:, :k]
        order = np.argsort(-np.take_along_axis(ls, part, 1), axis=1, kind="stable")
        ids_blocks.append(np.take_along_axis(part, order, 1))
        lps_blocks.append(np.take_along_axis(ls, ids_blocks[-1], 1))
    ids, lps = np.concatenate(ids_blocks), np.concatenate(lps_blocks)
    return SparseRows(cap.positions, ids, lps, tail_logprob(lps), cap.n_vocab, k)


def _known(side: SparseRows, r: int) -> dict[int, float]:
    ok = side.ids[r] >= 0
    return dict(zip(side.ids[r][ok].tolist(), side.logprobs[r][ok].tolist()))


def _probs(side: SparseRows, r: int, ids: np.ndarray, known: dict[int, float] | None) -> np.ndarray:
    """Probabilities of ``ids`` on one side; an id a sparse side did not report gets the smallest
    reported probability of that side, capped by its tail mass (it was just outside the top k at most)."""
    if side.ids is None:
        return np.exp(side.logprobs[r][ids])
    assert known is not None
    share = min(float(np.exp(min(known.values()))) if known else 0.0, float(np.exp(side.tail[r])))
    return np.array([np.exp(known[i]) if i in known else share for i in ids.tolist()], dtype=np.float64)


def _kl(p: np.ndarray, q: np.ndarray) -> float:
    m = p > 0
    with np.errstate(divide="ignore"):
        return float(np.sum(p[m] * (np.log(p[m]) - np.log(q[m]))))


def _check_treatment(treatment: str) -> None:
    if treatment not in TREATMENTS:
        raise UsageError(f"unknown tail treatment {treatment!r}; use one of {', '.join(TREATMENTS)}")


def kl_truncated_rows(ref: SparseRows, cand: SparseRows, treatment: str) -> np.ndarray:
    """Forward KL(P_ref ‖ P_cand) per row (nats, float64) under ``treatment``. Rows must align."""
    _check_treatment(treatment)
    out = np.empty(len(ref.positions))
    for r in range(len(out)):
        kr = _known(ref, r) if ref.ids is not None else None
        kc = _known(cand, r) if cand.ids is not None else None
        if kr is None and kc is None:  # both full: the exact full-vocabulary KL
            p, q = np.exp(ref.logprobs[r]), np.exp(cand.logprobs[r])
            out[r] = _kl(p, q)
            continue
        sets = [set(k) for k in (kr, kc) if k is not None]
        if treatment == "lumped":
            support = np.array(sorted(set.intersection(*sets)), dtype=np.int64)
            p, q = _probs(ref, r, support, kr), _probs(cand, r, support, kc)
            p = np.append(p, max(0.0, 1.0 - p.sum()))
            q = np.append(q, max(0.0, 1.0 - q.sum()))
        else:
            support = np.array(sorted(set.union(*sets)), dtype=np.int64)
            p, q = _probs(ref, r, support, kr), _probs(cand, r, support, kc)
            p, q = p / p.sum(), q / q.sum()
        out[r] = _kl(p, q)
    return out


class TruncatedResult(RecordModel):
    """A comparison in which at least one side is top-k. Divergences in nats, forward direction."""

    direction: str = "forward: KL(P_ref || P_cand), nats"
    treatment: str = Field(description="tail treatment: lumped | union-renormalised")
    reference_top_k: int | None = Field(description="None = full vocabulary")
    candidate_top_k: int | None
    n_vocab: int
    n_positions: int
    mean: float
    median: float
    p99: float
    max: float
    vocabulary: dict = Field(description="the card's vocabulary disclosure, filled from the captures")
    positions: list[int]
    per_position: list[float]


def vocabulary_disclosure(k_ref: int | None, k_cand: int | None, treatment: str) -> dict:
    """The card's ``vocabulary`` block (disclosure 8) for a truncated comparison."""
    k = min(x for x in (k_ref, k_cand) if x is not None)
    return {"truncation": "top-k", "top_k": k, "tail": treatment,
            "note": f"tail treatment {treatment}; reference top-k {k_ref or 'full'}, candidate top-k {k_cand or 'full'}"}


def compare_truncated(reference, candidate, *, treatment: str = "lumped", verify: bool = True) -> TruncatedResult:
    """Compare two captures of which at least one is sparse (top-k), over their common positions.

    Refuses captures of different token ids (:class:`CaptureMismatch`). A full capture is used in
    full; ``treatment`` says what happens to the unreported tail (see the module docstring).
    """
    _check_treatment(treatment)  # before reading any capture
    caps = [c if not isinstance(c, (str, os.PathLike)) else open_any_capture(c, verify=verify)
            for c in (reference, candidate)]
    a, b = caps
    if not np.array_equal(a.token_ids, b.token_ids):
        raise CaptureMismatch("the captures were fed different token ids; a divergence between them means nothing")
    ra, rb = sparse_rows(a), sparse_rows(b)
    if ra.top_k is None and rb.top_k is None:
        raise UsageError("both captures are full-vocabulary; use kldcard compare")
    common, ia, ib = np.intersect1d(ra.positions, rb.positions, return_indices=True)
    if len(common) == 0:
        raise CaptureMismatch("the captures share no positions")

    def take(s: SparseRows, idx: np.ndarray) -> SparseRows:
        return SparseRows(s.positions[idx], None if s.ids is None else s.ids[idx], s.logprobs[idx],
                          None if s.tail is None else s.tail[idx], s.n_vocab, s.top_k)

    per = kl_truncated_rows(take(ra, ia), take(rb, ib), treatment)
    return TruncatedResult(
        treatment=treatment, reference_top_k=ra.top_k, candidate_top_k=rb.top_k,
        n_vocab=max(a.n_vocab, b.n_vocab), n_positions=len(common), mean=float(per.mean()),
        median=float(np.median(per)), p99=float(np.percentile(per, 99)), max=float(per.max()),
        vocabulary=vocabulary_disclosure(ra.top_k, rb.top_k, treatment),
        positions=common.tolist(), per_position=per.tolist(),
    )


def render_note(res: TruncatedResult) -> str:
    """One sentence for a rendered card whenever a top-k capture is involved."""
    sides = [f"{name} top-{k}" for name, k in (("reference", res.reference_top_k), ("candidate", res.candidate_top_k))
             if k is not None]
    bound = ("a lower bound on the full-vocabulary KL (data-processing inequality)" if res.treatment == "lumped"
             else "neither a lower nor an upper bound on the full-vocabulary KL")
    return (f"KLD computed from truncated distributions ({', '.join(sides)}; tail treatment {res.treatment}): "
            f"it is {bound}; see benchmarks/results/truncation_bias.md for the size of the bias.")


def needs_truncated(reference: str | os.PathLike, candidate: str | os.PathLike, *, scheduler: bool = False,
                    align_vocab: bool = False, per_token: bool = False) -> bool:
    """Whether this pair is compared over a top-k vocabulary (a sparse capture on either side) rather
    than in full. Full-vocabulary-only options with a sparse side are refused, not ignored."""
    from kldcard.capture.sparse import is_sparse_capture

    if not (is_sparse_capture(reference) or is_sparse_capture(candidate)):
        return False
    if scheduler or align_vocab or per_token:
        raise UsageError("a top-k (sparse) capture is compared locally over its top-k entries; "
                         "--scheduler, --align-vocab and --per-token apply to full-vocabulary captures only")
    return True
