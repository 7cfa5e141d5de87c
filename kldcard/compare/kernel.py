r"""The compiled row kernel behind :mod:`kldcard.compare.divergence` (numba, float64, one pass per stage).

:mod:`kldcard.compare.divergence` documents the formulation; this module evaluates it. Per row it makes
three passes over the vocabulary, reading the stored logits (BF16 bits, float32 or float64) directly:

1. max, first argmax and min of each side (NaN and +inf show up there);
2. ``w = exp(z_cand − max)``, ``t = expm1(δ − s)`` with s = δ at the candidate's argmax; ``W = Σw``
   and ``Σ w·t`` (which fixes the normalisation ℓ); repeated with s + ℓ in the rare rows where
   |ℓ| > 0.25;
3. per entry ``u = δ − s − ℓ``, ``T = expm1(u)`` from ``t``, and φ, ψ, χ: the Taylor series for
   ``|u| < τ``, the closed forms (with ``log1p(T/2)``) above; summed against w.

So each vocabulary entry costs one exp, one expm1 and one log1p: the "two exp and one log" of the
benchmark's floor. numpy needed ~40 passes (and temporaries) for the same; here each pass is one
vectorised loop with no temporaries.

Why exp, expm1 and log1p are written out here
---------------------------------------------
LLVM vectorises a loop only if every call in it has a vector form; libm's scalar ``exp`` has none
(numba has no SVML on Linux wheels), so the loops would run one entry at a time, slower than
numpy. The polynomial versions below vectorise and are as accurate as libm for this use (max error
measured against 40-digit mpmath: exp 1 ulp, expm1 2 ulp, log1p 3 ulp; tests/test_kernel.py).

Floating-point flags
--------------------
Only the sum loops may reassociate (``reassoc``: how LLVM vectorises a reduction); the elementary
functions and the per-entry arithmetic are compiled without it because reassociation would undo
their careful steps (Cody–Waite argument reduction; δ − s − ℓ regrouped as δ − (s + ℓ) measured
2e-12 relative error instead of 4e-15). numba keeps each function's flags on
its own instructions when LLVM inlines it, so the split holds after inlining. Sums therefore follow
a vectorised order, fixed for a given CPU type and numba/llvmlite build (results are deterministic
there; numba compiles for the host CPU, so another vector width or FMA support may change the last
bits, ~1e-15 relative).
``nnan``/``ninf`` are never set: NaN and ±inf must stay visible to the checks.
"""

from __future__ import annotations

import numba as nb
import numpy as np
from numba import types
from numba.extending import overload

__all__ = ["MASKED", "OK", "NONFINITE", "ROBUST", "TAU", "rows"]

TAU = 0.03  # |u| below this uses the Taylor series (closed forms cancel there)
_RESHIFT = 0.25  # |ℓ| above this: shift again by ℓ (T = (t − E)/(1 + E) loses ~ε|ℓ|/|u| of T)
_ATTEMPTS = 4  # shifts tried before a row goes to the robust path (each moves ℓ by up to 36 nats)
_EPS = 2.0**-52
OK, NONFINITE, ROBUST = 0, 1, 2  # row status: done / NaN, +inf or no finite logit / needs the robust path
MASKED = 3  # done, on a reference row with masked (-inf) entries: the robust path's rows, compiled

_SUM = {"reassoc", "contract", "nsz"}  # loops whose only reordering is in their sums
_EXACT = {"contract"}  # elementary functions: FMA contraction only (it only removes roundings)
_LOG2E = 1.4426950408889634
_LN2_HI = 6.93147180369123816490e-01  # ln 2 split so that k·_LN2_HI is exact for |k| < 2^20
_LN2_LO = 1.90821492927058770002e-10
_SQRT_HALF_BITS = 0x3FE6A09E667F3BCD
_RANGE = 700.0  # a logit range beyond this on either side goes to the robust path (see rows())


def widen(v):  # pragma: no cover - only its numba overload is ever called
    raise NotImplementedError


@overload(widen, inline="always")
def _widen(v):
    """One stored logit as float64, exactly: BF16 bits are the top half of a float32."""
    if isinstance(v, types.Integer):
        return lambda v: np.float64(np.uint32(np.uint32(v) << np.uint32(16)).view(np.float32))
    return lambda v: np.float64(v)


