"""FA2 split prediction: the issue's worked example is the oracle."""

from __future__ import annotations

from fractions import Fraction

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from kldcard.errors import UsageError
from kldcard.stack.splits import (
    GPU_SM_COUNTS,
    block_n_for_head_dim,
    fa2_num_splits,
    lookup_gpu,
    predict_splits,
)


@pytest.mark.parametrize(
    ("gpu", "sms", "splits", "group_tokens"),
    [("H200", None, 54, 512), ("B200", None, 62, 448), (None, 188, 87, 320), ("RTX PRO 6000 Blackwell", None, 87, 320)],
)
def test_worked_example_decode_27525_tokens_4_kv_heads(gpu, sms, splits, group_tokens):
    p = predict_splits(27525, 4, gpu=gpu, sm_count=sms, block_n=64)
    assert (p.splits, p.tokens_per_split) == (splits, group_tokens)
    assert p.n_blocks == 431
    assert not p.shortcut
    bounds = p.boundaries()
    assert len(bounds) == splits
    assert bounds[0][0] == 0 and bounds[-1][1] == 27525
    assert all(b - a == group_tokens for a, b in bounds[:-1])


def test_sm_table_has_the_issue_gpus():
    expected = {
        "H100 SXM": 132, "H100 PCIe": 114, "H200": 132, "B200": 148, "A100": 108, "L40S": 142,
        "RTX 4090": 128, "RTX 5090": 170, "RTX PRO 6000 Blackwell": 188,
    }
    for name, sms in expected.items():
        assert GPU_SM_COUNTS[name] == sms


@pytest.mark.parametrize(
    ("device_name", "canonical"),
    [
        ("NVIDIA H100 80GB HBM3", "H100 SXM"),
        ("NVIDIA H100 PCIe", "H100 PCIe"),
        ("NVIDIA H200", "H200"),
        ("NVIDIA A100-SXM4-80GB", "A100"),
        ("NVIDIA GeForce RTX 4090", "RTX 4090"),
        ("NVIDIA GeForce RTX 5090", "RTX 5090"),
        ("NVIDIA RTX PRO 6000 Blackwell Server Edition", "RTX PRO 6000 Blackwell"),
        ("NVIDIA L40S", "L40S"),
        ("NVIDIA L40", "L40"),
        ("NVIDIA L4", "L4"),
        ("NVIDIA A10G", "A10G"),
        ("NVIDIA GH200 480GB", "GH200"),
    ],
)
def test_torch_device_names_resolve(device_name, canonical):
    spec = lookup_gpu(device_name)
    assert spec is not None and spec.name == canonical


def test_unknown_gpu_is_a_one_line_usage_error():
    with pytest.raises(UsageError, match="--sms"):
        predict_splits(1000, 4, gpu="Voodoo 3")
    with pytest.raises(UsageError):
        predict_splits(1000, 4)  # neither --gpu nor --sms


def test_occupancy_shortcut_at_80_percent_of_twice_the_sms():
    # H200: 2 × 132 = 264 slots; 80% = 211.2. 53 × 4 = 212 tiles fill it, 52 × 4 = 208 do not.
    full = predict_splits(27525, 4, gpu="H200", batch=53)
    assert full.shortcut and full.splits == 1 and full.tokens_per_split == 431 * 64
    assert predict_splits(27525, 4, gpu="H200", batch=52).shortcut is False
    assert predict_splits(27525, 4, gpu="H200", batch=52).splits > 1
    # Prefill: many query blocks fill the GPU, so no split.
    assert predict_splits(4096, 8, gpu="H200", m_blocks=64).splits == 1


def test_fa2_comment_example_48_tiles_108_slots_gives_2_splits():
    # "batch * n_heads = 48 and we have 108 SMs, having 2 splits (efficiency = 0.89) is better than 3"
    assert fa2_num_splits(48, 54, 1000) == 2


def test_block_n_follows_head_dim():
    assert [block_n_for_head_dim(d) for d in (64, 96, 128, 256)] == [256, 128, 128, 64]


def _eligible(n_blocks: int, s: int) -> bool:
    return s == 1 or -(-n_blocks // s) != -(-n_blocks // (s - 1))


@settings(max_examples=300, deadline=None)
@given(
    tiles=st.integers(1, 400),
    sms=st.integers(1, 200),
    n_blocks=st.integers(1, 3000),
)
def test_choice_is_the_smallest_eligible_split_within_85_percent_of_the_best(tiles, sms, n_blocks):
    s = fa2_num_splits(tiles, sms, n_blocks)
    slots = 2 * sms
    if tiles >= 0.8 * slots:
        assert s == 1
        return
    limit = min(128, slots, n_blocks)
    assert 1 <= s <= limit and _eligible(n_blocks, s)

    def eff(k: int) -> Fraction:
        w = Fraction(tiles * k, slots)
        return w / -(-w.numerator // w.denominator)

    best = max(eff(k) for k in range(1, limit + 1) if _eligible(n_blocks, k))
    # Exact rationals vs the kernel's float32: allow a relative 1e-6 at the threshold.
    assert eff(s) >= Fraction(85, 100) * best * Fraction(999999, 1000000)
    for k in range(1, s):
        if _eligible(n_blocks, k):
            assert eff(k) < Fraction(85, 100) * best * Fraction(1000001, 1000000)


@settings(max_examples=200, deadline=None)
@given(seqlen=st.integers(1, 200_000), heads=st.integers(1, 16), sms=st.integers(1, 200), block=st.sampled_from([64, 128, 256]))
def test_every_predicted_group_is_non_empty_and_covers_the_sequence(seqlen, heads, sms, block):
    p = predict_splits(seqlen, heads, sm_count=sms, block_n=block)
    b = p.boundaries()
    assert len(b) == p.splits
    assert b[0][0] == 0 and b[-1][1] == seqlen
    assert all(x[1] == y[0] for x, y in zip(b, b[1:]))
