"""Helpers for the engine/capture tests: a float64 KL between two captures.

The compare module is owned by another helper; this small independent implementation keeps the
engine tests self-contained and doubles as a cross-check of it. Divergences are in nats, forward
direction KL(P_ref || P_cand), full vocabulary, averaged over the captured positions.
"""

from __future__ import annotations

import numpy as np

from kldcard.capture.store import Capture, to_float64


def log_softmax64(z: np.ndarray) -> np.ndarray:
    z = np.asarray(z, dtype=np.float64)
    z = z - z.max(axis=-1, keepdims=True)
    return z - np.log(np.exp(z).sum(axis=-1, keepdims=True))


def kl_per_position(ref: Capture, cand: Capture, block: int = 64) -> np.ndarray:
    """Forward KL(P_ref || P_cand) in nats at each captured position (float64)."""
    assert ref.manifest.token_ids_sha256 == cand.manifest.token_ids_sha256, "token ids differ"
    assert np.array_equal(ref.positions, cand.positions), "positions differ"
    assert ref.n_vocab == cand.n_vocab
    out = np.empty(ref.n_positions, dtype=np.float64)
    for i0 in range(0, ref.n_positions, block):
        i1 = min(i0 + block, ref.n_positions)
        lp = log_softmax64(to_float64(ref.raw_rows(i0, i1)))
        lq = log_softmax64(to_float64(cand.raw_rows(i0, i1)))
        out[i0:i1] = (np.exp(lp) * (lp - lq)).sum(axis=-1)
    return out


def mean_kl(ref: Capture, cand: Capture) -> float:
    """Token-mean forward KL(P_ref || P_cand) in nats over the captured positions."""
    return float(kl_per_position(ref, cand).mean())


def top1_prob(cap: Capture) -> np.ndarray:
    """Top-1 probability at each captured position."""
    return np.exp(log_softmax64(to_float64(cap.raw_rows(0, cap.n_positions))).max(axis=-1))
