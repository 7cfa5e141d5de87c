"""Fidelity per byte: which candidates are on the size/divergence Pareto front, and which are dominated.

A user picks a quantization by how much fidelity each byte buys. Candidate X is

- **dominated** by Y when Y is strictly smaller (bits per weight) *and* distinguishably closer to the
  reference: the paired interval of mean(KLD_X − KLD_Y) on the same positions lies above 0. There is
  then no reason to publish or pick X;
- **behind** Y when Y is no larger and has a lower mean KLD, but the paired interval contains 0 (or
  no paired comparison was made): on this text the evidence does not separate them;
- on the **front** otherwise.

Sizes are bits per weight (:mod:`kldcard.stack.model_size`); divergences forward KL(P_ref ‖ P_cand)
in nats. One implementation for ``kldcard rank`` and the card.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["Standing", "pareto_standing"]


@dataclass(frozen=True)
class Standing:
    status: Literal["front", "behind", "dominated", "no size"]
    by: list[str] = field(default_factory=list)  # the smaller, closer candidates (dominated/behind)

    def text(self) -> str:
        if self.status == "front":
            return "front"
        if self.status == "no size":
            return "n/a (size unknown)"
        names = ", ".join(self.by)
        if self.status == "dominated":
            return f"dominated by {names}"
        return f"behind {names} (not distinguishable)"


def pareto_standing(
    sizes: Mapping[str, float | None],
    means: Mapping[str, float],
    pairs: Iterable[tuple[str, str, float, float]],
) -> dict[str, Standing]:
    """Each candidate's standing. ``sizes``: bits per weight (None when unknown); ``means``: mean KLD;
    ``pairs``: ``(a, b, ci_low, ci_high)`` of the paired difference mean(KLD_b − KLD_a)."""
    closer: set[tuple[str, str]] = set()  # (winner, loser): the winner is distinguishably closer
    for a, b, lo, hi in pairs:
        if lo > 0:
            closer.add((a, b))
        elif hi < 0:
            closer.add((b, a))
    out: dict[str, Standing] = {}
    for x, mx in means.items():
        sx = sizes.get(x)
        if sx is None:
            out[x] = Standing("no size")
            continue
        dominated, behind = [], []
        for y, my in means.items():
            sy = sizes.get(y)
            if y == x or sy is None or sy > sx:
                continue
            if sy < sx and (y, x) in closer:
                dominated.append(y)
            elif my < mx or (my == mx and sy < sx):
                behind.append(y)
        if dominated:
            out[x] = Standing("dominated", sorted(dominated, key=lambda n: sizes[n] or 0.0))
        elif behind:
            out[x] = Standing("behind", sorted(behind, key=lambda n: sizes[n] or 0.0))
        else:
            out[x] = Standing("front")
    return out
