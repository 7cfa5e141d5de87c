r"""Per-position divergences between two logit vectors, in float64, accurate to the last digits.

All values are in nats. Forward KL is KL(P_ref ‖ P_cand), reverse KL is KL(P_cand ‖ P_ref), JS is
the Jensen-Shannon divergence (natural log, so at most ln 2). P = softmax(z_ref), Q = softmax(z_cand).

Why not the textbook recipe
---------------------------
``Σ p·(log p − log q)`` with ``log p``, ``log q`` from two separate log-sum-exps has an absolute
error floor of ~1e-16 (from ``lse_p − lse_q`` and from summing terms of both signs), which is a
relative error of 1e-6 at the KL of 1e-10 that two kernels on the same weights produce.

Formulation (every step keeps relative precision)
-------------------------------------------------
Let δ = z_ref − z_cand (exact in float64: both come from BF16/F32), w = exp(z_cand − max z_cand)
and q̃ = w/W with W = Σw. Softmax is shift-invariant, so with s = Σ q̃δ and d = δ − s,

    ℓ = log Σ q̃·e^d = log1p(Σ q̃·expm1(d)),     u = d − ℓ = log(p/q)   per entry,

and Σ q̃·e^u = 1 exactly in the algebra. (ℓ is the reverse KL itself, but computed this way it is
not relatively accurate; it only fixes the normalisation.) Adding the zero Σ q̃(e^u − 1) to each
divergence gives sums of non-negative terms, with no first-order cancellation:

    forward = Σ q̃·φ(u),  φ(u) = u·e^u − e^u + 1       = u²/2 + u³/3 + u⁴/8 + u⁵/30 + …
    reverse = Σ q̃·ψ(u),  ψ(u) = e^u − 1 − u           = u²/2 + u³/6 + u⁴/24 + …
    JS      = Σ q̃·χ(u),  χ(u) = ½[u·e^u − (1+e^u)·log((1+e^u)/2)] = u²/8 + u³/16 + u⁴/64 + …

φ, ψ, χ are convex with a double zero at u = 0. Because φ'(0) = ψ'(0) = χ'(0) = 0, a constant
error c in u (from s, ℓ or W) changes each sum only by a relative c; rounding of each u_i is
relative to u_i because d − ℓ is a single correctly rounded subtraction.

Evaluation. With T = expm1(u) = (expm1(d) − E)/(1 + E), E = expm1(ℓ):
ψ = T − u, φ = u·(1+T) − T, χ = ½[u·(1+T) − (2+T)·log1p(T/2)]. These closed forms cancel for small
|u| (relative error ~ε/|u|), so entries with |u| < τ = 0.01 use the Taylor series instead, summed
as weighted power moments M_n = Σ w·u^n (n = 2..7; the first omitted term is < 4e-16 relative).
Rows whose divergence is large enough that the closed-form error bound 4ε(Σq̃|u| + 2ℓ) (about 100x
the errors measured against mpmath) is below 5e-13 of the smallest result skip the moments and
sum the closed forms by linearity: Σq̃T = 0 in the algebra, so reverse = −Σq̃u,
forward = Σq̃uT + Σq̃u and JS = ½(Σq̃u + Σq̃uT) − Σq̃(1 + T/2)·log1p(T/2) (bound checked again
on the results). Rows with a few large-|u| entries evaluate the closed forms on those entries only.
Checked against 40-digit mpmath over KL 1e-20 .. 4 nats: relative error < 2e-13 (typically 1e-15).

Transcendental work per vocabulary entry: exp (for w), expm1 (for d), log1p (for JS) -- the same
count as the "two exp and one log" floor.

Non-finite logits
-----------------
NaN or +inf anywhere is an error (:class:`~kldcard.errors.NonFiniteLogits`, naming positions).
-inf marks a masked entry (probability exactly 0) and is handled exactly:
both sides -inf contributes 0; ref -inf only (p = 0 < q): forward term 0, reverse term +inf,
JS term ½q·ln 2; cand -inf only (q = 0 < p): forward +inf, reverse 0, JS ½p·ln 2. So a forward KL
is +inf exactly when the candidate masks a token the reference can emit — reported as inf, never
NaN. A finite logit has probability > 0 even when exp underflows, so the rule is exact. Rows with
-inf, or with logit gaps so extreme that exp/expm1 overflow, take a slower robust path
(:func:`_robust_row`) with the same accuracy.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["RowKernel", "TokenDivergence", "divergence_logits", "row_divergence"]

TAU = 0.01  # |u| below this uses the Taylor moments
_EPS = float(np.finfo(np.float64).eps)
_CLOSED_TOL = 5e-13  # relative error bound required before skipping the moments
# Taylor coefficients of φ, ψ, χ for u^2 .. u^7
_PHI = (1 / 2, 1 / 3, 1 / 8, 1 / 30, 1 / 144, 1 / 840)
_PSI = (1 / 2, 1 / 6, 1 / 24, 1 / 120, 1 / 720, 1 / 5040)
_CHI = (1 / 8, 1 / 16, 1 / 64, 1 / 384, 1 / 2304, 1 / 11520)
_LN2 = math.log(2.0)


@dataclass
class TokenDivergence:
    """Per-position results. Divergences in nats; p_* are probabilities of the actual next token
    (NaN where the position has no next token); nll_* = −ln p_*; Δp = p_cand − p_ref."""

    positions: np.ndarray
    forward_kl: np.ndarray
    reverse_kl: np.ndarray
    js: np.ndarray
    top1_ref: np.ndarray
    top1_cand: np.ndarray
    next_token: np.ndarray
    p_ref: np.ndarray
    p_cand: np.ndarray
    nll_ref: np.ndarray
    nll_cand: np.ndarray
    robust: np.ndarray  # bool: the row took the robust path (-inf entries or extreme gaps)

    @classmethod
    def empty(cls, positions: np.ndarray, next_token: np.ndarray) -> TokenDivergence:
        n = len(positions)
        f = lambda: np.full(n, np.nan)  # noqa: E731
        i = lambda: np.full(n, -1, dtype=np.int64)  # noqa: E731
        return cls(np.asarray(positions, np.int64), f(), f(), f(), i(), i(), np.asarray(next_token, np.int64),
                   f(), f(), f(), f(), np.zeros(n, dtype=bool))

    @property
    def top1_agree(self) -> np.ndarray:
        return self.top1_ref == self.top1_cand

    @property
    def delta_p(self) -> np.ndarray:
        return self.p_cand - self.p_ref

    def store(self, i: int, values: tuple) -> None:
        (self.forward_kl[i], self.reverse_kl[i], self.js[i], self.top1_ref[i], self.top1_cand[i],
         self.p_ref[i], self.p_cand[i], self.nll_ref[i], self.nll_cand[i], self.robust[i]) = values

    def columns(self) -> dict[str, np.ndarray]:
        return {
            "position": self.positions, "forward_kl": self.forward_kl, "reverse_kl": self.reverse_kl,
            "js": self.js, "top1_ref": self.top1_ref, "top1_cand": self.top1_cand,
            "top1_agree": self.top1_agree, "next_token": self.next_token, "p_ref": self.p_ref,
            "p_cand": self.p_cand, "delta_p": self.delta_p, "nll_ref": self.nll_ref, "nll_cand": self.nll_cand,
        }


class RowKernel:
    """Divergences of one row at a time, with scratch buffers reused across rows (not thread-safe:
    one kernel per thread). Call with float32 or float64 1-D logits of equal length."""

    def __init__(self, n_vocab: int, *, nested: bool = False):
        self.n, self.nested = n_vocab, nested  # nested: used inside the robust path, never recurse
        self.zr, self.zc, self.w, self.d, self.t, self.u, self.a, self.b = (np.empty(n_vocab) for _ in range(8))
        self.mask = np.empty(n_vocab, dtype=bool)

    def __call__(self, z_ref: np.ndarray, z_cand: np.ndarray, target: int = -1) -> tuple | None:
        """(forward, reverse, js, top1_ref, top1_cand, p_ref, p_cand, nll_ref, nll_cand, robust)
        for one position, or None when a side has NaN/+inf or no finite logit."""
        ir, ic = int(np.argmax(z_ref)), int(np.argmax(z_cand))  # first maximum wins; NaN wins too
        mr, mc = float(z_ref[ir]), float(z_cand[ic])
        if not (math.isfinite(mr) and math.isfinite(mc)):
            return None
        # overflow/invalid only arise on rows that then take the robust path (checked below)
        with np.errstate(all="ignore"):
            return self._fast(z_ref, z_cand, ir, ic, mr, mc, target)

    def _fast(self, z_ref, z_cand, ir: int, ic: int, mr: float, mc: float, target: int) -> tuple:
        zr, zc, w, d, t, u = self.zr, self.zc, self.w, self.d, self.t, self.u
        np.copyto(zr, z_ref)
        np.copyto(zc, z_cand)
        np.subtract(zc, mc, out=w)
        np.exp(w, out=w)
        W = float(w.sum())
        np.subtract(zr, zc, out=d)  # δ, exact
        s = float(np.dot(w, d)) / W
        np.subtract(d, s, out=d)
        np.expm1(d, out=t)
        S1 = float(np.dot(w, t)) / W
        if not (math.isfinite(s) and math.isfinite(S1) and S1 > -1.0):
            return self._robust(z_ref, z_cand, ir, ic, target)
        ell = math.log1p(S1)
        E = math.expm1(ell)
        np.subtract(d, ell, out=u)
        k = 1.0 / (1.0 + E)
        res = None
        # Σq̃uT ≈ 2ℓ gives a cheap bound on Σq̃|u|; when it is too loose, measure Σq̃|u| itself
        if ell > 0 and _closed_enough(ell, math.sqrt(2 * ell / 0.632) + 2 * ell / 0.632):
            res = self._aggregated(W, ell, E, k)
        elif ell > 1e-7:
            np.abs(u, out=self.a)
            a1 = float(np.dot(w, self.a)) / W
            if _closed_enough(ell, a1):
                res = self._aggregated(W, ell, E, k, a1)
        if res is None:
            # T = expm1(u), in place of expm1(d)
            np.subtract(t, E, out=t)
            np.multiply(t, k, out=t)
            res = self._sums(W)
        if res is None:
            return self._robust(z_ref, z_cand, ir, ic, target)
        fwd, rev, js = res
        out = self._target(target, zc, mc, W, s + ell)
        return (fwd, rev, js, ir, ic, *out, 0)

    def _aggregated(self, W: float, ell: float, E: float, k: float, a1: float | None = None) -> tuple | None:
        """Closed forms summed with linearity (large divergences only). With T = k·(T' − E):
        Σq̃·T = 0 exactly in the algebra, so reverse = −Σq̃u, forward = Σq̃uT + Σq̃u and
        JS = ½(Σq̃u + Σq̃uT) − Σq̃(1+h)·log1p(h), h = T/2. The cancellations here are bounded by
        the same 4ε(Σq̃|u| + 2ℓ) as the entry-wise closed forms; checked afterwards (else None)."""
        w, u, t, a, b = self.w, self.u, self.t, self.a, self.b
        np.multiply(u, t, out=a)
        d_u = float(np.dot(w, u))
        sum_ut = k * (float(np.dot(w, a)) - E * d_u)
        np.multiply(t, 0.5 * k, out=b)
        np.subtract(b, 0.5 * k * E, out=b)  # h (t keeps T' for a fallback)
        np.log1p(b, out=a)
        np.add(b, 1.0, out=b)
        np.multiply(a, b, out=a)
        f = (sum_ut + d_u) / W
        r = -d_u / W
        j = (0.5 * (d_u + sum_ut) - float(np.dot(w, a))) / W
        if not all(math.isfinite(x) for x in (f, r, j)):
            return None
        if a1 is None:
            B = max(sum_ut / W, 0.0)  # Σq̃uT >= 0.632·Σq̃·min(u², |u|) bounds Σq̃|u|
            a1 = math.sqrt(B / 0.632) + B / 0.632
        if not _closed_enough(ell, a1, min(f, r, j)):
            return None
        return max(f, 0.0), max(r, 0.0), max(j, 0.0)

    def _target(self, target: int, zc: np.ndarray, mc: float, W: float, shift: float) -> tuple:
        if not 0 <= target < self.n:  # no next token (or one outside the compared vocabulary)
            return (math.nan,) * 4
        lq = (float(zc[target]) - mc) - math.log(W)
        lp = lq + (float(self.zr[target]) - float(zc[target]) - shift)
        return math.exp(lp), math.exp(lq), -lp, -lq

    def _closed(self, w, u, T, a, b) -> tuple[float, float, float]:
        """Σw·φ, Σw·ψ, Σw·χ over the given entries by their closed forms (clobbers a, b, T).

        Written as φ = u·e^u − T, ψ = T − u, χ = ½[u·e^u − (2+T)·log1p(T/2)] with e^u = 1 + T, so
        that very negative u (p ≪ q) costs nothing: u·e^u → 0 and φ → 1, χ → ½·ln 2 without
        cancelling terms of size |u|."""
        np.add(T, 1.0, out=a)
        np.multiply(a, u, out=a)  # u·e^u
        np.subtract(T, u, out=b)  # ψ
        d_psi = float(np.dot(w, b))
        np.subtract(a, T, out=b)  # φ
        d_phi = float(np.dot(w, b))
        np.add(T, 2.0, out=b)
        np.multiply(T, 0.5, out=T)
        np.log1p(T, out=T)
        np.multiply(b, T, out=b)
        np.subtract(a, b, out=a)
        return d_phi, d_psi, 0.5 * float(np.dot(w, a))

    def _sums(self, W: float) -> tuple[float, float, float] | None:
        """Taylor moments for |u| < τ, entry-wise closed forms for the rest (T already = expm1(u))."""
        w, u, t, a, b = self.w, self.u, self.t, self.a, self.b
        np.abs(u, out=a)
        mask = np.greater_equal(a, TAU, out=self.mask)
        n_large = int(np.count_nonzero(mask))
        cf = cr = cj = 0.0
        if n_large and n_large <= self.n // 16:  # a few large entries: closed forms on those only
            idx = np.flatnonzero(mask)
            uL, TL, wL = u[idx], t[idx], w[idx]
            cf, cr, cj = self._closed(wL, uL, TL, np.empty_like(uL), np.empty_like(uL))
            u[idx] = 0.0
        elif n_large:  # many: zero the small entries for the closed forms, the large for the moments
            keep = np.less(a, TAU, out=self.d, casting="unsafe")  # 1.0 where |u| < τ
            np.multiply(t, keep, out=b)
            np.subtract(t, b, out=t)  # T on large entries, 0 elsewhere
            np.multiply(u, keep, out=b)
            np.subtract(u, b, out=a)  # u on large entries
            cf, cr, cj = self._closed(w, a, t, self.zr, self.zc)
            np.copyto(u, b)  # u on small entries
        # M_n = Σ w·u^n, n = 2..7, as dot products of w·u² and w·u⁴ with u, u², u³ (4 products)
        u2, u3, wu2 = b, a, self.d
        np.multiply(u, u, out=u2)
        np.multiply(u2, u, out=u3)
        np.multiply(w, u2, out=wu2)
        moments = [float(wu2.sum()), float(np.dot(wu2, u)), float(np.dot(wu2, u2)), float(np.dot(wu2, u3))]
        np.multiply(wu2, u2, out=wu2)
        moments += [float(np.dot(wu2, u2)), float(np.dot(wu2, u3))]
        f = (cf + sum(c * m for c, m in zip(_PHI, moments))) / W
        r = (cr + sum(c * m for c, m in zip(_PSI, moments))) / W
        j = (cj + sum(c * m for c, m in zip(_CHI, moments))) / W
        if not all(math.isfinite(x) for x in (f, r, j)):
            return None
        return max(f, 0.0), max(r, 0.0), max(j, 0.0)

    def _robust(self, z_ref, z_cand, ir: int, ic: int, target: int) -> tuple:
        if self.nested:
            return (math.nan,) * 3 + (ir, ic) + (math.nan,) * 4 + (1,)
        fwd, rev, js, lp, lq = _robust_row(np.asarray(z_ref, np.float64), np.asarray(z_cand, np.float64))
        if not 0 <= target < len(lp):
            tail = (math.nan,) * 4
        else:
            a, b = float(lp[target]), float(lq[target])
            tail = (math.exp(a), math.exp(b), -a, -b)
        return (fwd, rev, js, ir, ic, *tail, 1)


def _closed_enough(ell: float, a1: float, smallest: float | None = None) -> bool:
    """Whether closed forms alone keep the relative error below _CLOSED_TOL: their error bound is
    4ε(Σq̃|u| + 2ℓ) (~100x what mpmath measures); before the sums, JS ≈ ℓ/4 stands in for the
    smallest result."""
    if not ell > 0:
        return False
    smallest = ell / 4 if smallest is None else smallest
    return 4.0 * _EPS * (a1 + 2.0 * ell) <= _CLOSED_TOL * smallest


def _series(u: np.ndarray, coef: tuple) -> np.ndarray:
    acc = np.full_like(u, coef[-1])
    for c in coef[-2::-1]:
        acc = acc * u + c
    return acc * u * u


def _lse(z: np.ndarray) -> float:
    m = float(z.max())
    return m + math.log(float(np.exp(z - m).sum()))


def _elementwise(zr: np.ndarray, zc: np.ndarray, lse_r: float, lse_c: float) -> tuple[float, float, float]:
    """Σ q·φ(u), Σ q·ψ(u), Σ q·χ(u) entry by entry, with p = exp(zr − lse_r), q = exp(zc − lse_c)
    (finite logits). Series for |u| < τ, closed forms in T = expm1(u) up to u = 1, and forms in p, q
    beyond (no overflow however extreme the gap). Relative accuracy per entry."""
    lp, lq = zr - lse_r, zc - lse_c
    p, q = np.exp(lp), np.exp(lq)
    u = (zr - zc) - (lse_r - lse_c)  # log(p/q), rounding relative to u
    small, high = np.abs(u) < TAU, u > 1.0
    mid = ~small & ~high
    um = np.where(mid, u, 0.0)
    T = np.expm1(um)
    ue = um * (1.0 + T)  # u·e^u: no cancellation against u when u ≪ 0
    psi_m, phi_m = T - um, ue - T
    chi_m = 0.5 * (ue - (2.0 + T) * np.log1p(0.5 * T))
    lm = np.logaddexp(lp, lq) - _LN2  # log of the mixture, no underflow
    f = np.where(small, q * _series(u, _PHI), np.where(mid, q * phi_m, p * (u - 1.0) + q))
    r = np.where(small, q * _series(u, _PSI), np.where(mid, q * psi_m, p - q * (1.0 + u)))
    j = np.where(small, q * _series(u, _CHI), np.where(mid, q * chi_m, 0.5 * (p * (lp - lm) + q * (lq - lm))))
    return float(f.sum()), float(r.sum()), float(j.sum())


def _robust_row(zr: np.ndarray, zc: np.ndarray) -> tuple[float, float, float, np.ndarray, np.ndarray]:
    """Divergences for rows with -inf (masked) entries or extreme logit gaps.

    Set B: entries finite on both sides whose candidate probability does not underflow. On B the
    fast kernel compares the renormalised restrictions p̃_B, q̃_B; the rest is put back exactly:
    Σ_B p·log(p/q) = P(B)·[KL(p̃_B ‖ q̃_B) + log(P(B)/Q(B))], plus p·(log p − log q) summed in log
    space over finite entries whose q underflows. A one-sided mask makes its direction +inf (a
    finite logit has probability > 0). JS is summed entry by entry (no normalisation identity is
    involved) plus ½·ln2 per unit of one-sided mass.
    """
    with np.errstate(over="ignore", under="ignore", invalid="ignore", divide="ignore"):
        fin_r, fin_c = np.isfinite(zr), np.isfinite(zc)
        lse_r, lse_c = _lse(zr[fin_r]), _lse(zc[fin_c])
        lp, lq = zr - lse_r, zc - lse_c
        both = fin_r & fin_c
        inf_f, inf_r = bool(np.any(fin_r & ~fin_c)), bool(np.any(fin_c & ~fin_r))
        p_only = float(np.exp(lp[fin_r & ~fin_c]).sum())
        q_only = float(np.exp(lq[fin_c & ~fin_r]).sum())
        j = 0.5 * _LN2 * (p_only + q_only)
        if not both.any():  # disjoint supports
            return (math.inf if inf_f else 0.0), (math.inf if inf_r else 0.0), j, lp, lq
        in_b = both & (lq > -700.0)
        under = both & ~in_b  # q underflows: p·(log p − log q) in log space, q·(...) ≈ 0
        a, b = zr[in_b], zc[in_b]
        res = RowKernel(len(a), nested=True)(a, b) if len(a) else None
        whole = not (inf_f or inf_r or under.any())  # then p̃_B = p and q̃_B = q: nothing to put back
        if res is None or res[-1]:  # the restriction is itself extreme: entry by entry
            f, r, jb = _elementwise(zr[both], zc[both], lse_r, lse_c)
            j += jb
        else:
            j += res[2] if whole else _elementwise(zr[both], zc[both], lse_r, lse_c)[2]
            log_pb, log_qb = _lse(a) - lse_r, _lse(b) - lse_c
            pb, qb = math.exp(log_pb), math.exp(log_qb)
            f = pb * (res[0] + log_pb - log_qb) + float((np.exp(lp[under]) * (lp[under] - lq[under])).sum())
            r = qb * (res[1] + log_qb - log_pb)
        fwd = math.inf if inf_f else f
        rev = math.inf if inf_r else r
        return max(fwd, 0.0), max(rev, 0.0), max(j, 0.0), lp, lq


def row_divergence(z_ref: np.ndarray, z_cand: np.ndarray) -> tuple[float, float, float]:
    """(forward KL, reverse KL, JS) in nats for one pair of logit vectors (convenience)."""
    z_ref, z_cand = np.asarray(z_ref), np.asarray(z_cand)
    res = RowKernel(len(z_ref))(z_ref, z_cand)
    if res is None:
        from .errors import NonFiniteLogits

        raise NonFiniteLogits("reference or candidate", [0])
    return res[0], res[1], res[2]


def divergence_logits(z_ref: np.ndarray, z_cand: np.ndarray, next_token: np.ndarray | None = None,
                      positions: np.ndarray | None = None) -> TokenDivergence:
    """Per-row divergences of two in-memory logit arrays [n, V] (float32/float64)."""
    from .errors import InputError, NonFiniteLogits

    z_ref, z_cand = np.atleast_2d(z_ref), np.atleast_2d(z_cand)
    if z_ref.shape != z_cand.shape:
        raise InputError(f"logit shapes differ: {list(z_ref.shape)} vs {list(z_cand.shape)}")
    n, v = z_ref.shape
    pos = np.arange(n) if positions is None else np.asarray(positions)
    nxt = np.full(n, -1) if next_token is None else np.asarray(next_token)
    out = TokenDivergence.empty(pos, nxt)
    kern = RowKernel(v)
    bad = []
    for i in range(n):
        res = kern(z_ref[i], z_cand[i], int(nxt[i]))
        if res is None:
            bad.append(i)
        else:
            out.store(i, res)
    if bad:
        side = "reference" if not np.all(np.isfinite(np.nanmax(z_ref[bad[0]]))) else "candidate"
        raise NonFiniteLogits(side, [int(pos[i]) for i in bad])
    return out


def log_softmax(x: np.ndarray) -> np.ndarray:
    """Row-wise log-probabilities (float64 in, float64 out; -inf logits stay -inf). For reports that
    need whole distributions (many-stack centroids, top-k cuts), not for the divergences above."""
    z = x - x.max(axis=-1, keepdims=True)
    with np.errstate(divide="ignore"):
        z -= np.log(np.exp(z).sum(axis=-1, keepdims=True))
    return z
