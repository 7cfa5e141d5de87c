"""Block uncertainty of a token-mean: the Politis-White block length, the cluster / circular-block /
i.i.d. bootstraps, paired differences and rankings, and a seeded calibration.

The calibration here is the fast one (CI on 2 cores): 200 replications x 199 resamples per cell on
16,384-token series, so its band is 90-99.5% (the Monte-Carlo SE of 200 replications is ~1.5%).
benchmarks/uncertainty_coverage.py runs >= 500 replications x 999 resamples and the strict 93-97%
(the figures in the README).
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from helpers_uncertainty import ASSERTED, SETTINGS, run_cell

from kldcard.compare.blocklength import block_length_politis_white, t_quantile
from kldcard.compare.bootstrap import block_bootstrap_intervals, block_bootstrap_mean_ci
from kldcard.compare.ranking import paired_difference_ci, rank_candidates
from kldcard.compare.summary import BootstrapOptions, summarize


def _gauss_ar1(n: int, rho: float, seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    e = rng.standard_normal(n) * math.sqrt(1 - rho * rho)
    y = np.empty(n)
    y[0] = rng.standard_normal()
    for t in range(1, n):
        y[t] = rho * y[t - 1] + e[t]
    return y


def test_t_quantile_matches_tables():
    # reference values (R: qt(0.975, df))
    for df, ref in [(3, 3.182446), (5, 2.570582), (10, 2.228139), (19, 2.093024), (63, 1.998341), (127, 1.978815)]:
        assert abs(t_quantile(0.975, df) - ref) / ref < (2e-3 if df < 10 else 1e-5)
    assert abs(t_quantile(0.975, math.inf) - 1.959964) < 1e-6
    assert abs(t_quantile(0.975, 1) - 12.7062) < 1e-3
    assert abs(t_quantile(0.975, 2) - 4.302653) < 1e-5


@pytest.mark.parametrize("rho", [0.5, 0.8])
def test_politis_white_length_near_theory(rho):
    # For AR(1): b_opt(CB) = (3/2 · (2ρ/(1−ρ²))²)^{1/3} n^{1/3}
    n = 32768
    theory = (1.5 * (2 * rho / (1 - rho * rho)) ** 2) ** (1 / 3) * n ** (1 / 3)
    got = [block_length_politis_white(_gauss_ar1(n, rho, s)) for s in range(5)]
    assert 0.6 * theory < np.median(got) < 1.5 * theory


def test_politis_white_white_noise_and_edge_cases():
    x = np.random.default_rng(0).standard_normal(50_000)
    assert block_length_politis_white(x) <= 4
    assert block_length_politis_white(np.ones(100)) == 1
    assert block_length_politis_white(np.array([1.0, 2.0])) == 1
    # b_max = ceil(min(3 sqrt n, n/3)) caps a random walk
    rw = np.cumsum(np.random.default_rng(1).standard_normal(900))
    assert block_length_politis_white(rw) <= math.ceil(min(3 * 30, 300))


def test_deterministic_and_methods():
    x = np.exp(_gauss_ar1(8192, 0.7, 3))
    blocks = np.repeat(np.arange(32), 256)
    a = block_bootstrap_mean_ci(x, blocks=blocks, seed=5)
    b = block_bootstrap_mean_ci(x, blocks=blocks, seed=5)
    assert a == b and a.method == "cluster" and a.n_blocks == 32 and a.interval == "studentized"
    assert a.lo < a.mean < a.hi
    few = block_bootstrap_mean_ci(x, blocks=np.repeat(np.arange(8), 1024))
    assert few.method == "circular-block" and few.block_length >= 2
    iid = block_bootstrap_mean_ci(x, method="iid", resamples=200)
    assert iid.method == "iid" and iid.interval == "percentile"
    # dependence: effective sample size well below n, iid interval much narrower
    assert a.n_eff < 0.5 * len(x) and few.n_eff < 0.5 * len(x)
    assert (iid.hi - iid.lo) < 0.7 * (a.hi - a.lo)
    assert few.n_eff_lrv is not None and 0.3 < few.n_eff / few.n_eff_lrv < 3
    all_iv = block_bootstrap_intervals(x, blocks=blocks, seed=5)
    assert all_iv["studentized"] == a and set(all_iv) == {"studentized", "t", "percentile", "basic"}


def test_iid_matches_old_summary_bootstrap():
    """method='iid' draws exactly what kldcard 0.1's per-token bootstrap drew (copied here)."""
    x = np.random.default_rng(2).gamma(0.3, 1.0, 3000)
    rng = np.random.default_rng(7)
    means = np.empty(300)
    chunk = max(1, (4 << 20) // len(x))
    for a in range(0, 300, chunk):
        b = min(a + chunk, 300)
        means[a:b] = x[rng.integers(0, len(x), size=(b - a, len(x)))].mean(axis=1)
    lo, hi = np.quantile(means, [0.025, 0.975])
    ci = block_bootstrap_mean_ci(x, method="iid", resamples=300, seed=7)
    assert (ci.lo, ci.hi) == (float(lo), float(hi))


def test_nan_dropped_inf_refused():
    x = np.r_[np.ones(50), np.nan, np.arange(50.0)]
    ci = block_bootstrap_mean_ci(x, resamples=100)
    assert ci.n == 100
    with pytest.raises(ValueError):
        block_bootstrap_mean_ci(np.r_[1.0, 2.0, np.inf])


def test_paired_difference_is_bootstrap_of_difference():
    rng = np.random.default_rng(4)
    a = np.exp(_gauss_ar1(6400, 0.6, 8)) * 0.1
    b = a * 1.05 + rng.standard_exponential(6400) * 0.001
    blocks = np.repeat(np.arange(25), 256)
    p = paired_difference_ci(a, b, blocks=blocks, seed=1, names=("x", "y"))
    d = block_bootstrap_mean_ci(b - a, blocks=blocks, seed=1)
    assert (p.lo, p.hi) == (d.lo, d.hi) and p.estimate == pytest.approx(float(np.mean(b - a)))
    assert p.excludes_zero and p.lo > 0  # b is 5% worse everywhere: paired design detects it
    # the unpaired intervals overlap although the paired one excludes 0
    ia, ib = block_bootstrap_mean_ci(a, blocks=blocks), block_bootstrap_mean_ci(b, blocks=blocks)
    assert ib.lo < ia.hi


def test_rank_candidates_groups_indistinguishable_candidates():
    rng = np.random.default_rng(9)
    base = np.exp(_gauss_ar1(12800, 0.8, 11)) * 0.05
    vals = {
        "q8": base + rng.standard_exponential(12800) * 0.0005,
        "q6": base + rng.standard_exponential(12800) * 0.0005,  # same mean as q8: indistinguishable
        "q4": base * 1.5 + rng.standard_exponential(12800) * 0.001,  # clearly worse
    }
    blocks = np.repeat(np.arange(50), 256)
    r = rank_candidates(vals, blocks, resamples=999)
    assert r.order[-1] == "q4"
    assert set(r.tiers[0]) == {"q8", "q6"} and r.tiers[-1] == ["q4"]
    assert r.letters["q8"] == r.letters["q6"] != r.letters["q4"]
    d = r.to_dict()
    assert [c["name"] for c in d["candidates"]] == r.order and len(d["pairs"]) == 3
    rb = rank_candidates(vals, blocks, resamples=999, adjust="bonferroni")
    assert rb.pair_level == pytest.approx(1 - 0.05 / 3)


def test_summarize_reports_block_interval_and_effective_sample_size():
    x = np.exp(_gauss_ar1(8192, 0.8, 5)) * 0.01
    blocks = np.repeat(np.arange(32), 256)
    windows = summarize(x, bootstrap=BootstrapOptions(resamples=400), blocks=blocks)
    moving = summarize(x, bootstrap=BootstrapOptions(resamples=400))
    iid = summarize(x, bootstrap=BootstrapOptions(resamples=400, method="iid"))
    assert windows.n_blocks == 32 and windows.block_length is None
    assert moving.block_length is not None and moving.block_length > 1
    assert iid.n_eff is None and iid.se_block is None
    for s in (windows, moving):
        assert s.n_eff < 0.5 * s.n  # strongly correlated tokens are worth far fewer than n
        assert (s.ci_high - s.ci_low) > 1.5 * (iid.ci_high - iid.ci_low)
    # a constant series (identical captures) has an exact mean: the interval is a point
    zero = summarize(np.zeros(500), bootstrap=BootstrapOptions(resamples=100))
    assert zero.ci_low == zero.ci_high == 0.0


# ----------------------------------------------------------------------------------------------
# Calibration: coverage of the 95% interval on series with a known mean
# ----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("setting", SETTINGS)
@pytest.mark.parametrize("scenario", ASSERTED)
def test_block_interval_covers_the_true_mean(scenario, setting):
    # 64 windows x 256 tokens; a white-noise series gets short blocks, so cap the blocks per resample
    # (a longer block only lowers the variance's bias) to keep the test in seconds
    cell = run_cell(scenario, setting, "auto", ("studentized",), 200, 199, 11, 64, 256,
                    max_blocks_per_resample=1024)[0]
    assert 0.90 <= cell.coverage <= 0.995, f"{scenario}/{setting}: {cell.coverage:.1%}"


def test_iid_interval_collapses_under_dependence():
    block = run_cell("ar0.9", "chunked", "auto", ("studentized",), 60, 199, 3, 64, 256)[0]
    iid = run_cell("ar0.9", "chunked", "iid", ("percentile",), 60, 99, 3, 64, 256)[0]
    assert iid.coverage < 0.7 < block.coverage
    assert iid.width_sum < 0.5 * block.width_sum
