"""Where divergence lives: the onset test (a fast version of benchmarks/onset_calibration.py), the
clusters, the late-against-early difference, per-range intervals, and the card's words for them."""

from __future__ import annotations

import numpy as np
import pytest
from helpers_onset import calibrate, simulate

from kldcard.compare.depth import depth_profile, late_vs_early
from kldcard.compare.onset import cusum, find_clusters, onset_test
from kldcard.compare.summary import BootstrapOptions, range_stats
from kldcard.render.depth import n_eff_text, onset_words


def test_cusum_is_the_recursion():
    y = np.random.default_rng(0).normal(size=300) - 0.2
    s, out = 0.0, []
    for v in y:
        s = max(0.0, s + v)
        out.append(s)
    assert np.allclose(cusum(y), out, rtol=0, atol=1e-12)


def test_onset_calibration_fast_version():
    """60 series of each kind (the benchmark runs 400): the stated false-alarm rate is 5%."""
    res = calibrate(series=60, points=512, tolerance=16, alpha=0.05, seed=0, permutations=400)
    assert res["none"]["alarms"] <= 6, res  # 10% of 60 (expected 3)
    assert res["step"]["rate"] >= 0.85 and res["step"]["within"] >= 0.6, res
    assert res["clusters"]["rate"] >= 0.8 and res["clusters"]["within"] >= 0.4, res


def test_onset_needs_enough_points_and_is_seeded():
    rng = np.random.default_rng(3)
    logk, differs, _ = simulate("step", 40, rng)
    assert onset_test(logk, differs) is None  # fewer than MIN_POINTS depth points: no test
    logk, differs, tau = simulate("clusters", 512, rng)
    a, b = onset_test(logk, differs, seed=1), onset_test(logk, differs, seed=1)
    assert a == b and a.alarm and a.onset_index <= a.alarm_index and a.onset_index >= a.baseline_points


def test_clusters_stay_in_their_window_and_carry_their_kld():
    win = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    kld = np.array([1.0, 5.0, 5.0, 1.0, 5.0, 5.0, 1.0, 5.0])
    differs = np.array([0, 1, 0, 0, 0, 0, 0, 1], bool)
    runs = find_clusters(win, kld, differs, kld > 2)
    # [1,2] in window 0; window 1 starts a new run even though index 3 -> 4 is not flagged: [4,5], [7]
    assert [(r.window, r.first, r.last, r.kld_sum, r.n_top1_differs) for r in runs] == [
        (0, 1, 2, 10.0, 1), (1, 4, 5, 10.0, 0), (1, 7, 7, 5.0, 1)]
    win2 = np.array([0, 0, 1, 1])
    assert [(r.first, r.last) for r in find_clusters(win2, np.ones(4), np.zeros(4, bool), np.ones(4, bool))] == [
        (0, 1), (2, 3)]


def _series(onset_at: int | None, n: int = 8192, every: int = 16, seed: int = 0):
    """One window of ``n`` tokens scored every ``every``: tiny KLD with rare top-1 flips, then (from
    ``onset_at``) bursts of large KLD with flips."""
    rng = np.random.default_rng(seed)
    depth = np.arange(0, n, every)
    kld = np.exp(rng.normal(-9, 0.5, len(depth)))
    agree = rng.random(len(depth)) > 0.02
    if onset_at is not None:
        i = onset_at // every
        while i < len(depth):
            kld[i:i + 6] *= 400
            agree[i:i + 6] = rng.random(len(agree[i:i + 6])) > 0.5
            i += 6 + int(rng.integers(10, 40))
    return depth, kld, agree


def test_depth_profile_finds_a_known_onset_and_its_clusters():
    depth, kld, agree = _series(6144)
    edges = [0, 128, 256, 512, 1024, 2048, 4096, 8192]
    p = depth_profile(depth, None, kld, agree, edges)
    assert p.onset.detected and abs(p.onset.depth - 6144) <= 16 * 16
    assert p.n_clusters_after_onset >= 3 and p.share_after_onset > 0.8
    assert p.top_clusters[0].kld_share >= p.top_clusters[-1].kld_share
    le = p.late_vs_early
    assert le.late == [4096, 8192] and le.early[0] == 0 and le.ci_low > 0 and le.diff > 0
    words = onset_words(p)
    assert words.startswith("agrees with the reference up to about 6,1") and "cluster(s) hold" in words


def test_depth_profile_without_onset_says_so():
    depth, kld, agree = _series(None)
    p = depth_profile(depth, None, kld, agree, [0, 2048, 4096, 8192])
    assert not p.onset.detected and p.onset.depth is None and p.n_clusters_after_onset is None
    assert onset_words(p).startswith("no onset of disagreement")
    assert p.late_vs_early.ci_low < 0 < p.late_vs_early.ci_high


def test_late_vs_early_pairs_by_window_with_many_windows():
    rng = np.random.default_rng(1)
    depth = np.tile(np.arange(0, 1024, 8), 25)
    win = np.repeat(np.arange(25), 128)
    kld = np.exp(rng.normal(-6, 0.3, len(depth))) * np.where(depth >= 512, 3.0, 1.0)
    d = late_vs_early(depth, win, kld, [0, 256, 512, 1024], 256)
    assert "paired by window" in d.method and d.ci_low > 0


@pytest.mark.parametrize("windows", [1, 24])
def test_every_output_range_carries_its_interval_and_effective_n(windows):
    rng = np.random.default_rng(2)
    per = 4096 // windows
    n = per * windows
    pos = np.tile(np.arange(per), windows)
    ids = np.repeat(np.arange(windows), per)
    kld = rng.exponential(0.01, n)
    agree = rng.random(n) > 0.1
    rs = range_stats(pos, kld, kld, kld / 2, agree, np.zeros(n), [0, 64, 128, 256, n],
                     bootstrap=BootstrapOptions(resamples=200), blocks=ids if windows > 1 else None)
    for r in rs:
        assert r.forward_kl.ci_low < r.forward_kl.mean < r.forward_kl.ci_high
        assert r.forward_kl.n_eff is not None


def test_effective_n_above_n_is_capped_and_says_why():
    assert n_eff_text(120.4, 100) == "100 of 100 (estimate 120: no positive dependence found, capped at n)"
    assert n_eff_text(40.2, 100) == "40 of 100" and n_eff_text(None, 100) == "n/a"
