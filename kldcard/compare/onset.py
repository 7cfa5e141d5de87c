"""Where disagreement begins and how it clusters: the numpy kernel (checks nothing; see
:mod:`kldcard.compare.depth` for the wrapper that validates, shapes and names the results).

**Onset test.** Two series over depth (tokens of left context): ``log KLD`` (forward
KL(P_ref ‖ P_cand), nats, floored at :data:`LOG_FLOOR`) and the top-1 disagreement rate. The early
part of the window (the first ``baseline_fraction`` of the depth points, at least
:data:`MIN_BASELINE` of them) sets a robust band: median and ``1.4826·MAD`` for log KLD, the
smoothed rate ``p = (d + 1/2)/(m + 1)`` and ``sqrt(p(1−p))`` for top-1. Each later point becomes a
score ``z`` (clipped to ``±CLIP``, so one spike alone cannot raise an alarm) and enters a one-sided
CUSUM ``S_t = max(0, S_{t−1} + z_t − k)`` with ``k = 1/2`` (tuned to a shift of one robust standard
deviation). An alarm is the first depth where either CUSUM exceeds ``h``; the onset is where that
excursion began (the last depth with ``S = 0`` before the alarm, plus one), the classic CUSUM
change-point estimate.

**Threshold for a stated false-alarm rate.** ``h`` is a high quantile of the same statistic (max
over depth of both CUSUMs, baseline re-estimated) on ``permutations`` series of length ``n`` built
from the early part alone by the circular block bootstrap (blocks of twice the Politis–White
length): "the rest of the window behaves like its beginning". That bootstrap null is narrower than
the truth (the baseline's own estimation error enters the real statistic more than its resampled
copy), so the quantile is ``1 − α/8``, the divisor chosen by the calibration on simulated AR(1) and
i.i.d. series in ``benchmarks/onset_calibration.py``, which measures the realised false-alarm rate
(at or below α there; figures in the README).

**Clusters.** Runs of consecutive scored positions of one window where the top-1 token differs or
the KLD exceeds the early part's 99th percentile; each with its start, end and share of the total
KLD.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from kldcard.compare.blocklength import politis_white

__all__ = ["CLIP", "DRIFT", "LOG_FLOOR", "ClusterRun", "OnsetFit", "cusum", "depth_series", "find_clusters",
           "onset_test"]

LOG_FLOOR = 1e-12  # nats: a KLD of exactly 0 (bit-identical rows) has no logarithm
CLIP = 4.0  # robust SDs: the most one point can add to a CUSUM is CLIP − DRIFT
DRIFT = 0.5  # k: half the shift (in robust SDs) the test is tuned to
MIN_BASELINE = 16  # depth points in the early part, at least
MIN_POINTS = 48  # fewer depth points: no test
_BATCH = 1 << 18  # resampled points per batch
ALPHA_DIVISOR = 8  # the baseline bootstrap null is narrower than the truth: chosen by the calibration
BLOCK_FACTOR = 2  # permuted blocks are this many Politis-White lengths: dependence kept a little longer


@dataclass(frozen=True)
class OnsetFit:
    """Outcome of :func:`onset_test`; indices are into the depth series."""

    alarm: bool
    onset_index: int | None
    alarm_index: int | None
    series: str | None  # "kld" or "top1": the CUSUM that crossed first
    statistic: float  # max over depth of both CUSUMs
    threshold: float  # h
    baseline_points: int  # m
    block_length: int
    permutations: int
    p_value: float  # share of permutations whose statistic reached this one's


@dataclass(frozen=True)
class ClusterRun:
    window: int
    first: int  # index into the per-token arrays
    last: int  # inclusive
    kld_sum: float
    n_top1_differs: int


def depth_series(depth: np.ndarray, kld: np.ndarray, differs: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(depths, mean log KLD, share of windows whose top-1 differs) at each distinct depth, in order."""
    d, inv = np.unique(depth, return_inverse=True)
    cnt = np.bincount(inv, minlength=len(d)).astype(np.float64)
    logk = np.log(np.maximum(kld, LOG_FLOOR))
    return d, np.bincount(inv, weights=logk, minlength=len(d)) / cnt, \
        np.bincount(inv, weights=differs.astype(np.float64), minlength=len(d)) / cnt


def cusum(y: np.ndarray) -> np.ndarray:
    """One-sided CUSUM of increments ``y`` along the last axis: ``S_t = max(0, S_{t−1} + y_t)``, as
    ``X_t − min(0, min_{s≤t} X_s)`` with ``X`` the cumulative sum (vectorised over leading axes)."""
    x = np.cumsum(y, axis=-1)
    return x - np.minimum(np.minimum.accumulate(x, axis=-1), 0.0)


