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
vectorised loop with no temporaries. The elementary functions and the per-entry terms are in
:mod:`kldcard.compare.kernel_math`, the max/argmax/min scans over order keys in
:mod:`kldcard.compare.kernel_scan`; this module holds the passes and the row loop.

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

from kldcard.compare.kernel_math import SUM_FLAGS as _SUM
from kldcard.compare.kernel_math import TAU, vexp, vexpm1, vlog1p, widen  # noqa: F401  (kernel.vlog1p as before)
from kldcard.compare.kernel_math import chi as _chi
from kldcard.compare.kernel_math import delta as _delta
from kldcard.compare.kernel_math import log_ratio as _log_ratio
from kldcard.compare.kernel_math import phi as _phi
from kldcard.compare.kernel_math import psi as _psi
from kldcard.compare.kernel_math import shifted as _shifted
from kldcard.compare.kernel_scan import finite_min, from_key, order_key, scan, scan_rank  # noqa: F401  (as before)

__all__ = ["MASKED", "OK", "NONFINITE", "ROBUST", "TAU", "rows"]

_RESHIFT = 0.25  # |ℓ| above this: shift again by ℓ (T = (t − E)/(1 + E) loses ~ε|ℓ|/|u| of T)
_ATTEMPTS = 4  # shifts tried before a row goes to the robust path (each moves ℓ by up to 36 nats)
_EPS = 2.0**-52
OK, NONFINITE, ROBUST = 0, 1, 2  # row status: done / NaN, +inf or no finite logit / needs the robust path
MASKED = 3  # done, on a reference row with masked (-inf) entries: the robust path's rows, compiled
_RANGE = 700.0  # a logit range beyond this on either side goes to the robust path (see rows())


# Only the entry point, rows(), is cached on disk, and the passes (_row) are inlined into it by numba
# rather than compiled as a function of their own: with a separately compiled _row, a fresh compile
# and a cache load summed in different orders (last-bit differences between processes, measured),
# and kldcard promises the same bits whichever process computes a row (tests/test_kernel.py).
# numba keys that cache on this file's stamp alone: it does not notice a change to kernel_math.py or
# kernel_scan.py, whose code is compiled into rows(); after editing either, touch this file (or clear
# its __pycache__) so that rows() is compiled afresh.
_jit_sum = nb.njit(fastmath=_SUM, error_model="numpy", nogil=True, inline="always")


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
