"""llama-perplexity's statistics: per-token formulas, uncertainty rules, percentiles, printed block."""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers_llamacpp import c_expf, encode_row, peaked_logits

from kldcard.llamacpp.basefile import encode_records
from kldcard.llamacpp.stats import (
    LlamaKldAccumulator,
    PerToken,
    covariance,
    format_report,
    mean_and_uncertainty,
    median,
    per_token,
    percentile,
)

F = np.float32


# ------------------------------------------------------------------------------------------------
# Per-token quantities against a plain loop written from the reference (§4.1)
# ------------------------------------------------------------------------------------------------


def _plain_per_token(z, scale, mn, codes, tok):
    z = [F(v) for v in z]
    imax, hi = 0, z[0]
    for i, v in enumerate(z):
        if v > hi:
            hi, imax = v, i
    total = 0.0
    for v in z:
        total += float(c_expf(F(v - hi)))
    lse = F(math.log(total))
    nll = F(F(hi + lse) - z[tok])
    nll_base = F(-F(F(F(scale) * F(codes[tok])) + F(mn)))
    top = F(hi + lse)
    kld = 0.0
    imax_base, best = -1, F(0)
    for i, c in enumerate(codes):
        lpb = F(F(F(scale) * F(c)) + F(mn))
        if i == 0 or lpb > best:
            best, imax_base = lpb, i
        if lpb > F(-16.0):
            kld += float(F(c_expf(lpb) * F(F(lpb - z[i]) + top)))
    p_diff = F(c_expf(-nll) - c_expf(-nll_base))
    return nll, nll_base, kld, p_diff, imax == imax_base


def test_per_token_matches_the_plain_loop():
    rng = np.random.default_rng(5)
    n, v = 24, 53
    base = peaked_logits(rng, n, v)
    cand = base + rng.standard_normal((n, v)).astype(F) * F(0.3)
    targets = rng.integers(0, v, n)
    raw = encode_records(base)
    t = per_token(cand, raw, targets, v)
    for i in range(n):
        scale, mn, codes = encode_row(base[i])
        nll, nll_base, kld, p_diff, same = _plain_per_token(cand[i], scale, mn, codes, int(targets[i]))
        assert t.nll[i] == nll and t.nll_base[i] == nll_base and t.p_diff[i] == p_diff
        assert t.kld[i] == pytest.approx(kld, rel=0, abs=1e-12)
        assert bool(t.same_top[i]) == same


def test_identical_distributions_give_near_zero_kld_and_same_top():
    rng = np.random.default_rng(6)
    z = peaked_logits(rng, 8, 101)
    t = per_token(z, encode_records(z), np.zeros(8, dtype=np.int64), 101)
    assert np.all(np.abs(t.kld) < 1e-4) and t.same_top.all()


# ------------------------------------------------------------------------------------------------
# Uncertainty rules and order statistics, by hand
# ------------------------------------------------------------------------------------------------


def test_standard_error_needs_more_than_ten_tokens():
    xs = [float(i) for i in range(10)]
    assert mean_and_uncertainty(sum(xs), sum(x * x for x in xs), 10) == (4.5, 0.0)
    xs.append(10.0)
    m, se = mean_and_uncertainty(sum(xs), sum(x * x for x in xs), 11)
    assert m == 5.0 and se == pytest.approx(math.sqrt((385 / 11 - 25) / 10))  # = sqrt(1.0) = 1
    assert se == pytest.approx(1.0)
    assert mean_and_uncertainty(3.0, 9.0, 0) == (0.0, 0.0)
    assert mean_and_uncertainty(33.0, 99.0, 11)[1] == 0.0  # zero variance -> 0, not nan


def test_covariance_is_zero_below_ten_tokens():
    a = [1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0, 9.0]
    sab = sum(x * x for x in a)
    assert covariance(sum(a), sum(a), sab, 9) == 0.0
    a.append(10.0)
    sab = sum(x * x for x in a)
    assert covariance(sum(a), sum(a), sab, 10) == pytest.approx((385 / 10 - 5.5 * 5.5) / 9)


