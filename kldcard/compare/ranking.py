"""Paired comparison of candidates scored on the same positions: the block-bootstrap interval of
the mean per-position difference, and a ranking in which candidates whose paired interval contains
0 are marked as not distinguishable on this text. Divergences in nats."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from typing import Any, Literal

import numpy as np

from kldcard.compare.bootstrap import MeanCI, block_bootstrap_mean_ci

__all__ = ["PairedCI", "Ranking", "paired_difference_ci", "rank_candidates"]


@dataclass(frozen=True)
class PairedCI:
    """Mean of the per-position difference ``b − a`` with its interval (same resampled blocks
    for both sides: the paired bootstrap of the difference series)."""

    a: str
    b: str
    estimate: float
    lo: float
    hi: float
    excludes_zero: bool
    ci: MeanCI

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["ci"] = self.ci.to_dict()
        return d


@dataclass(frozen=True)
class Ranking:
    """Candidates sorted by mean (ascending: lower divergence first) with pairwise paired intervals.

    ``groups``: compact letter display over the sorted order — each letter is a maximal run of
    consecutive candidates every pair of which is indistinguishable (the paired interval of the
    difference contains 0). Two candidates sharing a letter cannot be told apart at ``level``.
    ``tiers``: the same runs as lists of names.
    """

    order: list[str]
    means: dict[str, float]
    intervals: dict[str, MeanCI]
    pairs: list[PairedCI]
    letters: dict[str, str]
    tiers: list[list[str]]
    level: float
    pair_level: float
    adjust: str

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready."""
        return {
            "order": list(self.order),
            "level": self.level,
            "pair_level": self.pair_level,
            "adjust": self.adjust,
            "candidates": [
                {
                    "name": name,
                    "rank": i + 1,
                    "mean": self.means[name],
                    "ci": [self.intervals[name].lo, self.intervals[name].hi],
                    "n_eff": self.intervals[name].n_eff,
                    "groups": self.letters[name],
                    "indistinguishable_from": sorted(
                        (p.b if p.a == name else p.a)
                        for p in self.pairs
                        if name in (p.a, p.b) and not p.excludes_zero
                    ),
                }
                for i, name in enumerate(self.order)
            ],
            "pairs": [
                {"a": p.a, "b": p.b, "diff_b_minus_a": p.estimate, "ci": [p.lo, p.hi],
                 "excludes_zero": p.excludes_zero, "method": p.ci.method,
                 "block_length": p.ci.block_length, "n_blocks": p.ci.n_blocks}
                for p in self.pairs
            ],
            "tiers": [list(t) for t in self.tiers],
            "method": self.intervals[self.order[0]].method if self.order else None,
        }


def paired_difference_ci(
    a: np.ndarray,
    b: np.ndarray,
    *,
    blocks: np.ndarray | None = None,
    names: tuple[str, str] = ("a", "b"),
    **kwargs: Any,
) -> PairedCI:
    """Interval for ``mean(b − a)`` over positions where both are defined (NaN in either drops
    the position). The same blocks are resampled for both sides, which for a mean is exactly the
    block bootstrap of the per-position difference ``d = b − a`` (the block length, for
    ``circular-block``, is chosen on ``d``). ``kwargs`` go to :func:`block_bootstrap_mean_ci`.
    ``excludes_zero``: the interval lies entirely above or below 0.
    """
    xa = np.asarray(a, dtype=np.float64).ravel()
    xb = np.asarray(b, dtype=np.float64).ravel()
    if xa.shape != xb.shape:
        raise ValueError(f"paired series differ in length: {len(xa)} vs {len(xb)}")
    d = xb - xa
    keep = ~(np.isnan(xa) | np.isnan(xb))
    ci = block_bootstrap_mean_ci(d[keep], blocks=None if blocks is None else np.asarray(blocks)[keep], **kwargs)
    return PairedCI(a=names[0], b=names[1], estimate=ci.mean, lo=ci.lo, hi=ci.hi,
                    excludes_zero=bool(ci.lo > 0.0 or ci.hi < 0.0), ci=ci)


def _letters(order: Sequence[str], tied: set[frozenset[str]]) -> tuple[dict[str, str], list[list[str]]]:
    """Compact letter display: maximal runs of consecutive (sorted) candidates, all pairwise tied."""
    runs: list[tuple[int, int]] = []
    n = len(order)
    for i in range(n):
        j = i
        while j + 1 < n and all(frozenset((order[t], order[j + 1])) in tied for t in range(i, j + 1)):
            j += 1
        if not runs or j > runs[-1][1]:
            runs.append((i, j))
    letters = {name: "" for name in order}
    alphabet = "abcdefghijklmnopqrstuvwxyz"
    for r, (i, j) in enumerate(runs):
        tag = alphabet[r] if r < 26 else f"[{r}]"
        for t in range(i, j + 1):
            letters[order[t]] += tag
    return letters, [list(order[i : j + 1]) for i, j in runs]


def rank_candidates(
    values_by_name: Mapping[str, np.ndarray],
    blocks: np.ndarray | None = None,
    *,
    level: float = 0.95,
    adjust: Literal["none", "bonferroni"] = "none",
    **kwargs: Any,
) -> Ranking:
    """Sort candidates by mean (ascending) and compare every pair with a paired block interval.

    ``values_by_name``: name → per-position values, all aligned to the same positions (and to
    ``blocks``). Each candidate's own interval and every pairwise ``mean(b − a)`` interval use
    the same method/seed (``kwargs`` to :func:`block_bootstrap_mean_ci`). ``adjust="bonferroni"``
    widens each pairwise interval to level ``1 − (1 − level)/m`` for ``m`` pairs (familywise);
    the default ``"none"`` does not adjust for multiple comparisons.
    """
    names = list(values_by_name)
    if not names:
        raise ValueError("no candidates")
    arrays = {k: np.asarray(v, dtype=np.float64).ravel() for k, v in values_by_name.items()}
    lens = {len(v) for v in arrays.values()}
    if len(lens) != 1:
        raise ValueError(f"candidates differ in length: {sorted(lens)}")
    intervals = {k: block_bootstrap_mean_ci(arrays[k], blocks=blocks, level=level, **kwargs) for k in names}
    order = sorted(names, key=lambda k: (intervals[k].mean, k))
    m = len(names) * (len(names) - 1) // 2
    pair_level = 1.0 - (1.0 - level) / m if (adjust == "bonferroni" and m > 0) else level
    pairs: list[PairedCI] = []
    tied: set[frozenset[str]] = set()
    for i, na in enumerate(order):
        for nb in order[i + 1 :]:
            p = paired_difference_ci(arrays[na], arrays[nb], blocks=blocks, names=(na, nb), level=pair_level, **kwargs)
            pairs.append(p)
            if not p.excludes_zero:
                tied.add(frozenset((na, nb)))
    letters, tiers = _letters(order, tied)
    return Ranking(order=order, means={k: intervals[k].mean for k in names}, intervals=intervals, pairs=pairs,
                   letters=letters, tiers=tiers, level=level, pair_level=pair_level, adjust=adjust)