# Only the entry point, rows(), is cached on disk, and the passes (_row) are inlined into it by numba
# rather than compiled as a function of their own: with a separately compiled _row, a fresh compile
# and a cache load summed in different orders (last-bit differences between processes, measured),
# and kldcard promises the same bits whichever process computes a row (tests/test_kernel.py).
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
def _phi(u, T, eu):
    # series: φ = u² + (u − 1)·ψ (ψ = e^u − 1 − u), sharing ψ's series; no cancellation for |u| < τ
    series = u * u + (u - 1.0) * _psi_series(u)
    closed = u * eu - T  # u·e^u − T: no cancellation against u when u << 0 (eu is then 0 or tiny)
    return series if abs(u) < TAU else closed


@_jit_exact
def _psi(u, T, eu):
    return _psi_series(u) if abs(u) < TAU else T - u


@_jit_exact
def _chi(u, T, eu):
    series = u * u * (1 / 8 + u * (1 / 16 + u * (1 / 64 + u * (1 / 384 + u * (1 / 2304 + u * (1 / 11520 + u * (1 / 92160)))))))
    closed = 0.5 * (u * eu - (1.0 + eu) * vlog1p(0.5 * T))
    return series if abs(u) < TAU else closed


@_jit_exact
def _delta(a, b):
    """δ = z_ref − z_cand (exact for widened BF16/F32)."""
    return widen(a) - widen(b)


@_jit_exact
def _shifted(a, b, s):
    """d = δ − s, rounded once (relative to d): never regrouped as z_ref − (z_cand + s)."""
    return (widen(a) - widen(b)) - s


@_jit_exact
def _log_ratio(a, b, s, ell, t, E, k):
    """u = d − ℓ = log(p/q), T = expm1(u) = (expm1(d) − E)/(1 + E) and e^u = 1 + T.

    Where p is negligible against q (u << 0), 1 + T carries an absolute rounding error of ε that
    u·e^u multiplies by |u|; both logit ranges are below 700 nats here, so |u| < 1500 and that stays
    below 4e-13 of the entry's φ ≈ 1."""
    T = (t - E) * k
    return ((widen(a) - widen(b)) - s) - ell, T, 1.0 + T


_jit_sum = nb.njit(fastmath=_SUM, error_model="numpy", nogil=True, inline="always")


def order_key(v):  # pragma: no cover - only its numba overload is ever called
    raise NotImplementedError


def from_key(k, like):  # pragma: no cover - only its numba overload is ever called
    raise NotImplementedError


@overload(order_key, inline="always")
def _order_key(v):
    """A signed integer that orders like the float (sign-magnitude to two's complement, then -0.0
    moved onto +0.0 so that they tie, as floats do), so max and min vectorise as integer
    reductions, which need no fast-math flags. A positive NaN sorts above +inf, a negative one
    below -inf. :func:`from_key` decodes."""
    if isinstance(v, types.Integer):  # BF16 bits: the float32 they widen to
        def impl(v):
            b = np.int32(np.uint32(np.uint32(v) << np.uint32(16)))
            k = b ^ ((b >> np.int32(31)) & np.int32(0x7FFFFFFF))
            return k + ((k >> np.int32(31)) & np.int32(1))
    elif v == types.float32:
        def impl(v):
            b = np.float32(v).view(np.int32)
            k = b ^ ((b >> np.int32(31)) & np.int32(0x7FFFFFFF))
            return k + ((k >> np.int32(31)) & np.int32(1))
    else:
        def impl(v):
            b = np.float64(v).view(np.int64)
            k = b ^ ((b >> np.int64(63)) & np.int64(0x7FFFFFFFFFFFFFFF))
            return k + ((k >> np.int64(63)) & np.int64(1))
    return impl


@overload(from_key, inline="always")
def _from_key(k, like):
    """The float64 value of an order key of ``like``'s type (-0.0 comes back as +0.0)."""
    if isinstance(like, types.Integer) or like == types.float32:
        def impl(k, like):
            k = k - ((k >> np.int32(31)) & np.int32(1))
            return np.float64(np.int32(k ^ ((k >> np.int32(31)) & np.int32(0x7FFFFFFF))).view(np.float32))
    else:
        def impl(k, like):
            k = k - ((k >> np.int64(63)) & np.int64(1))
            return np.int64(k ^ ((k >> np.int64(63)) & np.int64(0x7FFFFFFFFFFFFFFF))).view(np.float64)
    return impl


