"""bf16 split-softmax simulator: exact maths agrees across groupings, bf16 does not."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from kldcard.errors import UsageError
from kldcard.stack.simulate import (
    compare_groupings,
    even_boundaries,
    exact_attention,
    find_divergent_inputs,
    random_inputs,
    round_bf16,
    simulate_groupings,
    split_attention,
)
from kldcard.stack.splits import predict_splits


def test_round_bf16_matches_torch():
    import torch  # a real second implementation (torch is in the test extra)
    rng = np.random.default_rng(1)
    x = np.concatenate(
        [
            rng.standard_normal(10_000).astype(np.float32) * np.float32(1e3),
            np.array([0.0, -0.0, 1.0, np.inf, -np.inf, 3.4e38, 1e-40, 1.00390625, 1.01171875], dtype=np.float32),
        ]
    )
    ours = round_bf16(x)
    theirs = torch.from_numpy(x).to(torch.bfloat16).to(torch.float32).numpy()
    assert np.array_equal(ours, theirs)
    assert np.isnan(round_bf16(np.array([np.nan], dtype=np.float32)))[0]


def _boundaries(draw, n: int) -> list[int]:
    cuts = draw(st.lists(st.integers(1, max(1, n - 1)), max_size=6, unique=True)) if n > 1 else []
    return [0, *sorted(c for c in cuts if 0 < c < n), n]


@st.composite
def attention_case(draw):
    n = draw(st.integers(1, 200))
    d = draw(st.integers(1, 8))
    elems = st.floats(-8, 8, allow_nan=False, allow_infinity=False, width=32)
    q = draw(arrays(np.float32, d, elements=elems))
    k = draw(arrays(np.float32, (n, d), elements=elems))
    v = draw(arrays(np.float32, (n, d), elements=elems))
    return q, k, v, _boundaries(draw, n), _boundaries(draw, n), draw(st.sampled_from([1, 7, 64]))


@settings(max_examples=150, deadline=None)
@given(attention_case())
def test_float64_results_agree_across_groupings_to_rounding(case):
    q, k, v, ba, bb, block = case
    a = split_attention(q, k, v, ba, precision="f64", block_n=block)
    b = split_attention(q, k, v, bb, precision="f64", block_n=block)
    exact = exact_attention(q, k, v)
    tol = 1e-12 * max(1.0, float(np.abs(v).max()))
    assert np.allclose(a, b, rtol=1e-12, atol=tol)
    assert np.allclose(a, exact, rtol=1e-12, atol=tol)


@settings(max_examples=60, deadline=None)
@given(attention_case())
def test_bf16_results_stay_close_to_exact(case):
    # Every grouping is a valid kernel: bf16 outputs are within bf16 rounding of the exact output.
    q, k, v, ba, _, block = case
    out = split_attention(q, k, v, ba, block_n=block)
    exact = exact_attention(round_bf16(q), round_bf16(k), round_bf16(v))
    assert np.all(np.abs(out - exact) <= 0.03 * max(1.0, float(np.abs(v).max())))


def test_bf16_outputs_differ_for_the_worked_example_groupings():
    n = 27525
    inputs = random_inputs(n, 128, seed=0)
    h200 = even_boundaries(n, predict_splits(n, 4, gpu="H200").splits)
    b200 = even_boundaries(n, predict_splits(n, 4, gpu="B200").splits)
    assert (len(h200) - 1, h200[1]) == (54, 512) and (len(b200) - 1, b200[1]) == (62, 448)
    bf16 = compare_groupings(inputs, h200, b200)
    f64 = compare_groupings(inputs, h200, b200, precision="f64")
    assert bf16.n_different > 0 and bf16.max_abs_diff > 0
    assert f64.max_abs_diff < 1e-14


@pytest.mark.parametrize("partial_dtype", ["bf16", "f32"])
@pytest.mark.parametrize(("n", "ga", "gb"), [(512, 1, 2), (4096, 7, 8), (3000, 3, 5)])
def test_search_finds_inputs_where_two_groupings_differ(n, ga, gb, partial_dtype):
    a, b = even_boundaries(n, ga), even_boundaries(n, gb)
    found = find_divergent_inputs(n, 64, a, b, seed=0, max_tries=32, partial_dtype=partial_dtype)
    assert found is not None
    # The found inputs reproduce the difference when recomputed from scratch.
    again = compare_groupings(found.inputs, a, b, partial_dtype=partial_dtype)
    assert again.n_different == found.n_different > 0
    assert np.array_equal(random_inputs(n, 64, found.seed, (0.5, 1.0, 2.0, 4.0)[(found.tries - 1) % 4])["k"], found.inputs["k"])


def test_identical_groupings_never_differ():
    assert find_divergent_inputs(600, 16, even_boundaries(600, 3), even_boundaries(600, 3), max_tries=4) is None


def test_even_boundaries_follow_whole_kv_blocks():
    assert even_boundaries(27525, 54, 64)[:3] == [0, 512, 1024]
    assert even_boundaries(27525, 54, 64)[-1] == 27525
    assert even_boundaries(100, 1, 64) == [0, 100]


def test_bad_boundaries_are_usage_errors():
    q, k, v = np.ones(4), np.ones((10, 4)), np.ones((10, 4))
    with pytest.raises(UsageError):
        split_attention(q, k, v, [0, 5])
    with pytest.raises(UsageError):
        split_attention(q, k, v, [0, 6, 6, 10])
    with pytest.raises(UsageError):
        split_attention(q, k, v, [0, 10], precision="f16")


def test_simulate_groupings_reports_bf16_difference_and_f64_agreement():
    r = simulate_groupings(2048, 64, [1, 4, 16], seed=3)
    assert [row["groups"] for row in r["compared"]] == [4, 16]
    assert any(row["bf16_n_different"] > 0 for row in r["compared"])
    assert all(row["f64_max_abs_diff"] < 1e-14 for row in r["compared"])
    with pytest.raises(UsageError):
        simulate_groupings(2048, 64, [4])
