"""Hypothesis properties of the divergence kernel (float64 maths)."""

from __future__ import annotations

import math

import numpy as np
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from kldcard.compare.divergence import RowKernel, _robust_row, row_divergence

finite = st.floats(min_value=-1e4, max_value=1e4, allow_nan=False, allow_infinity=False, width=32)
with_masks = st.one_of(finite, finite, finite, st.just(-math.inf))
SETTINGS = settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def _pair(draw, elements):
    n = draw(st.integers(min_value=1, max_value=64))
    a = draw(arrays(np.float64, n, elements=elements))
    b = draw(arrays(np.float64, n, elements=elements))
    return a, b


@st.composite
def finite_pairs(draw):
    return _pair(draw, finite)


@st.composite
def masked_pairs(draw):
    a, b = _pair(draw, with_masks)
    assume(np.isfinite(a).any() and np.isfinite(b).any())
    return a, b


@st.composite
def close_pairs(draw):
    """A candidate that differs from the reference by tiny amounts (the cross-kernel regime)."""
    n = draw(st.integers(min_value=2, max_value=64))
    a = draw(arrays(np.float64, n, elements=st.floats(-30, 30, width=32)))
    scale = draw(st.sampled_from([0.0, 1e-7, 1e-5, 1e-3, 1e-1]))
    noise = draw(arrays(np.float64, n, elements=st.floats(-1, 1)))
    return a, (a + scale * noise).astype(np.float32).astype(np.float64)


@SETTINGS
@given(masked_pairs())
def test_divergence_of_a_distribution_with_itself_is_exactly_zero(pair):
    a, _ = pair
    assert row_divergence(a, a.copy()) == (0.0, 0.0, 0.0)


@SETTINGS
@given(finite_pairs())
def test_finite_logits_give_finite_non_negative_bounded_results(pair):
    f, r, j = row_divergence(*pair)
    assert all(math.isfinite(x) and x >= 0.0 for x in (f, r, j))
    assert j <= math.log(2) * (1 + 1e-12)
    # JS is at most a quarter of forward + reverse (Lin 1991: JS <= (KL(P||M)+KL(Q||M))/2 <= (f+r)/4)
    assert j <= 0.25 * (f + r) * (1 + 1e-9) + 1e-300


@SETTINGS
@given(masked_pairs())
def test_masked_entries_give_inf_or_finite_never_nan(pair):
    a, b = pair
    f, r, j = row_divergence(a, b)
    assert not any(math.isnan(x) for x in (f, r, j)) and min(f, r, j) >= 0.0
    # a finite logit has probability > 0: masking it on the other side makes that direction infinite
    assert (f == math.inf) == bool(np.any(np.isfinite(a) & np.isneginf(b)))
    assert (r == math.inf) == bool(np.any(np.isfinite(b) & np.isneginf(a)))
    assert math.isfinite(j) and j <= math.log(2) * (1 + 1e-12)


@SETTINGS
@given(masked_pairs(), st.randoms(use_true_random=False))
def test_invariant_to_vocabulary_permutation(pair, rnd):
    a, b = pair
    perm = np.array(rnd.sample(range(len(a)), len(a)))
    x = row_divergence(a, b)
    y = row_divergence(a[perm], b[perm])
    for u, v in zip(x, y):
        assert u == v or abs(u - v) <= 1e-12 * abs(u) + 1e-300


@SETTINGS
@given(close_pairs())
def test_fast_and_robust_paths_agree(pair):
    a, b = pair
    fast = RowKernel(len(a))(a, b)
    slow = _robust_row(a, b)
    for u, v in zip(fast[:3], slow[:3]):
        assert abs(u - v) <= 1e-11 * abs(v) + 1e-300


@SETTINGS
@given(close_pairs())
def test_forward_and_reverse_agree_to_second_order_for_close_distributions(pair):
    # for q = p(1 + ε) both directions are ½Σpε² + O(ε³): a sign or factor error would show here
    a, b = pair
    f, r, j = row_divergence(a, b)
    if f > 1e-300:
        assert r == r and abs(f - r) <= 0.5 * max(f, r)
        assert abs(j - 0.25 * f) <= 0.5 * 0.25 * f


def test_rows_closer_than_an_ulp_of_their_normaliser_keep_the_js_bound():
    """Found by Hypothesis: a robust-path row (a 701-nat range) whose only other difference is a
    logit 1.2e-38 apart. Taking ls_r − ls_c directly lost the whole answer (JS 20× too large);
    the normaliser gap is now taken through expm1, so JS ≈ (f + r)/8 as the series says."""
    a = np.zeros(22)
    a[0], a[1] = 1.17549435e-38, -701.0
    b = np.zeros(22)
    b[1] = -697.0
    f, r, j = row_divergence(a, b)
    assert f > 0 and math.isclose(f, r, rel_tol=1e-9)
    assert math.isclose(j, (f + r) / 8, rel_tol=1e-6)