def scan(z):  # pragma: no cover - only its numba overload is ever called
    raise NotImplementedError


@overload(scan, fastmath=_SUM)
def _scan(z):
    """(max, first index of the max, min) of one row as float64; a NaN shows up as max or min.

    BF16/F32 rows: one vectorised integer reduction over (key << 32 | ~index), whose max is the
    largest key at its first index. float64 keys need all 64 bits, so those rows (in-memory
    arrays and the robust path only) take a scalar loop."""
    if isinstance(z.dtype, types.Integer) or z.dtype == types.float32:
        def impl(z):
            hi = np.int64(-(2**63) + 1)
            lo = order_key(z[0])
            for i in range(z.shape[0]):
                k = order_key(z[i])
                hi = max(hi, (np.int64(k) << 32) | np.int64(0xFFFFFFFF - i))
                lo = min(lo, k)
            return from_key(np.int32(hi >> 32), z[0]), 0xFFFFFFFF - (hi & 0xFFFFFFFF), from_key(lo, z[0])
        return impl

    def impl(z):
        hi = lo = order_key(z[0])
        at = 0
        for i in range(z.shape[0]):
            k = order_key(z[i])
            if k > hi:
                hi, at = k, i
            lo = min(lo, k)
        return from_key(hi, z[0]), at, from_key(lo, z[0])
    return impl


@_jit_sum
def _normalise(zr, zc, mc, s, w, t):
    """Pass 2 for one row: w, t and (status, W, s, ℓ); see the module docstring. ``s`` may come
    back changed (shifted again by ℓ)."""
    n = zr.shape[0]
    W = 0.0
    for attempt in range(_ATTEMPTS):
        W = 0.0
        S1 = 0.0
        for i in range(n):
            e = vexp(widen(zc[i]) - mc)
            tt = vexpm1(_shifted(zr[i], zc[i], s))
            w[i] = e
            t[i] = tt
            W += e
            S1 += e * tt
        S1 = S1 / W
        if not (np.isfinite(s) and np.isfinite(S1)):
            return ROBUST, W, s, 0.0  # -inf entries, or gaps so wide that expm1 overflows
        # ℓ = log Σq̃·e^d; far below 0 the sum 1 + S1 cancels, so cap it at ε: the estimate is then
        # only a step towards the bulk, and the next attempt lands closer
        ell = np.log1p(max(S1, _EPS - 1.0))
        if abs(ell) <= _RESHIFT:
            return OK, W, s, ell
        # the argmax token's log-ratio is far from the bulk's (ℓ = −u_top): centre on the bulk
        s = s + ell
    return ROBUST, W, s, 0.0


@_jit_sum
def _row(zr, zc, mc, s, w, t):
    """Passes 2 and 3 for one row: (status, W, s, ℓ, forward, reverse, JS); see the module
    docstring. ``s`` may come back changed (shifted again by ℓ)."""
    n = zr.shape[0]
    st, W, s, ell = _normalise(zr, zc, mc, s, w, t)
    if st != OK:
        return st, W, s, 0.0, 0.0, 0.0, 0.0
    E = np.expm1(ell)
    k = 1.0 / (1.0 + E)
    F = 0.0
    R = 0.0
    J = 0.0
    for i in range(n):
        u, T, eu = _log_ratio(zr[i], zc[i], s, ell, t[i], E, k)
        wi = w[i]
        F += wi * _phi(u, T, eu)
        R += wi * _psi(u, T, eu)
        J += wi * _chi(u, T, eu)
    F, R, J = F / W, R / W, J / W
    if not (np.isfinite(F) and np.isfinite(R) and np.isfinite(J)):
        return ROBUST, W, s, ell, 0.0, 0.0, 0.0
    return OK, W, s, ell, max(F, 0.0), max(R, 0.0), max(J, 0.0)


