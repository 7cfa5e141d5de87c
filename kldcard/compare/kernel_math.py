r"""The float64 arithmetic of one vocabulary entry for :mod:`kldcard.compare.kernel`: a stored logit
widened exactly, exp, expm1 and log1p written out, the log-ratio u = log(p/q) and the entry's terms
φ, ψ, χ of the forward KL, reverse KL and JS sums (nats).

Why exp, expm1 and log1p are written out here
---------------------------------------------
LLVM vectorises a loop only if every call in it has a vector form; libm's scalar ``exp`` has none
(numba has no SVML on Linux wheels), so the loops would run one entry at a time, slower than
numpy. The polynomial versions below vectorise and are as accurate as libm for this use (max error
measured against 40-digit mpmath: exp 1 ulp, expm1 2 ulp, log1p 3 ulp; tests/test_kernel.py).

Flags
-----
These functions compile with FMA contraction only (``_EXACT``); the sum loops that call them may also
reassociate (:data:`SUM_FLAGS`). Why the two differ: the module docstring of :mod:`kldcard.compare.kernel`.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numba import types
from numba.extending import overload

TAU = 0.03  # |u| below this uses the Taylor series (closed forms cancel there)

SUM_FLAGS = {"reassoc", "contract", "nsz"}  # loops whose only reordering is in their sums
_EXACT = {"contract"}  # elementary functions: FMA contraction only (it only removes roundings)
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # ln 2 split so that k·_LN2_HI is exact for |k| < 2^20
_LN2_LO = 1.90821492927058770002e-10
_SQRT_HALF_BITS = 0x3FE6A09E667F3BCD


def widen(v):  # pragma: no cover - only its numba overload is ever called
    raise NotImplementedError


@overload(widen, inline="always")
def _widen(v):
    """One stored logit as float64, exactly: BF16 bits are the top half of a float32."""
    if isinstance(v, types.Integer):
        return lambda v: np.float64(np.uint32(np.uint32(v) << np.uint32(16)).view(np.float32))
    return lambda v: np.float64(v)


# Not cached on their own: rows() in kldcard.compare.kernel is (see the note on caching there).
_jit_exact = nb.njit(fastmath=_EXACT, error_model="numpy")


@_jit_exact
def _exp_parts(x):
    """x clamped to [-708, 710] = k·ln2 + r with |r| <= ln2/2: (2^k, expm1(r)); 2^1024 is +inf."""
    xc = min(max(x, -708.0), 710.0)
    kf = np.floor(xc * _LOG2E + 0.5)
    r = (xc - kf * _LN2_HI) - kf * _LN2_LO
    # expm1(r) = r + r²·P(r): P is the degree-9 Chebyshev fit to (expm1(r) − r)/r² on |r| <= ln2/2
    # (relative error 4e-17 with these double coefficients: scripts/kernel_coefficients.py)
    p = 2.5100375832561234e-08
    p = p * r + 2.7620075879983367e-07
    p = p * r + 2.7557268480310024e-06
    p = p * r + 2.4801521322368692e-05
    p = p * r + 0.00019841269863040545
    p = p * r + 0.0013888888917196719
    p = p * r + 0.008333333333330065
    p = p * r + 0.041666666666624164
    p = p * r + 0.16666666666666669
    p = p * r + 0.5000000000000001
    q = r + (r * r) * p
    return np.int64((np.int64(kf) + 1023) << 52).view(np.float64), q


@_jit_exact
def vexp(x):
    """exp(x) for x in [-708, 709]: 1 ulp. Outside, no promise (below -708 it returns exp(-708)):
    the kernel takes exp only of z_cand − max, after checking that the range is below 700 nats."""
    s, q = _exp_parts(x)
    return (1.0 + q) * s


@_jit_exact
def vexpm1(x):
    """expm1(x), relatively accurate near 0: 2 ulp on [-708, 709]; -1 below (exactly, as rounded),
    inf above 709 (a row with such a gap takes the robust path)."""
    s, q = _exp_parts(x)
    v = s * q + (s - 1.0)
    return v if x <= 709.0 else np.inf


@_jit_exact
def vlog1p(y):
    """log1p(y) for finite y > -1 (not subnormal): 3 ulp (log of m in [√½, √2) by the atanh series)."""
    x = 1.0 + y
    bits = np.float64(x).view(np.int64)
    k = (bits - _SQRT_HALF_BITS) >> 52
    m = np.int64(bits - (k << 52)).view(np.float64)
    # k == 0: 1 + y in [√½, √2) and f = y exactly, so the rounding of 1 + y never matters near 0;
    # elsewhere it is below 2^-53 of 1 + y while |log1p(y)| > 0.34: half an ulp at most
    f = y if k == 0 else m - 1.0
    s = f / (2.0 + f)
    z = s * s  # <= 0.0295
    # log m = 2·atanh(s) = 2s + s·z·P(z): P is the degree-6 Chebyshev fit on [0, 0.0295]
    # (relative error 5e-18 with these double coefficients: scripts/kernel_coefficients.py)
    p = 0.14616585424888623
    p = p * z + 0.15331710618210773
    p = p * z + 0.18182889455674947
    p = p * z + 0.22222211130259878
    p = p * z + 0.2857142862600327
    p = p * z + 0.39999999999899444
    p = p * z + 0.666666666666667
    kd = np.float64(k)
    return kd * _LN2_HI + ((2.0 * s + s * z * p) + kd * _LN2_LO)


# φ, ψ, χ of one entry: the Taylor series to u^8 below τ, the closed forms above, in T = expm1(u)
# and eu = e^u (both are evaluated and one selected, so the loop body has no branch). Three scalar
# functions rather than one returning a tuple: LLVM inlines and vectorises these.
@_jit_exact
def _psi_series(u):
    return u * u * (1 / 2 + u * (1 / 6 + u * (1 / 24 + u * (1 / 120 + u * (1 / 720 + u * (1 / 5040 + u * (1 / 40320)))))))


@_jit_exact
def phi(u, T, eu):
    # series: φ = u² + (u − 1)·ψ (ψ = e^u − 1 − u), sharing ψ's series; no cancellation for |u| < τ
    series = u * u + (u - 1.0) * _psi_series(u)
    closed = u * eu - T  # u·e^u − T: no cancellation against u when u << 0 (eu is then 0 or tiny)
    return series if abs(u) < TAU else closed


@_jit_exact
def psi(u, T, eu):
    return _psi_series(u) if abs(u) < TAU else T - u


@_jit_exact
def chi(u, T, eu):
    series = u * u * (1 / 8 + u * (1 / 16 + u * (1 / 64 + u * (1 / 384 + u * (1 / 2304 + u * (1 / 11520 + u * (1 / 92160)))))))
    closed = 0.5 * (u * eu - (1.0 + eu) * vlog1p(0.5 * T))
    return series if abs(u) < TAU else closed


@_jit_exact
def delta(a, b):
    """δ = z_ref − z_cand (exact for widened BF16/F32)."""
    return widen(a) - widen(b)


@_jit_exact
def shifted(a, b, s):
    """d = δ − s, rounded once (relative to d): never regrouped as z_ref − (z_cand + s)."""
    return (widen(a) - widen(b)) - s


@_jit_exact
def log_ratio(a, b, s, ell, t, E, k):
    """u = d − ℓ = log(p/q), T = expm1(u) = (expm1(d) − E)/(1 + E) and e^u = 1 + T.

    Where p is negligible against q (u << 0), 1 + T carries an absolute rounding error of ε that
    u·e^u multiplies by |u|; both logit ranges are below 700 nats here, so |u| < 1500 and that stays
    below 4e-13 of the entry's φ ≈ 1."""
    T = (t - E) * k
    return ((widen(a) - widen(b)) - s) - ell, T, 1.0 + T