def test_percentile_interpolates_in_float32():
    v = np.arange(10, dtype=F)  # 0 … 9
    # p = f·(N−1) = 0.999·9 = 8.991 → 0.009·8 + 0.991·9
    assert percentile(v, 0.999) == F(F(F(1) - F(F(F(0.999) * F(9)) - F(8))) * F(8) + F(F(F(F(0.999) * F(9)) - F(8)) * F(9)))
    assert float(percentile(v, 0.999)) == pytest.approx(8.991, abs=1e-5)
    assert float(percentile(v, 0.5)) == 4.5
    assert percentile(v, 0.0) == 0 and percentile(v, 1.0) == 9 and percentile(v, -1) == 0
    assert float(percentile(v, 0.05)) == pytest.approx(0.45, abs=1e-6)


def test_median_is_middle_or_mean_of_middles():
    assert median(np.array([1, 2, 3], dtype=F)) == 2
    assert median(np.array([1, 2, 3, 10], dtype=F)) == F(2.5)


# ------------------------------------------------------------------------------------------------
# The printed block, from per-token values chosen so every number can be worked out by hand
# ------------------------------------------------------------------------------------------------


def _hand_tokens(n: int) -> PerToken:
    i = np.arange(n)
    nll = np.where(i % 2 == 0, F(2.0), F(1.0)).astype(F)  # candidate
    nll_base = np.where(i % 3 == 0, F(1.5), F(1.0)).astype(F)
    kld = (i / (n - 1)).astype(np.float64)  # 0 … 1
    p_diff = ((i - (n - 1) / 2) / 1000).astype(F)
    same = i % 10 != 0
    return PerToken(nll, nll_base, kld, p_diff, same)


def _fmt(x, spec):
    return ("%" + spec + "f") % x


def test_final_block_matches_hand_computed_values():
    n = 101
    t = _hand_tokens(n)
    acc = LlamaKldAccumulator()
    acc.add(t)
    acc.end_chunk(1)
    text = format_report(acc.finish(), repeat_chunk_header=False)

    nq = [2.0 if i % 2 == 0 else 1.0 for i in range(n)]
    nb = [1.5 if i % 3 == 0 else 1.0 for i in range(n)]
    mq, mb = sum(nq) / n, sum(nb) / n
    se_q = math.sqrt((sum(x * x for x in nq) / n - mq * mq) / (n - 1))
    se_b = math.sqrt((sum(x * x for x in nb) / n - mb * mb) / (n - 1))
    cov = (sum(a * b for a, b in zip(nq, nb)) / n - mq * mb) / (n - 1)
    ppl_q, ppl_b = math.exp(mq), math.exp(mb)
    ratio_unc = math.sqrt(se_q**2 + se_b**2 - 2 * cov)
    kl = [i / 100 for i in range(n)]
    kl_se = math.sqrt((sum(x * x for x in kl) / n - 0.25) / (n - 1))
    dp = [float(F((i - 50) / 1000)) for i in range(n)]
    dp2 = [float(F(F(x) * F(x))) for x in dp]
    dp_m = sum(dp) / n
    dp_se = math.sqrt((sum(dp2) / n - dp_m**2) / (n - 1))
    mse = sum(dp2) / n
    mse_se = math.sqrt((sum(x * x for x in dp2) / n - mse**2) / (n - 1))
    top = 90 / 101

    expected = [
        "====== Perplexity statistics ======",
        f"Mean PPL(Q)                   : {_fmt(ppl_q, '10.6')} ± {_fmt(ppl_q * se_q, '10.6')}",
        f"Mean PPL(base)                : {_fmt(ppl_b, '10.6')} ± {_fmt(ppl_b * se_b, '10.6')}",
        f"Cor(ln(PPL(Q)), ln(PPL(base))): {_fmt(100 * cov / (se_q * se_b), '6.2')}%",
        f"Mean ln(PPL(Q)/PPL(base))     : {_fmt(mq - mb, '10.6')} ± {_fmt(ratio_unc, '10.6')}",
        f"Mean PPL(Q)/PPL(base)         : {_fmt(math.exp(mq - mb), '10.6')} ± "
        f"{_fmt(math.exp(mq - mb) * ratio_unc, '10.6')}",
        f"Mean PPL(Q)-PPL(base)         : {_fmt(ppl_q - ppl_b, '10.6')} ± "
        f"{_fmt(math.sqrt((ppl_q * se_q) ** 2 + (ppl_b * se_b) ** 2 - 2 * ppl_q * ppl_b * cov), '10.6')}",
        "",
        "====== KL divergence statistics ======",
        f"Mean    KLD:   0.500000 ± {_fmt(kl_se, '10.6')}",
        "Maximum KLD:   1.000000",
        "99.9%   KLD:   0.999000",  # p = 99.9 → 0.1·0.99 + 0.9·1.00
        "99.0%   KLD:   0.990000",
        "95.0%   KLD:   0.950000",
        "90.0%   KLD:   0.900000",
        "Median  KLD:   0.500000",
        "10.0%   KLD:   0.100000",
        " 5.0%   KLD:   0.050000",
        " 1.0%   KLD:   0.010000",
        " 0.1%   KLD:   0.001000",
        "Minimum KLD:   0.000000",
        "",
        "====== Token probability statistics ======",
        f"Mean    Δp: {_fmt(100 * dp_m, '6.3')} ± {_fmt(100 * dp_se, '5.3')} %",
        "Maximum Δp:  5.000%",
        "99.9%   Δp:  4.990%",
        "99.0%   Δp:  4.900%",
        "95.0%   Δp:  4.500%",
        "90.0%   Δp:  4.000%",
        "75.0%   Δp:  2.500%",
        "Median  Δp:  0.000%",
        "25.0%   Δp: -2.500%",
        "10.0%   Δp: -4.000%",
        " 5.0%   Δp: -4.500%",
        " 1.0%   Δp: -4.900%",
        " 0.1%   Δp: -4.990%",
        "Minimum Δp: -5.000%",
        f"RMS Δp    : {_fmt(100 * math.sqrt(mse), '6.3')} ± {_fmt(100 * 0.5 / math.sqrt(mse) * mse_se, '5.3')} %",
        f"Same top p: {_fmt(100 * top, '6.3')} ± {_fmt(100 * math.sqrt(top * (1 - top) / (n - 1)), '5.3')} %",
    ]
    block = text[text.index("====== Perplexity statistics") :].rstrip("\n").split("\n")
    assert block == expected
    # the per-chunk line (cumulative; one chunk here)
    chunk = text.split("\n")[2]
    assert chunk.startswith("   1    ") and chunk.endswith(f"{_fmt(100 * top, '6.3')} ± "
                                                           f"{_fmt(100 * math.sqrt(top * (1 - top) / 100), '6.3')} %")
    assert text.split("\n")[1].startswith("chunk             PPL               ln(PPL(Q)/PPL(base))")


