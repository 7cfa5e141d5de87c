"""Accuracy of the float64 divergence kernel against 40-digit mpmath, and its edge cases."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers_compare import close, logits_pair, mp_reference, mp_token

from kldcard.compare.divergence import (
    RowKernel,
    _robust_row,
    divergence_logits,
    row_divergence,
)
from kldcard.errors import InputError, NonFiniteLogits

V = 1500


def _check(z_ref, z_cand, rel=1e-12):
    ref = mp_reference(z_ref, z_cand)
    got = row_divergence(z_ref, z_cand)
    for name, value in zip(("forward", "reverse", "js"), got):
        assert close(value, ref[name], rel=rel), (name, value, ref[name], abs(value - ref[name]) / ref[name])
    return ref


@pytest.mark.parametrize(
    "sigma, kl_range",
    [
        (1e-8, (1e-20, 1e-15)),
        (1.4e-5, (1e-11, 1e-9)),  # cross-kernel differences on identical weights: KL ~ 1e-10
        (1e-3, (1e-8, 1e-5)),
        (0.01, (1e-6, 1e-3)),  # BF16-rounding scale
        (0.1, (1e-3, 1e-1)),  # quantized candidate
        (1.0, (0.1, 2.0)),
        (4.0, (1.0, 20.0)),
    ],
)
def test_matches_mpmath_from_tiny_to_large_divergence(sigma, kl_range):
    rng = np.random.default_rng(int(sigma * 1e9) % 2**32)
    zr, zc = logits_pair(rng, 1, V, sigma)
    ref = _check(zr[0], zc[0])
    assert kl_range[0] < ref["forward"] < kl_range[1]  # the case really is at that scale


@pytest.mark.parametrize("fraction, big", [(0.002, 0.05), (0.05, 0.3), (0.3, 0.03), (0.9, 1.0)])
def test_matches_mpmath_with_mixed_small_and_large_log_ratios(fraction, big):
    # tiny noise everywhere plus larger noise on a fraction of entries: exercises the Taylor
    # moments and the closed forms in the same row (both the compressed and the masked variant)
    rng = np.random.default_rng(7)
    zr = (rng.normal(size=V) * 3).astype(np.float32)
    noise = rng.normal(size=V) * 1e-4
    sel = rng.random(V) < fraction
    noise[sel] = rng.normal(size=sel.sum()) * big
    _check(zr, (zr + noise).astype(np.float32))


def test_matches_mpmath_at_a_larger_vocabulary_near_identical():
    rng = np.random.default_rng(3)
    zr, zc = logits_pair(rng, 1, 20000, 1.4e-5)
    ref = _check(zr[0], zc[0])
    assert 1e-11 < ref["forward"] < 1e-9


def test_bf16_inputs_and_next_token_probabilities():
    rng = np.random.default_rng(11)
    zr, zc = logits_pair(rng, 3, 800, 0.05)
    import torch

    zr = torch.from_numpy(zr).bfloat16().float().numpy()
    zc = torch.from_numpy(zc).bfloat16().float().numpy()
    td = divergence_logits(zr, zc, next_token=np.array([3, 500, -1]))
    for i in range(3):
        ref = mp_reference(zr[i], zc[i])
        assert close(td.forward_kl[i], ref["forward"]) and close(td.reverse_kl[i], ref["reverse"])
        assert close(td.js[i], ref["js"])
        assert td.top1_ref[i] == int(np.argmax(zr[i])) and td.top1_cand[i] == int(np.argmax(zc[i]))
    for i, t in ((0, 3), (1, 500)):
        assert math.isclose(td.p_ref[i], mp_token(zr[i], t), rel_tol=1e-13)
        assert math.isclose(td.p_cand[i], mp_token(zc[i], t), rel_tol=1e-13)
        assert math.isclose(td.nll_ref[i], -math.log(mp_token(zr[i], t)), rel_tol=1e-13)
        assert math.isclose(td.delta_p[i], td.p_cand[i] - td.p_ref[i])
    assert np.isnan(td.p_ref[2]) and np.isnan(td.nll_cand[2])  # no next token


def test_identical_distributions_give_exactly_zero():
    rng = np.random.default_rng(0)
    z = (rng.normal(size=5000) * 5).astype(np.float32)
    assert row_divergence(z, z) == (0.0, 0.0, 0.0)
    z[::7] = -np.inf
    assert row_divergence(z, z) == (0.0, 0.0, 0.0)


def test_masked_entries_follow_the_documented_rules():
    rng = np.random.default_rng(5)
    zr = rng.normal(size=300)
    zc = zr + rng.normal(size=300) * 0.1
    zr[10] = zc[10] = -np.inf  # masked on both sides: contributes nothing
    _check(zr, zc)
    zc2 = zc.copy()
    zc2[20] = -np.inf  # candidate masks a token the reference can emit
    f, r, j = row_divergence(zr, zc2)
    ref = mp_reference(zr, zc2)
    assert f == math.inf and close(r, ref["reverse"]) and close(j, ref["js"])
    zr2 = zr.copy()
    zr2[30] = -np.inf  # reference masks a token the candidate can emit
    f, r, j = row_divergence(zr2, zc)
    ref = mp_reference(zr2, zc)
    assert r == math.inf and close(f, ref["forward"]) and close(j, ref["js"])


def test_extreme_logit_gaps_stay_finite_and_accurate():
    zr = np.array([1e4, 0.0, -1e4, 5.0, 3.0])
    zc = np.array([0.0, 1e4, 0.0, 5.0, -1e4])
    f, r, j = row_divergence(zr, zc)
    ref = mp_reference(zr, zc)
    assert all(math.isfinite(x) for x in (f, r, j))
    assert close(f, ref["forward"]) and close(r, ref["reverse"]) and close(j, ref["js"])
    assert j <= math.log(2)


def test_robust_path_agrees_with_fast_path_at_full_vocabulary():
    rng = np.random.default_rng(9)
    kern = RowKernel(151936)
    for sigma in (1e-5, 0.01, 0.2):
        zr, zc = logits_pair(rng, 1, 151936, sigma)
        fast = kern(zr[0], zc[0])
        assert fast is not None and fast[-1] == 0  # took the fast path
        slow = _robust_row(zr[0].astype(np.float64), zc[0].astype(np.float64))
        for a, b in zip(fast[:3], slow[:3]):
            assert close(a, b, rel=1e-11)


def test_first_maximum_wins_for_top1():
    z = np.array([1.0, 3.0, 3.0, 2.0])
    td = divergence_logits(z, z[::-1].copy())
    assert td.top1_ref[0] == 1 and td.top1_cand[0] == 1


def test_nan_and_posinf_are_errors_naming_positions():
    z = np.zeros((4, 10), dtype=np.float32)
    zc = z.copy()
    zc[1, 3] = np.nan
    zc[3, 0] = np.inf
    with pytest.raises(NonFiniteLogits, match=r"candidate capture has NaN or \+inf .* 2 position\(s\): 11, 13"):
        divergence_logits(z, zc, positions=np.arange(10, 14))
    zr = z.copy()
    zr[2, :] = -np.inf  # no finite logit at all
    with pytest.raises(NonFiniteLogits, match="reference capture .* 1 position"):
        divergence_logits(zr, z)
    with pytest.raises(InputError, match="shapes differ"):
        divergence_logits(z, z[:, :5])


def test_entries_far_below_the_other_side_do_not_cancel():
    # the reference gives ~e^-4097 to two tokens the candidate finds as likely as any other: their
    # log-ratio is -4097, and φ, χ must not be formed by cancelling terms of that size
    zr = np.full(50, 4097.0)
    zr[[0, 31]] = 0.0
    zc = np.zeros(50)
    _check(zr, zc)
    _check(zr[::-1].copy(), zc)


def test_constant_logit_offsets_cancel_exactly():
    z = np.random.default_rng(12).normal(size=2000).astype(np.float32).astype(np.float64)
    assert max(row_divergence(z, z + 1024.0)) < 1e-40  # softmax is shift-invariant (0 up to rounding)
    _check(z, z - 3000.0 + np.random.default_rng(13).normal(size=2000) * 1e-4)


@pytest.mark.parametrize("order", [[0, 1, 2], [1, 0, 2], [2, 1, 0]])
def test_masked_row_whose_finite_part_is_itself_extreme(order):
    # found by Hypothesis: with a -inf entry the robust path compares the finite part, and here that
    # part overflows expm1 in one order (entry-by-entry fallback), not in another; both must agree
    zr, zc = np.array([710.0, 0.0, -np.inf])[order], np.zeros(3)
    f, r, j = row_divergence(zr, zc)
    ref = mp_reference(zr, zc)
    assert r == math.inf and close(f, ref["forward"]) and close(j, ref["js"])
    assert close(f, math.log(3.0))


# Rows found by review of the compiled kernel; each was wrong by 1e-10 .. 100% before its fix.
@pytest.mark.parametrize("zr, zc", [
    # reference masks far below any candidate logit (finfo.min, -1e30): e^u underflows to 0 there
    (np.float32([1.57, -1e30, 1.61, 0.66]), np.float32([1.15, -2.37, 1.23, 0.34])),
    (np.float32([0.3, np.finfo(np.float32).min, -0.2, 1.1, np.finfo(np.float32).min]), np.float32([0.1, 0.2, -0.3, 1.0, 0.5])),
    (np.float32([0.3, -690.0, -0.2, 1.1, -650.0]), np.float32([0.1, 0.2, -0.3, 1.0, 0.5])),  # fast path, |u| ~ 690
    # the candidate's top token carries a log-ratio far from the rest (ℓ far from 0: shifted again)
    (np.where(np.arange(20000) == 0, 30.0, 0.0), np.zeros(20000)),
    (np.where(np.arange(3000) == 7, -25.0, 0.0), np.where(np.arange(3000) == 7, 3.0, 0.0)),
    # candidate ranges beyond 700 nats (robust path): outside mass must not be lost to rounding
    (np.array([0.0, 0.0, 0.0, -30.0]), np.array([0.0, 0.0, 0.0, -710.0])),
    (np.array([5.0, 1.0, 0.0, -20.0]), np.array([5.0, 1.0, 0.0, -720.0])),
    (np.array([0.0, 0.0, 1.0, 2.0]), np.array([-10000.0, 0.0, 1.0, 2.0])),
    # huge logits: differences of log-sum-exps must not carry rounding of size |z|
    (np.array([0.0, 0.0]), np.array([1e20, 0.0])),
    (np.array([0.0, 16385.0]), np.array([0.0, 0.0])),
    (np.array([16385.0, 0.0]), np.array([0.0, 0.0])),
])
def test_extreme_rows_stay_relatively_accurate(zr, zc):
    _check(zr, zc)


def test_negative_zero_ties_with_positive_zero_for_top1():
    td = divergence_logits(np.array([[-0.0, 0.0, -1.0]]), np.array([[0.0, -0.0, -1.0]]))
    assert td.top1_ref[0] == td.top1_cand[0] == 0  # as numpy's argmax: -0.0 == 0.0


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("sigma, masked", [(0.01, 0.5), (0.1, 0.3), (1.0, 0.9)])
def test_masked_reference_rows_take_the_compiled_path_and_stay_exact(dtype, sigma, masked):
    # a llama-perplexity base file's floor masks the tail of most reference rows (-inf: p = 0); those
    # rows are compiled (status MASKED), and every column agrees with mpmath and the numpy robust path
    from kldcard.compare import kernel

    rng = np.random.default_rng(int(sigma * 100) + int(masked * 10))
    zr, zc = logits_pair(rng, 3, V, sigma, dtype)
    zr[zr < np.quantile(zr, masked, axis=1, keepdims=True)] = -np.inf
    zr[:, :8] = np.maximum(zr[:, :8], 0)  # the candidate's top tokens stay in the reference's support
    n = len(zr)
    status = np.empty(n, np.int8)
    cols = [np.full(n, np.nan) for _ in range(3)] + [np.zeros(n, np.int64) for _ in range(2)] + \
        [np.full(n, np.nan) for _ in range(4)]
    targets = np.array([0, int(np.flatnonzero(np.isneginf(zr[1]))[0]), 5])  # row 1: a masked target
    kernel.rows(zr, zc, targets, *cols, status, np.empty(V), np.empty(V), np.full(n, np.nan),
                np.zeros(n, np.int64), np.zeros(n, np.int64))
    assert list(status) == [kernel.MASKED] * n
    td = divergence_logits(zr, zc, next_token=targets)
    assert td.robust.all()  # still counted as rows outside the plain formulation
    for i in range(n):
        ref = mp_reference(zr[i], zc[i])
        assert td.reverse_kl[i] == math.inf
        assert close(td.forward_kl[i], ref["forward"]) and close(td.js[i], ref["js"])
        fwd, rev, js, lp, lq = _robust_row(zr[i].astype(np.float64), zc[i].astype(np.float64))
        assert close(td.forward_kl[i], fwd, rel=1e-13) and close(td.js[i], js, rel=1e-13) and rev == math.inf
        t = targets[i]
        assert close(td.p_ref[i], math.exp(lp[t]), rel=1e-13) and close(td.p_cand[i], math.exp(lq[t]), rel=1e-13)
    assert td.p_ref[1] == 0.0 and td.nll_ref[1] == math.inf


def test_masked_reference_at_the_candidates_top_token_falls_back_to_the_robust_path():
    zr = np.array([-np.inf, 1.0, 0.5, -np.inf, 0.0])
    zc = np.array([3.0, 1.0, 0.4, -1.0, 0.1])  # the candidate's top token is masked in the reference
    td = divergence_logits(zr[None], zc[None])
    ref = mp_reference(zr, zc)
    assert td.robust[0] and td.reverse_kl[0] == math.inf
    assert close(td.forward_kl[0], ref["forward"]) and close(td.js[0], ref["js"])
