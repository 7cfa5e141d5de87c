"""Block length and long-run variance of a per-token series (Politis & White 2004, corrected by
Patton, Politis & White 2009), and Student-t quantiles without scipy.

Used by :mod:`kldcard.compare.bootstrap` when a capture has too few context windows to resample
whole windows: the circular block bootstrap then needs a block length, chosen from the data by the
rule in :func:`block_length_politis_white`. Pure numpy + the standard library.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

__all__ = ["BLOCK_LENGTH_RULE", "PolitisWhite", "block_length_politis_white", "long_run_variance_flat_top", "politis_white", "t_quantile"]

BLOCK_LENGTH_RULE = "politis-white-2004"
"""The name the result and the card use for the rule of :func:`block_length_politis_white`."""

def t_quantile(p: float, df: float) -> float:
    """Quantile ``p`` of Student's t with ``df`` degrees of freedom (``df = inf``: the normal).

    Cornish–Fisher expansion of t about the normal quantile (Abramowitz & Stegun 26.7.5) to
    order ``1/df⁴``; for ``df >= 3`` and ``0.9 <= p <= 0.999`` the error is below 1e-3 relative
    (below 1e-5 for ``df >= 19``). For ``df`` 1 and 2 the closed forms are used.
    """
    if not 0.0 < p < 1.0:
        raise ValueError(f"p must be in (0, 1), got {p}")
    if df <= 0:
        raise ValueError(f"df must be > 0, got {df}")
    if math.isinf(df):
        return NormalDist().inv_cdf(p)
    if df == 1:
        return math.tan(math.pi * (p - 0.5))
    if df == 2:
        a = 4.0 * p * (1.0 - p)
        return (2.0 * p - 1.0) * math.sqrt(2.0 / a)
    z = NormalDist().inv_cdf(p)
    z2 = z * z
    g1 = (z2 + 1.0) * z / 4.0
    g2 = ((5.0 * z2 + 16.0) * z2 + 3.0) * z / 96.0
    g3 = (((3.0 * z2 + 19.0) * z2 + 17.0) * z2 - 15.0) * z / 384.0
    g4 = ((((79.0 * z2 + 776.0) * z2 + 1482.0) * z2 - 1920.0) * z2 - 945.0) * z / 92160.0
    v = float(df)
    return z + g1 / v + g2 / v**2 + g3 / v**3 + g4 / v**4


def _autocovariances(y: np.ndarray, max_lag: int) -> np.ndarray:
    """``γ̂(k) = (1/n) Σ_{t} y_t y_{t+k}`` for k = 0..max_lag of a demeaned series (FFT, O(n log n))."""
    n = len(y)
    max_lag = min(max_lag, n - 1)
    if max_lag <= 64 or n <= 4096:
        return np.array([float(y[: n - k] @ y[k:]) / n for k in range(max_lag + 1)])
    size = 1 << int(math.ceil(math.log2(2 * n - 1)))
    f = np.fft.rfft(y, size)
    acov = np.fft.irfft(f * np.conj(f), size)[: max_lag + 1] / n
    return acov


def _flat_top(k: np.ndarray, m: int) -> np.ndarray:
    """Politis–Romano trapezoidal flat-top lag window λ(k/M): 1 for |t| <= 1/2, 2(1−|t|) to |t| = 1."""
    t = np.abs(k) / m
    return np.where(t <= 0.5, 1.0, np.where(t <= 1.0, 2.0 * (1.0 - t), 0.0))


@dataclass(frozen=True)
class PolitisWhite:
    block_length: int
    b_raw: float
    m_hat: int
    bandwidth: int
    lrv: float  # flat-top estimate of σ²_∞ = Σ_k γ(k)


def politis_white(x: np.ndarray) -> PolitisWhite:
    x = np.asarray(x, dtype=np.float64)
    n = len(x)
    if n < 4:
        return PolitisWhite(1, 1.0, 0, 0, float(np.var(x)) if n else math.nan)
    y = x - x.mean()
    log10n = math.log10(n)
    k_n = max(5, math.ceil(math.sqrt(log10n)))
    m_max = math.ceil(math.sqrt(n)) + k_n
    b_max = math.ceil(min(3.0 * math.sqrt(n), n / 3.0))
    acov = _autocovariances(y, m_max + k_n)
    if acov[0] <= 0.0:
        return PolitisWhite(1, 1.0, 0, 0, 0.0)
    rho = acov / acov[0]
    crit = 2.0 * math.sqrt(log10n / n)
    small = np.abs(rho[1:]) < crit  # small[j] <-> lag j+1
    m_hat = None
    # smallest m such that |ρ(m+1)|, ..., |ρ(m+K_N)| are all below the critical value
    if len(small) >= k_n:
        run = np.convolve(small.astype(np.int64), np.ones(k_n, dtype=np.int64), mode="valid")
        hits = np.flatnonzero(run == k_n)
        if len(hits):
            m_hat = int(hits[0])  # window starts at lag hits[0]+1, so m = hits[0]
    if m_hat is None:
        m_hat = m_max
    bw = min(2 * max(m_hat, 1), m_max, len(acov) - 1)  # a short series has fewer lags
    lags = np.arange(1, bw + 1)
    lam = _flat_top(lags, bw)
    g_hat = 2.0 * float(np.sum(lam * lags * acov[1 : bw + 1]))
    lrv = float(acov[0] + 2.0 * np.sum(lam * acov[1 : bw + 1]))
    if lrv <= 0.0:
        lrv = float(acov[0])
    d_cb = (4.0 / 3.0) * lrv**2
    b = (2.0 * g_hat**2 / d_cb) ** (1.0 / 3.0) * n ** (1.0 / 3.0)
    b = min(b, b_max)
    return PolitisWhite(max(1, int(math.ceil(b))), float(b), m_hat, bw, lrv)


def block_length_politis_white(x: np.ndarray) -> int:
    """Automatic block length for the circular / moving block bootstrap of the mean.

    Politis & White (2004), "Automatic block-length selection for the dependent bootstrap",
    with the correction of Patton, Politis & White (2009) (the circular/moving-block constant
    ``D_CB = (4/3) ĝ(0)²``). The rule, for a series of length ``n`` with sample autocovariances
    ``γ̂(k)`` and autocorrelations ``ρ̂(k)``:

    1. ``K_N = max(5, ceil(sqrt(log10 n)))``, ``m_max = ceil(sqrt n) + K_N``,
       ``b_max = ceil(min(3 sqrt n, n / 3))``.
    2. ``m̂`` = the smallest ``m >= 0`` such that ``|ρ̂(m+k)| < 2 sqrt(log10 n / n)`` for all
       ``k = 1..K_N`` (``m̂ = m_max`` if there is none); bandwidth ``M = min(2 max(m̂, 1), m_max)``.
    3. With the flat-top lag window ``λ(t) = 1`` for ``|t| <= 1/2``, ``2(1 − |t|)`` for
       ``1/2 < |t| <= 1``, 0 beyond:
       ``Ĝ = Σ_{|k|<=M} λ(k/M) |k| γ̂(k)``, ``ĝ(0) = Σ_{|k|<=M} λ(k/M) γ̂(k)``,
       ``D̂_CB = (4/3) ĝ(0)²``.
    4. ``b̂ = (2 Ĝ² / D̂_CB)^{1/3} n^{1/3}``, capped at ``b_max``; returned as ``ceil(b̂)``, at least 1.

    A series with no detectable autocorrelation gets 1 (the i.i.d. bootstrap). Constant or very
    short (< 4) series get 1.
    """
    return politis_white(np.asarray(x, dtype=np.float64)).block_length


def long_run_variance_flat_top(x: np.ndarray) -> float:
    """The flat-top lag-window estimate ``ĝ(0) = Σ_{|k|<=M} λ(k/M) γ̂(k)`` of the long-run variance
    ``σ²_∞ = lim n·Var(mean)`` with the Politis–White bandwidth (falls back to ``γ̂(0)`` when the
    flat-top sum is not positive). ``Var(mean) ≈ σ²_∞ / n``."""
    return politis_white(np.asarray(x, dtype=np.float64)).lrv