def test_fewer_than_100_tokens_prints_no_final_blocks():
    acc = LlamaKldAccumulator()
    for c in range(3):
        t = _hand_tokens(33)
        acc.add(t)
        acc.end_chunk(c + 1)
    stats = acc.finish()
    assert stats.n_tokens == 99 and not stats.has_final_blocks
    text = format_report(stats)
    assert "======" not in text
    assert text.count("chunk             PPL") == 1  # header once, as the vendored llama-perplexity prints it
    assert format_report(stats, repeat_chunk_header=True).count("chunk             PPL") == 3  # as at 050fc7f3
    # …but the numbers are still computed (for JSON)
    assert stats.kld_mean == pytest.approx(0.5)


def test_tiny_counts_follow_llama_cpp_rules():
    acc = LlamaKldAccumulator()
    t = _hand_tokens(10)
    acc.add(t)
    line = acc.end_chunk(1)
    s = acc.finish()
    assert s.kld_se == 0.0 and s.ppl_q_unc == 0.0  # N = 10: no SE
    assert s.ppl_q_unc == 0.0 and math.isinf(s.cor_ln_ppl)  # cov ≠ 0 (N ≥ 10) over SE·SE = 0, as in C
    # SE_Q² + SE_P² − 2·cov < 0 → sqrt gives NaN, which glibc prints as -nan
    assert line.split("±")[2].split()[0] == "-nan"
    assert s.to_dict()["cor_ln_ppl"] is None and s.to_dict()["ln_ppl_ratio_unc"] is None  # JSON: no NaN/inf


def test_row_sums_are_plain_left_to_right_double_sums():
    from kldcard.llamacpp.libm import row_sums_in_order

    rng = np.random.default_rng(8)
    x = (rng.standard_normal((3, 4099)) * np.exp(rng.standard_normal((3, 4099)) * 6)).astype(F)
    for i in range(3):
        total = 0.0
        for v in x[i].tolist():
            total += v
        assert row_sums_in_order(x)[i] == total  # bit for bit, not pairwise
