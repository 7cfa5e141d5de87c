"""Where the divergence lives: summaries by the reference's confidence and label-in-top-k.

A candidate's divergence matters differently where the reference is sure of the next token than
where it spreads its mass, so the forward KL(P_ref ‖ P_cand) (nats) and the top-1 agreement are
also summarised over buckets of the reference's top-1 probability. Label-in-top-k is the share of
positions whose actual next token is among a side's k most likely tokens, for k = 1..5, as
exllamav3's ``model_diff`` reports it.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from pydantic import Field

from kldcard.schema import RecordModel

__all__ = ["CONFIDENCE_EDGES", "ConfidenceStats", "TopKStats", "confidence_stats", "label_in_top_k"]

CONFIDENCE_EDGES: tuple[float, ...] = (0.0, 0.25, 0.5, 0.75, 0.95, 1.0)
"""Buckets [0, .25), [.25, .5), [.5, .75), [.75, .95), [.95, 1] of the reference's top-1 probability."""


class ConfidenceStats(RecordModel):
    """Scored positions whose reference top-1 probability is in [low, high) ([low, 1] for the last)."""

    low: float
    high: float
    n: int
    forward_kl_mean: float | None = Field(None, description="mean KL(P_ref ‖ P_cand) in the bucket, nats")
    top1_agreement: float | None = None


class TopKStats(RecordModel):
    """Share of positions with a next token whose label is in each side's top k."""

    k: int
    reference: float
    candidate: float


def confidence_stats(p_top_ref: np.ndarray, forward: np.ndarray, agree: np.ndarray,
                     edges: Sequence[float] = CONFIDENCE_EDGES) -> list[ConfidenceStats]:
    """Per-bucket mean forward KL and top-1 agreement; every bucket is listed (n may be 0).
    Positions without a reference probability (NaN: a row that was not computed) are left out."""
    p = np.asarray(p_top_ref, dtype=np.float64)
    ok = ~np.isnan(p)
    out = []
    for i, (a, b) in enumerate(zip(edges, edges[1:])):
        last = i == len(edges) - 2
        sel = ok & (p >= a) & ((p <= b) if last else (p < b))
        n = int(sel.sum())
        out.append(ConfidenceStats(
            low=float(a), high=float(b), n=n,
            forward_kl_mean=float(np.mean(forward[sel])) if n else None,
            top1_agreement=float(np.mean(agree[sel])) if n else None,
        ))
    return out


def label_in_top_k(rank_ref: np.ndarray, rank_cand: np.ndarray, ks: Sequence[int] = (1, 2, 3, 4, 5)) -> list[TopKStats]:
    """``rank_*``: entries ranked above the actual next token (-1: no next token, left out)."""
    has = (np.asarray(rank_ref) >= 0) & (np.asarray(rank_cand) >= 0)
    if not has.any():
        return []
    rr, rc = np.asarray(rank_ref)[has], np.asarray(rank_cand)[has]
    return [TopKStats(k=k, reference=float(np.mean(rr < k)), candidate=float(np.mean(rc < k))) for k in ks]
