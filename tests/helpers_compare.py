"""Shared helpers for the divergence/compare tests: an mpmath reference and capture builders."""

from __future__ import annotations

from pathlib import Path

import mpmath as mp
import numpy as np

from kldcard.capture.store import create_capture_from_arrays


def mp_reference(z_ref: np.ndarray, z_cand: np.ndarray, dps: int = 40) -> dict[str, float]:
    """Forward/reverse KL and JS (nats) of softmax(z_ref), softmax(z_cand) in 40-digit arithmetic.

    Entries that are -inf on a side have probability exactly 0 there (0·log 0 = 0)."""
    with mp.workdps(dps):
        zr = [None if np.isneginf(x) else mp.mpf(float(x)) for x in z_ref]
        zc = [None if np.isneginf(x) else mp.mpf(float(x)) for x in z_cand]
        lse_r = mp.log(mp.fsum(mp.exp(x) for x in zr if x is not None))
        lse_c = mp.log(mp.fsum(mp.exp(x) for x in zc if x is not None))
        fwd, rev, js = [], [], []
        inf_f = inf_r = False
        for a, b in zip(zr, zc):
            lp = None if a is None else a - lse_r
            lq = None if b is None else b - lse_c
            p = mp.mpf(0) if lp is None else mp.exp(lp)
            q = mp.mpf(0) if lq is None else mp.exp(lq)
            m = (p + q) / 2
            if lp is not None:
                if lq is None:
                    inf_f = True
                else:
                    fwd.append(p * (lp - lq))
                js.append(p * (lp - mp.log(m)) / 2)
            if lq is not None:
                if lp is None:
                    inf_r = True
                else:
                    rev.append(q * (lq - lp))
                js.append(q * (lq - mp.log(m)) / 2)
        return {
            "forward": float("inf") if inf_f else float(mp.fsum(fwd)),
            "reverse": float("inf") if inf_r else float(mp.fsum(rev)),
            "js": float(mp.fsum(js)),
        }


def mp_token(z: np.ndarray, target: int, dps: int = 40) -> float:
    """Probability of ``target`` under softmax(z)."""
    with mp.workdps(dps):
        lse = mp.log(mp.fsum(mp.exp(mp.mpf(float(x))) for x in z if not np.isneginf(x)))
        return float(mp.exp(mp.mpf(float(z[target])) - lse))


def close(value: float, reference: float, rel: float = 1e-12, abs_: float = 1e-18) -> bool:
    if np.isinf(reference):
        return bool(np.isinf(value) and value > 0)
    return abs(value - reference) <= max(rel * abs(reference), abs_)


def logits_pair(rng: np.random.Generator, n: int, v: int, sigma: float, dtype=np.float32):
    """LLM-like reference rows and a candidate = reference + N(0, sigma) noise, exactly representable
    in ``dtype``."""
    z = rng.normal(size=(n, v)) * 2.0
    z[:, : min(8, v)] += 6.0
    zc = z + rng.normal(size=(n, v)) * sigma
    return z.astype(dtype), zc.astype(dtype)


META = {"model": {"name": "tiny", "format": "npy"}, "positions": {"scheme": "all"}}


def capture_pair(tmp: Path, z_ref: np.ndarray, z_cand: np.ndarray, *, ids=None, positions=None, dtype="f32",
                 names=("ref", "cand"), shard_positions=(4096, 4096)):
    n = len(z_ref)
    pos = np.arange(n) if positions is None else np.asarray(positions)
    ids = np.arange(int(pos[-1]) + 2) % 97 if ids is None else ids
    # the manifest says which positions it holds (compare checks that against the stored ones)
    scheme = {"scheme": "all"} if len(pos) >= len(ids) - 2 else {"scheme": "explicit"}
    meta = {**META, "positions": scheme}
    a = create_capture_from_arrays(tmp / names[0], z_ref, pos, ids, {**meta, "model": {"name": names[0]}},
                                   dtype=dtype, shard_positions=shard_positions[0])
    b = create_capture_from_arrays(tmp / names[1], z_cand, pos, ids, {**meta, "model": {"name": names[1]}},
                                   dtype=dtype, shard_positions=shard_positions[1])
    return a, b