@_jit_sum
def _row_masked(zr, zc, mc, s, w, t):
    """:func:`_row` for a reference row with masked entries (-inf: p = 0) against a finite candidate.

    Pass 2 needs nothing new: a masked entry has d = −inf, t = expm1(d) = −1 exactly, so ℓ already
    counts only the reference's support. In pass 3 a masked entry takes the limits at u = −∞:
    φ = 1 (forward: Σq̃·φ(u) = Σp·log(p/q) − Σp + Σq, the q of a masked entry put back), χ = ½·ln 2
    (JS: ½q·ln 2), and the reverse KL is +inf (q > 0 where p = 0: w never underflows here, the
    candidate's range being below 700 nats). Every term stays non-negative, so the sums keep the
    fast path's relative accuracy; before, these rows took the numpy robust path (~13 ms a row at
    a 151,936-token vocabulary: a llama-perplexity base file's floor masks most rows)."""
    n = zr.shape[0]
    st, W, s, ell = _normalise(zr, zc, mc, s, w, t)
    if st != OK:
        return st, W, s, 0.0, 0.0, 0.0, 0.0
    E = np.expm1(ell)
    k = 1.0 / (1.0 + E)
    F = 0.0
    J = 0.0
    for i in range(n):
        u, T, eu = _log_ratio(zr[i], zc[i], s, ell, t[i], E, k)
        masked = widen(zr[i]) == -np.inf
        ph = _phi(u, T, eu)  # both evaluated, one selected: the loop has no branch
        ch = _chi(u, T, eu)
        wi = w[i]
        F += wi * (1.0 if masked else ph)
        J += wi * (_HALF_LN2 if masked else ch)
    F, J = F / W, J / W
    if not (np.isfinite(F) and np.isfinite(J)):
        return ROBUST, W, s, ell, 0.0, 0.0, 0.0
    return OK, W, s, ell, max(F, 0.0), np.inf, max(J, 0.0)


_HALF_LN2 = 0.5 * 0.6931471805599453


def _key_of(x: float, bits: int) -> int:
    """:func:`order_key` in Python, for constants (``bits``: 32 for BF16/F32 rows, 64 for float64)."""
    b = int(np.array(x, np.float32 if bits == 32 else np.float64).view(np.int32 if bits == 32 else np.int64))
    k = b ^ (0x7FFFFFFF if bits == 32 else 0x7FFFFFFFFFFFFFFF) if b < 0 else b
    return k + (1 if k < 0 else 0)


_NINF32, _NINF64 = _key_of(-np.inf, 32), _key_of(-np.inf, 64)


def finite_min(z):  # pragma: no cover - only its numba overload is ever called
    raise NotImplementedError


@overload(finite_min, fastmath=_SUM)
def _finite_min(z):
    """The smallest entry above −inf of one row as float64 (+inf when there is none): the range of a
    masked row's support. An integer reduction on the order keys, as in :func:`scan`."""
    if isinstance(z.dtype, types.Integer) or z.dtype == types.float32:
        ninf, top = np.int32(_NINF32), np.int32(2**31 - 1)
    else:
        ninf, top = np.int64(_NINF64), np.int64(2**63 - 1)

    def impl(z):
        lo = top
        for i in range(z.shape[0]):
            k = order_key(z[i])
            lo = min(lo, top if k == ninf else k)
        return np.inf if lo == top else from_key(lo, z[0])
    return impl


def scan_rank(z, tg):  # pragma: no cover - only its numba overload is ever called
    raise NotImplementedError


@overload(scan_rank, fastmath=_SUM)
def _scan_rank(z, tg):
    """:func:`scan` plus the number of entries strictly above entry ``tg`` (0: the target is a top-1
    token), counted in the same pass: one more integer comparison per entry on the order keys."""
    if isinstance(z.dtype, types.Integer) or z.dtype == types.float32:
        def impl(z, tg):
            hi = np.int64(-(2**63) + 1)
            lo = order_key(z[0])
            key = order_key(z[tg])
            above = 0
            for i in range(z.shape[0]):
                k = order_key(z[i])
                hi = max(hi, (np.int64(k) << 32) | np.int64(0xFFFFFFFF - i))
                lo = min(lo, k)
                above += k > key
            return from_key(np.int32(hi >> 32), z[0]), 0xFFFFFFFF - (hi & 0xFFFFFFFF), from_key(lo, z[0]), above
        return impl

    def impl(z, tg):
        hi = lo = order_key(z[0])
        key = order_key(z[tg])
        at = 0
        above = 0
        for i in range(z.shape[0]):
            k = order_key(z[i])
            if k > hi:
                hi, at = k, i
            lo = min(lo, k)
            above += k > key
        return from_key(hi, z[0]), at, from_key(lo, z[0]), above
    return impl


