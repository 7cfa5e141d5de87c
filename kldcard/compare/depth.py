"""Where divergence lives along the context window: the onset of disagreement, its clusters, and the
late output range against the early one (the wrapper over :mod:`kldcard.compare.onset`).

Depth is a scored position's offset inside its context window (tokens of left context). Every
divergence is forward KL(P_ref ‖ P_cand) in nats. :func:`depth_profile` returns the card's
:class:`~kldcard.schema.DepthProfile` (the card's words for it: :mod:`kldcard.render.depth`).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from statistics import NormalDist

import numpy as np

from kldcard.compare.bootstrap import MIN_CLUSTERS, block_bootstrap_mean_ci
from kldcard.compare.onset import DRIFT, depth_series, find_clusters, onset_test
from kldcard.schema import DepthOnset, DepthProfile, DivergenceCluster, RangeDifference

__all__ = ["FALSE_ALARM_RATE", "TOP_CLUSTERS", "depth_profile", "late_vs_early"]

FALSE_ALARM_RATE = 0.05
TOP_CLUSTERS = 5

TEST_WORDS = (f"one-sided CUSUM (drift {DRIFT:g} robust SD, scores clipped at 4) on log KLD and on top-1 "
              "disagreement against the median/MAD and rate of the first quarter of the depths; threshold: "
              "quantile 1 - alpha/8 of the statistic on circular block bootstraps of that early part")


def depth_profile(depth: np.ndarray, windows: np.ndarray | None, kld: np.ndarray, agree: np.ndarray,
                  edges: Sequence[int], *, level: float = 0.95, resamples: int = 1000, seed: int = 0,
                  alpha: float = FALSE_ALARM_RATE, permutations: int = 400) -> DepthProfile | None:
    """The depth profile of per-token values (scored order): ``depth`` the position in the window,
    ``windows`` the window id of each (None: one window), ``kld`` forward KL in nats, ``agree`` top-1
    agreement. None when nothing finite was scored."""
    kld = np.asarray(kld, dtype=np.float64)
    ok = np.isfinite(kld)
    if not ok.any():
        return None
    depth, kld, differs = np.asarray(depth)[ok], kld[ok], ~np.asarray(agree, dtype=bool)[ok]
    win = np.zeros(len(depth), np.int64) if windows is None else np.asarray(windows)[ok]
    d, logk, rate = depth_series(depth, kld, differs)
    fit = onset_test(logk, rate, alpha=alpha, permutations=permutations, seed=seed)
    base_end = int(d[fit.baseline_points]) if fit is not None else int(d[max(0, len(d) // 4)])
    early = depth < base_end
    threshold = float(np.percentile(kld[early], 99.0)) if early.any() else math.inf
    runs = find_clusters(win, kld, differs, differs | (kld > threshold))
    total = float(kld.sum())
    share = (lambda s: min(1.0, max(0.0, s / total))) if total > 0 else (lambda s: 0.0)
    clusters = [DivergenceCluster(window=int(r.window), start=int(depth[r.first]), end=int(depth[r.last]),
                                  n=r.last - r.first + 1, kld_share=share(r.kld_sum)) for r in runs]
    onset = None
    if fit is not None:
        onset = DepthOnset(
            detected=fit.alarm, depth=None if fit.onset_index is None else int(d[fit.onset_index]),
            alarm_depth=None if fit.alarm_index is None else int(d[fit.alarm_index]), series=fit.series,
            baseline_end=base_end,
            test=TEST_WORDS + f" ({fit.permutations} resamples, blocks of {fit.block_length} depth points)",
            false_alarm_rate=alpha, p_value=fit.p_value)
    after = [c for c in clusters if onset is not None and onset.detected and c.start >= (onset.depth or 0)]
    return DepthProfile(
        max_depth=int(d[-1]),
        onset=onset,
        kld_threshold=threshold if math.isfinite(threshold) else 0.0,
        n_clusters=len(clusters),
        clusters_share=share(sum(r.kld_sum for r in runs)),
        n_clusters_after_onset=len(after) if onset is not None and onset.detected else None,
        share_after_onset=min(1.0, sum(c.kld_share for c in after)) if onset is not None and onset.detected else None,
        top_clusters=sorted(clusters, key=lambda c: (-c.kld_share, c.window, c.start))[:TOP_CLUSTERS],
        late_vs_early=late_vs_early(depth, win if windows is not None else None, kld, edges, base_end,
                                    level=level, resamples=resamples, seed=seed),
    )


def late_vs_early(depth: np.ndarray, windows: np.ndarray | None, kld: np.ndarray, edges: Sequence[int],
                  early_end: int, *, level: float = 0.95, resamples: int = 1000, seed: int = 0) -> RangeDifference | None:
    """Mean KLD of the last output range minus that of the early ranges (those ending by ``early_end``,
    at least the first), with an interval. With >= 20 windows the difference is paired by window
    (each window's late mean minus its early mean, windows resampled); otherwise each range gets its
    own block bootstrap and the two are treated as independent (normal interval of the difference)."""
    e = list(edges)
    if len(e) < 3 or resamples < 2:
        return None
    cut = max([b for b in e[1:] if b <= early_end] or [e[1]])
    late_a, late_b = e[-2], e[-1]
    if late_a < cut:
        return None
    es, ls = depth < cut, (depth >= late_a) & (depth < late_b)
    if es.sum() < 2 or ls.sum() < 2:
        return None
    em, lm = float(kld[es].mean()), float(kld[ls].mean())
    z = NormalDist().inv_cdf(0.5 + level / 2)
    n_win = 0 if windows is None else len(np.unique(windows))
    if n_win >= MIN_CLUSTERS:
        ids = np.unique(windows)
        diffs = []
        for w in ids:
            a, b = es & (windows == w), ls & (windows == w)
            if a.any() and b.any():
                diffs.append(float(kld[b].mean() - kld[a].mean()))
        if len(diffs) >= 2:
            ci = block_bootstrap_mean_ci(np.asarray(diffs), level=level, resamples=resamples, seed=seed,
                                         method="iid", interval="percentile")
            return RangeDifference(early=[0, cut], late=[late_a, late_b], early_mean=em, late_mean=lm,
                                   diff=ci.mean, ci_low=ci.lo, ci_high=ci.hi, level=level,
                                   method=f"paired by window: late minus early mean of each of {len(diffs)} windows, "
                                          f"windows resampled ({resamples}, percentile)")
    ses = []
    for sel in (es, ls):
        x = kld[sel]
        if np.var(x) == 0:
            ses.append(0.0)
            continue
        ses.append(block_bootstrap_mean_ci(x, level=level, resamples=resamples, seed=seed,
                                           method="circular-block", interval="t").se)
    diff = lm - em
    half = z * math.sqrt(ses[0] ** 2 + ses[1] ** 2)
    return RangeDifference(early=[0, cut], late=[late_a, late_b], early_mean=em, late_mean=lm, diff=diff,
                           ci_low=diff - half, ci_high=diff + half, level=level,
                           method="circular block bootstrap SE of each range (Politis-White blocks), ranges "
                                  "treated as independent, normal interval of the difference")