def _scores(logk: np.ndarray, rate: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    """Clipped scores of the points after the first ``m`` (leading axes vectorised)."""
    base = logk[..., :m]
    med = np.median(base, axis=-1, keepdims=True)
    mad = 1.4826 * np.median(np.abs(base - med), axis=-1, keepdims=True)
    sd = np.std(base, axis=-1, keepdims=True)
    # MAD 0 (e.g. most early rows bit-identical): fall back to the SD, then to one nat
    scale = np.where(mad > 0, mad, np.where(sd > 0, sd, 1.0))
    zk = np.clip((logk[..., m:] - med) / scale, -CLIP, CLIP)
    p = (rate[..., :m].sum(axis=-1, keepdims=True) + 0.5) / (m + 1.0)
    zt = np.clip((rate[..., m:] - p) / np.sqrt(p * (1.0 - p)), -CLIP, CLIP)
    return zk, zt


def _statistic(logk: np.ndarray, rate: np.ndarray, m: int) -> tuple[np.ndarray, np.ndarray]:
    zk, zt = _scores(logk, rate, m)
    return cusum(zk - DRIFT), cusum(zt - DRIFT)


def _baseline_resamples(m: int, n: int, length: int, count: int, rng: np.random.Generator) -> np.ndarray:
    """``count`` index arrays of length ``n`` drawn from the first ``m`` indices only: circular blocks
    of ``length`` consecutive early points, placed end to end (the circular block bootstrap)."""
    nb = -(-n // length)
    starts = rng.integers(0, m, size=(count, nb, 1))
    idx = (starts + np.arange(length)[None, None, :]) % m
    return idx.reshape(count, -1)[:, :n]


def onset_test(logk: np.ndarray, rate: np.ndarray, *, alpha: float = 0.05, baseline_fraction: float = 0.25,
               permutations: int = 400, seed: int = 0) -> OnsetFit | None:
    """The onset test of the module docstring on one depth series (None when too short)."""
    n = len(logk)
    if n < MIN_POINTS:
        return None
    m = max(MIN_BASELINE, int(baseline_fraction * n))
    sk, st = _statistic(logk, rate, m)
    stat = float(max(sk.max(initial=0.0), st.max(initial=0.0)))
    length = int(min(max(1, BLOCK_FACTOR * politis_white(logk[:m]).block_length), max(1, m // 4)))
    rng = np.random.default_rng(seed)
    null = np.empty(permutations)
    step = max(1, _BATCH // n)  # resamples per batch: a few MB whatever the window length
    for a in range(0, permutations, step):
        idx = _baseline_resamples(m, n, length, min(step, permutations - a), rng)
        pk, pt = _statistic(logk[idx], rate[idx], m)
        null[a:a + len(idx)] = np.maximum(pk.max(axis=1), pt.max(axis=1))
    h = float(np.quantile(null, 1.0 - alpha / ALPHA_DIVISOR))
    p_value = float((1 + np.count_nonzero(null >= stat)) / (permutations + 1))
    over_k = np.flatnonzero(sk > h)
    over_t = np.flatnonzero(st > h)
    first_k = int(over_k[0]) if len(over_k) else math.inf
    first_t = int(over_t[0]) if len(over_t) else math.inf
    if first_k == math.inf and first_t == math.inf:
        return OnsetFit(False, None, None, None, stat, h, m, length, permutations, p_value)
    series, path, at = ("kld", sk, first_k) if first_k <= first_t else ("top1", st, first_t)
    zeros = np.flatnonzero(path[:at] == 0.0)
    start = int(zeros[-1]) + 1 if len(zeros) else 0
    return OnsetFit(True, m + start, m + int(at), series, stat, h, m, length, permutations, p_value)


def find_clusters(windows: np.ndarray, kld: np.ndarray, differs: np.ndarray, flagged: np.ndarray) -> list[ClusterRun]:
    """Maximal runs of consecutive flagged entries (per-token arrays in scored order) that stay in
    one window."""
    f = np.asarray(flagged, dtype=bool)
    if not f.any():
        return []
    brk = np.concatenate([[True], windows[1:] != windows[:-1]])
    starts = np.flatnonzero(f & (brk | ~np.concatenate([[False], f[:-1]])))
    ends = np.flatnonzero(f & (np.concatenate([brk[1:], [True]]) | ~np.concatenate([f[1:], [False]])))
    csum = np.concatenate([[0.0], np.cumsum(kld)])
    dsum = np.concatenate([[0], np.cumsum(differs.astype(np.int64))])
    return [ClusterRun(int(windows[a]), int(a), int(b), float(csum[b + 1] - csum[a]), int(dsum[b + 1] - dsum[a]))
            for a, b in zip(starts, ends)]