# cache=True keys the on-disk compiled rows() on this file's stamp alone, so every helper it calls lives in
# this module: a helper moved to another file could change while a stale compiled rows() still loads.
@nb.njit(fastmath=_SUM, error_model="numpy", nogil=True, cache=True)
def rows(zr, zc, targets, fwd, rev, js, top_r, top_c, p_ref, p_cand, nll_ref, nll_cand, status, w, t,
         p_top_ref, rank_ref, rank_cand):
    """Divergences of rows ``zr[i]`` vs ``zc[i]`` ([n, V] BF16 bits as uint16, float32 or float64).

    Writes per row: forward KL(P_ref ‖ P_cand), reverse KL, JS (nats), the argmax of each side
    (first maximum), the probability and negative log-probability (nats) of ``targets[i]`` under
    each side (NaN when the target is outside [0, V)), and ``status``: OK, MASKED (done: -inf
    entries in the reference only, see :func:`_row_masked`), NONFINITE (NaN or +inf logits, or no
    finite logit) or ROBUST (-inf entries in the candidate, extreme ranges); for those two only the
    argmaxes are meaningful, and the caller takes :func:`kldcard.compare.divergence._robust_row`.
    ``w`` and ``t`` are float64 scratch rows of length V (one pair per thread). Also written: the
    reference's top-1 probability (NaN unless OK) and, per side, how many entries rank above
    ``targets[i]`` (-1 without a target): the label is in a side's top k when that count is < k.
    """
    n, v = zr.shape
    for i in range(n):
        tg = targets[i]
        if 0 <= tg < v:
            mr, ir, minr, rank_ref[i] = scan_rank(zr[i], tg)
            mc, ic, minc, rank_cand[i] = scan_rank(zc[i], tg)
        else:
            mr, ir, minr = scan(zr[i])
            mc, ic, minc = scan(zc[i])
            rank_ref[i] = rank_cand[i] = -1
        top_r[i], top_c[i] = ir, ic
        p_ref[i] = p_cand[i] = nll_ref[i] = nll_cand[i] = p_top_ref[i] = np.nan
        if minr != minr or minc != minc or not (np.isfinite(mr) and np.isfinite(mc)):
            status[i] = NONFINITE
            continue
        masked = minr == -np.inf and mc - minc <= _RANGE and mr - finite_min(zr[i]) <= _RANGE
        if not masked and (mc - minc > _RANGE or mr - minr > _RANGE):
            # the candidate's: some w underflow while their p may not (the robust path sums those
            # in log space); the reference's: |u| unbounded where p underflows (masks at -1e30)
            status[i] = ROBUST
            continue
        s = _delta(zr[i, ic], zc[i, ic])  # shift δ by its value at the candidate's top token
        if masked:  # -inf entries in the reference only (a finite candidate: minc > -inf here)
            st, W, s, ell, f, r, j = _row_masked(zr[i], zc[i], mc, s, w, t)
            status[i] = MASKED if st == OK else st
        else:
            st, W, s, ell, f, r, j = _row(zr[i], zc[i], mc, s, w, t)
            status[i] = st
        fwd[i], rev[i], js[i] = f, r, j
        if st == OK:  # the reference's top-1 probability: one entry, no pass of its own
            lqt = (widen(zc[i, ir]) - mc) - np.log(W)
            p_top_ref[i] = np.exp(lqt + _log_ratio(zr[i, ir], zc[i, ir], s, ell, 0.0, 0.0, 1.0)[0])
        if st != OK or not (0 <= tg < v):
            lp = lq = np.nan
        else:
            lq = (widen(zc[i, tg]) - mc) - np.log(W)
            lp = lq + _log_ratio(zr[i, tg], zc[i, tg], s, ell, 0.0, 0.0, 1.0)[0]
        p_ref[i], p_cand[i], nll_ref[i], nll_cand[i] = np.exp(lp), np.exp(lq), -lp, -lq
