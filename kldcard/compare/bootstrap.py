"""Uncertainty of a token-mean when the tokens are not independent.

Per-token divergences come in clusters (a hard passage, a long-context failure) and are
correlated along the text, so the i.i.d. standard error and the per-token percentile bootstrap
(``--uncertainty iid``) are too narrow — badly so when the autocorrelation is strong.
This module resamples *blocks* instead of tokens:

* ``cluster``: when the caller knows the natural units (context windows / chunks, one id per
  value) and there are at least ``min_clusters`` (20) of them, whole units are drawn with
  replacement and the resampled statistic is the mean of their concatenation, i.e. the ratio
  estimator ``sum(S_j*) / sum(c_j*)`` of the drawn units' sums and counts. Units may differ in
  size. Nothing is assumed about dependence inside a unit; units are assumed independent.
* ``circular-block``: one long series (or too few units): the moving-block bootstrap in its
  circular form, the circular block bootstrap of
  Politis & Romano (1992) with the automatic block length of Politis & White (2004) as corrected
  by Patton, Politis & White (2009) (:func:`block_length_politis_white`). Circular rather than
  moving blocks so that the bootstrap mean is centred exactly on the sample mean (no edge
  down-weighting); the two have the same optimal block length.
* ``iid``: the per-token percentile bootstrap of kldcard 0.1 (the same draws for the same seed),
  kept by name for comparison: it treats every token as independent.

Interval types (``interval=``), chosen by the calibration study in
``benchmarks/uncertainty_coverage.py`` (figures in the README):

* ``"studentized"`` (default for the block methods): bootstrap-t. Each resample is studentised
  by its own block-based SE (cluster: the linearisation SE of the ratio estimator,
  ``G/(G−1) Σ (S_j − m c_j)² / (Σ c_j)²`` over the drawn units; circular-block: the
  non-overlapping block-means SE of the resample's full blocks, Götze & Künsch 1996), the
  sample by the same formula (overlapping blocks for circular-block), and the interval is
  ``[mean − q_{1−α/2}·SE_hat, mean − q_{α/2}·SE_hat]`` with ``q`` the quantiles of the t*. It
  corrects for the skewness of heavy-tailed, bursty values (second-order accurate) where every
  symmetric or percentile interval under-covers; in the lognormal AR cases it matches ``"t"``.
* ``"t"``: ``mean ± t_{df, (1+level)/2} · SE`` with ``SE`` the
  bootstrap standard deviation of the resampled means. For ``cluster`` the SE is multiplied by
  ``sqrt(G/(G−1))`` (the cluster bootstrap variance is the linearisation variance times
  ``(G−1)/G``) and ``df = G − 1``; for ``circular-block`` ``df = k − 1`` with
  ``k = ceil(n / block_length)`` blocks per resample.
* ``"percentile"``: quantiles of the resampled means (under-covers with few blocks: it inherits
  the ``(G−1)/G`` variance deficit and uses normal rather than t tails).
* ``"basic"``: ``2·mean − quantiles``.

Everything is numpy (and the standard library); block sums come from prefix sums, so a resample
costs one gather per block, never one per token, and no n × resamples matrix is built.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from kldcard.compare.blocklength import long_run_variance_flat_top, politis_white, t_quantile

__all__ = ["MIN_CLUSTERS", "MeanCI", "block_bootstrap_intervals", "block_bootstrap_mean_ci"]

Method = Literal["auto", "cluster", "circular-block", "iid"]
Interval = Literal["auto", "t", "percentile", "basic", "studentized"]

MIN_CLUSTERS = 20
"""Fewest distinct block ids for which ``method="auto"`` resamples whole blocks."""

_GATHER_BUDGET = 1 << 22  # indices drawn per vectorised batch (~16 MB of int32)


def _index_dtype(n: int) -> type:
    return np.int32 if n < 2**31 - 1 else np.int64



@dataclass(frozen=True)
class MeanCI:
    """Interval for a token-mean.

    ``n_eff`` (effective sample size) is defined as ``n_eff = s² / se²`` where ``s²`` is the
    sample variance of the values (``ddof=1``) and ``se²`` the variance of the mean that the
    interval uses (the bootstrap variance of the resampled means, with the ``G/(G−1)`` factor
    for ``cluster``). Equivalently ``n_eff = n · var_iid / var_block`` with
    ``var_iid = s²/n`` the i.i.d. variance of the mean and ``var_block = se²``. Independent values
    give ``n_eff ≈ n``; positive autocorrelation gives ``n_eff < n``. ``n_eff_lrv`` is the same
    ratio with ``se² = ĝ(0)/n`` from the flat-top long-run variance (a bootstrap-free cross-check;
    None for ``cluster``/``iid``).
    """

    method: str
    interval: str
    level: float
    resamples: int
    seed: int
    n: int
    mean: float
    lo: float
    hi: float
    se: float
    se_iid: float
    n_eff: float
    block_length: int | None = None
    n_blocks: int | None = None
    df: float | None = None
    n_eff_lrv: float | None = None

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


def _prepare(values: np.ndarray, blocks: np.ndarray | None) -> tuple[np.ndarray, np.ndarray | None]:
    x = np.asarray(values, dtype=np.float64).ravel()
    b = None if blocks is None else np.asarray(blocks).ravel()
    if b is not None and len(b) != len(x):
        raise ValueError(f"blocks has {len(b)} entries for {len(x)} values")
    keep = ~np.isnan(x)
    if not keep.all():
        x = x[keep]
        b = None if b is None else b[keep]
    if not np.all(np.isfinite(x)):
        raise ValueError("values contain ±inf: the mean is infinite and has no interval")
    return x, b


def _interval_bounds(
    mean: float, boot: np.ndarray, se: float, df: float, level: float, interval: str,
    tstar: np.ndarray | None = None, se_hat: float | None = None,
) -> tuple[float, float]:
    alpha = (1.0 - level) / 2.0
    if interval == "t":
        q = t_quantile(1.0 - alpha, df)
        return mean - q * se, mean + q * se
    if interval == "percentile":
        lo, hi = np.quantile(boot, [alpha, 1.0 - alpha])
        return float(lo), float(hi)
    if interval == "basic":
        lo, hi = np.quantile(boot, [alpha, 1.0 - alpha])
        return float(2 * mean - hi), float(2 * mean - lo)
    if interval == "studentized":
        assert tstar is not None and se_hat is not None
        t = tstar[np.isfinite(tstar)]
        if len(t) < 2:  # every resample has zero spread (e.g. one value repeated): no t-statistic
            lo, hi = np.quantile(boot, [alpha, 1.0 - alpha])
            return float(lo), float(hi)
        qlo, qhi = np.quantile(t, [alpha, 1.0 - alpha])
        return float(mean - qhi * se_hat), float(mean - qlo * se_hat)
    raise ValueError(f"unknown interval {interval!r}")


def _cluster_boot(
    x: np.ndarray, blocks: np.ndarray, resamples: int, rng: np.random.Generator, studentize: bool,
) -> tuple[np.ndarray, np.ndarray | None, float, int]:
    """Resampled means (and bootstrap-t values) of the ratio estimator over whole clusters."""
    _, inv = np.unique(blocks, return_inverse=True)
    g = int(inv.max()) + 1
    mean = float(x.mean())
    y = x - mean
    s = np.bincount(inv, weights=y, minlength=g)
    c = np.bincount(inv, minlength=g).astype(np.float64)
    boot = np.empty(resamples)
    tstar = np.empty(resamples) if studentize else None
    if studentize:
        ss, sc, cc = s * s, s * c, c * c
    step = max(1, _GATHER_BUDGET // g)
    for a in range(0, resamples, step):
        e = min(a + step, resamples)
        idx = rng.integers(0, g, size=(e - a, g), dtype=_index_dtype(g))
        num = s[idx].sum(axis=1)
        den = c[idx].sum(axis=1)
        m = num / den  # resampled mean − sample mean
        boot[a:e] = m
        if studentize:
            q = ss[idx].sum(axis=1) - 2.0 * m * sc[idx].sum(axis=1) + m * m * cc[idx].sum(axis=1)
            v = g / (g - 1.0) * np.maximum(q, 0.0) / den**2
            with np.errstate(divide="ignore", invalid="ignore"):
                tstar[a:e] = m / np.sqrt(v)
    # the sample's own linearisation SE (for bootstrap-t)
    v_hat = g / (g - 1.0) * float(np.sum(s * s)) / float(c.sum()) ** 2
    return boot + mean, tstar, math.sqrt(v_hat), g


def _circular_boot(
    x: np.ndarray, length: int, resamples: int, rng: np.random.Generator, studentize: bool,
) -> tuple[np.ndarray, np.ndarray | None, float, int]:
    """Circular block bootstrap: k = ceil(n/l) blocks per resample, the last one cut to n − (k−1)l
    values so every resample has exactly n values. Block sums from prefix sums of the wrapped,
    demeaned series."""
    n = len(x)
    mean = float(x.mean())
    y = x - mean
    l = max(1, min(int(length), n))
    k = -(-n // l)
    r = n - (k - 1) * l  # length of the last (partial) block, 1..l
    wrapped = np.concatenate([y, y[: l - 1]]) if l > 1 else y
    csum = np.concatenate([[0.0], np.cumsum(wrapped)])
    full = csum[l : l + n] - csum[:n]  # sum of the block of length l starting at s (circularly)
    part = csum[r : r + n] - csum[:n]  # sum of the block of length r starting at s
    boot = np.empty(resamples)
    tstar = np.empty(resamples) if studentize else None
    full_sq = full * full if studentize else None
    step = max(1, _GATHER_BUDGET // k)
    for a in range(0, resamples, step):
        e = min(a + step, resamples)
        st = rng.integers(0, n, size=(e - a, k), dtype=_index_dtype(n))
        tot_full = full[st[:, : k - 1]].sum(axis=1) if k > 1 else np.zeros(e - a)
        tot = tot_full + part[st[:, k - 1]]
        m = tot / n
        boot[a:e] = m
        if studentize:
            if k > 1:
                # σ̂*² = (1/(k−1)) Σ_i (T_i − l·m*)² / l over the k−1 full blocks of the resample
                q = full_sq[st[:, : k - 1]].sum(axis=1) - 2.0 * l * m * tot_full + (k - 1) * (l * m) ** 2
                v = np.maximum(q, 0.0) / ((k - 1) * l) / n
                with np.errstate(divide="ignore", invalid="ignore"):
                    tstar[a:e] = m / np.sqrt(v)
            else:
                tstar[a:e] = np.nan
    # the sample's own overlapping-block SE: σ̂² = (1/n) Σ_s (T_s)² / l  (T_s block sums of y)
    v_hat = float(np.mean(full * full)) / l / n
    return boot + mean, tstar, math.sqrt(v_hat), k


def _iid_boot(x: np.ndarray, resamples: int, rng: np.random.Generator) -> np.ndarray:
    """Per-token percentile bootstrap draws (kldcard 0.1's, same seed, same draws)."""
    n = len(x)
    means = np.empty(resamples)
    chunk = max(1, (4 << 20) // n)
    for a in range(0, resamples, chunk):
        b = min(a + chunk, resamples)
        idx = rng.integers(0, n, size=(b - a, n))
        means[a:b] = x[idx].mean(axis=1)
    return means


def block_bootstrap_mean_ci(
    values: np.ndarray,
    *,
    blocks: np.ndarray | None = None,
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
    method: Method = "auto",
    interval: Interval = "auto",
    block_length: int | None = None,
    min_clusters: int = MIN_CLUSTERS,
    max_blocks_per_resample: int = 20_000,
) -> MeanCI:
    """Confidence interval for the mean of ``values`` that respects dependence between values.

    ``values``: per-token values (NaN dropped, with their block ids; ±inf raises ValueError).
    ``blocks``: optional int array, one id per value — the context window / chunk each value
    belongs to (units assumed independent of each other; ids need not be sorted, values of one
    unit are normally contiguous).

    ``method``:

    * ``"auto"``: ``"cluster"`` when ``blocks`` is given with >= ``min_clusters`` (20) distinct
      ids, else ``"circular-block"``.
    * ``"cluster"``: draw the G units with replacement; the resampled statistic is
      ``Σ S_j* / Σ c_j*`` (unit sums over unit counts). Needs >= 2 units.
    * ``"circular-block"``: circular block bootstrap over the series in its given order with
      ``block_length`` (default :func:`block_length_politis_white`; raised, if needed, to
      ``ceil(n / max_blocks_per_resample)`` so that one resample costs at most that many gathers —
      a longer-than-optimal block only lowers the bias of the variance, and with >= 20 000 blocks
      per resample its extra variance is negligible).
    * ``"iid"``: per-token percentile bootstrap (the old behaviour; O(n × resamples)).

    ``interval``: ``"auto"`` = ``"studentized"`` (bootstrap-t) for cluster / circular-block and
    ``"percentile"`` for iid; see the module docstring for ``"studentized"``, ``"t"``,
    ``"percentile"``, ``"basic"``.

    Cost: cluster O(G × resamples); circular-block O(n log n + (n / l) × resamples); memory
    bounded by batches of ~4M indices. Deterministic for a given ``seed``.
    """
    iv = interval
    if iv == "auto":
        iv = "percentile" if method == "iid" else "studentized"
    return block_bootstrap_intervals(
        values, blocks=blocks, level=level, resamples=resamples, seed=seed, method=method,
        intervals=(iv,), block_length=block_length, min_clusters=min_clusters,
        max_blocks_per_resample=max_blocks_per_resample,
    )[iv]


def block_bootstrap_intervals(
    values: np.ndarray,
    *,
    blocks: np.ndarray | None = None,
    level: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
    method: Method = "auto",
    intervals: Sequence[str] = ("studentized", "t", "percentile", "basic"),
    block_length: int | None = None,
    min_clusters: int = MIN_CLUSTERS,
    max_blocks_per_resample: int = 20_000,
) -> dict[str, MeanCI]:
    """Several interval types from ONE set of resamples (same draws): interval name → MeanCI.
    Arguments as :func:`block_bootstrap_mean_ci`."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if resamples < 2:
        raise ValueError("resamples must be >= 2")
    for iv in intervals:
        if iv not in ("t", "percentile", "basic", "studentized"):
            raise ValueError(f"unknown interval {iv!r}")
    x, b = _prepare(values, blocks)
    n = len(x)
    if n < 2:
        raise ValueError(f"need at least 2 values, got {n}")
    n_ids = None if b is None else len(np.unique(b))
    if method == "auto":
        method = "cluster" if (n_ids is not None and n_ids >= min_clusters) else "circular-block"
    if method == "iid" and "studentized" in intervals:
        raise ValueError("the studentized interval is for the block methods")
    rng = np.random.default_rng(seed)
    mean = float(x.mean())
    s2 = float(np.var(x, ddof=1))
    if s2 == 0.0:  # constant values (identical captures): the mean is exact, the interval a point
        return {iv: MeanCI(method=method if method != "auto" else "circular-block", interval=iv, level=level,
                           resamples=resamples, seed=seed, n=n, mean=mean, lo=mean, hi=mean, se=0.0, se_iid=0.0,
                           n_eff=float(n), df=None) for iv in intervals}
    se_iid = math.sqrt(s2 / n)
    studentize = "studentized" in intervals
    l_out = g_out = None
    n_eff_lrv = None
    tstar = None
    se_hat = None
    if method == "cluster":
        if b is None or n_ids < 2:
            raise ValueError("method='cluster' needs blocks with at least 2 distinct ids")
        boot, tstar, se_hat, g = _cluster_boot(x, b, resamples, rng, studentize)
        se = float(np.std(boot, ddof=1)) * math.sqrt(g / (g - 1.0))
        df = float(g - 1)
        g_out = g
    elif method == "circular-block":
        pw = politis_white(x) if block_length is None else None
        l = int(block_length) if block_length is not None else pw.block_length
        l = max(l, -(-n // max_blocks_per_resample), 1)
        l = min(l, n)
        boot, tstar, se_hat, k = _circular_boot(x, l, resamples, rng, studentize)
        se = float(np.std(boot, ddof=1))
        df = float(max(k - 1, 1))
        l_out, g_out = l, k
        lrv = pw.lrv if pw is not None else long_run_variance_flat_top(x)
        n_eff_lrv = s2 / (lrv / n) if lrv > 0 else math.inf
    elif method == "iid":
        boot = _iid_boot(x, resamples, rng)
        se = float(np.std(boot, ddof=1))
        df = math.inf
        l_out = 1
    else:
        raise ValueError(f"unknown method {method!r}")
    n_eff = s2 / se**2 if se > 0 else math.inf
    out = {}
    for iv in intervals:
        lo, hi = _interval_bounds(mean, boot, se, df, level, iv, tstar, se_hat)
        out[iv] = MeanCI(
            method=method, interval=iv, level=level, resamples=resamples, seed=seed, n=n,
            mean=mean, lo=lo, hi=hi, se=se, se_iid=se_iid, n_eff=n_eff, block_length=l_out,
            n_blocks=g_out, df=df, n_eff_lrv=n_eff_lrv,
        )
    return out
