"""Summary statistics against values computed by hand."""

from __future__ import annotations

import math

import numpy as np
import pytest

from kldcard.compare.summary import (
    BootstrapOptions,
    bucket_edges,
    disagreement_runs,
    percentiles_of,
    proportion,
    range_stats,
    rms,
    summarize,
)
from kldcard.errors import UsageError


def test_summary_of_four_values():
    s = summarize([1.0, 2.0, 3.0, 4.0], percentiles=[90, 50, 10, 0, 100], bootstrap=BootstrapOptions(resamples=0))
    assert s.n == 4 and s.mean == 2.5 and s.median == 2.5 and s.min == 1.0 and s.max == 4.0
    # population variance 1.25, SE = sqrt(1.25 / 3) (llama.cpp's formula)
    assert s.se == pytest.approx(math.sqrt(1.25 / 3), rel=1e-15)
    # position f·(N−1): 0.9·3 = 2.7 -> 3 + 0.7 = 3.7; 0.1·3 = 0.3 -> 1.3
    assert s.percentiles == {"90": pytest.approx(3.7), "50": 2.5, "10": pytest.approx(1.3), "0": 1.0, "100": 4.0}
    assert s.ci_low is None and s.ci_high is None


def test_percentiles_match_numpy_and_handle_infinity():
    x = np.random.default_rng(0).exponential(size=1001)
    ps = [99.9, 99, 95, 90, 10, 5, 1, 0.1]
    np.testing.assert_allclose(percentiles_of(x, ps), np.percentile(x, ps), rtol=1e-14)
    assert percentiles_of(np.array([1.0, 2.0, np.inf]), [50, 75, 100]) == [2.0, math.inf, math.inf]


def test_bootstrap_ci_is_seeded_and_brackets_the_mean():
    x = np.random.default_rng(1).exponential(size=500)
    a = summarize(x, bootstrap=BootstrapOptions(resamples=400, level=0.9, seed=7))
    b = summarize(x, bootstrap=BootstrapOptions(resamples=400, level=0.9, seed=7))
    c = summarize(x, bootstrap=BootstrapOptions(resamples=400, level=0.9, seed=8))
    assert a == b and a.ci_low != c.ci_low
    assert a.ci_low < a.mean < a.ci_high
    # a 90% percentile-bootstrap interval of a mean is about ±1.645 SE
    assert (a.ci_high - a.ci_low) / (2 * 1.645 * a.se) == pytest.approx(1.0, abs=0.15)


def test_nan_entries_are_dropped_and_inf_disables_uncertainty():
    s = summarize([1.0, np.nan, 3.0], bootstrap=BootstrapOptions(resamples=10))
    assert s.n == 2 and s.mean == 2.0
    t = summarize([1.0, np.inf, 3.0], bootstrap=BootstrapOptions(resamples=10))
    assert t.mean == math.inf and t.n_infinite == 1 and t.se is None and t.ci_low is None


def test_proportion_and_rms():
    p, se = proportion([True, True, False, True])
    assert p == 0.75 and se == pytest.approx(math.sqrt(0.75 * 0.25 / 3))
    r, rse = rms(np.array([0.1, -0.1, 0.2, np.nan]))
    assert r == pytest.approx(math.sqrt((0.01 + 0.01 + 0.04) / 3))
    sq = np.array([0.01, 0.01, 0.04])
    assert rse == pytest.approx(0.5 * math.sqrt(sq.var() / 2) / r)


def test_bucket_edges():
    pos = np.array([0, 5, 130, 700])
    assert bucket_edges(pos) == [0, 128, 256, 512, 701]
    assert bucket_edges(pos, "width:300") == [0, 300, 600, 701]
    assert bucket_edges(pos, "0,100,1000") == [0, 100, 701]
    assert bucket_edges(np.array([3, 9])) == [0, 10]
    for bad in ("width:0", "5,10", "0,10,10", "nonsense"):
        with pytest.raises(UsageError):
            bucket_edges(pos, bad)


def test_range_stats_by_hand():
    pos = np.array([0, 1, 2, 200, 201])
    fwd = np.array([1.0, 2.0, 3.0, 10.0, 20.0])
    agree = np.array([True, False, True, True, True])
    dp = np.array([0.1, 0.1, 0.1, 0.0, np.nan])
    rs = range_stats(pos, fwd, fwd / 2, fwd / 4, agree, dp, [0, 128, 256, 512])
    assert [(r.start, r.end, r.n) for r in rs] == [(0, 128, 3), (128, 256, 2)]  # empty bucket left out
    assert rs[0].forward_kl.mean == 2.0 and rs[1].forward_kl.mean == 15.0
    assert rs[0].top1_agreement == pytest.approx(2 / 3) and rs[1].reverse_kl_mean == 7.5
    assert rs[0].rms_delta_p == pytest.approx(0.1) and rs[1].rms_delta_p == 0.0


def test_disagreement_runs():
    pos = np.arange(100, 112)
    agree = np.array([1, 0, 0, 1, 0, 1, 0, 0, 0, 0, 0, 1], dtype=bool)
    runs = disagreement_runs(pos, agree)
    assert runs.n_runs == 3 and runs.n_disagreements == 8 and runs.longest == 5
    assert [(r.start, r.length) for r in runs.top] == [(106, 5), (101, 2), (104, 1)]
    assert runs.length_histogram == {"2": 1, "1": 1, "5-8": 1}
    assert runs.mean_length == pytest.approx(8 / 3)
    none = disagreement_runs(pos, np.ones(12, bool))
    assert none.n_runs == 0 and none.longest == 0 and none.top == []
