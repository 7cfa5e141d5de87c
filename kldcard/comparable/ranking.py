"""Ranking only when it means something.

- Not comparable (or cannot tell): no ranking; the numbers are not known to be one quantity.
- A value that cannot be a mean KL divergence (negative, not finite, absurdly large): no ranking.
- Comparable, every number a kldcard result with its per-token file: hand over to ``kldcard rank``
  (paired intervals on the same positions; ``kldcard comparable --rank FILE`` runs it).
- Comparable, card numbers only: a published mean without its interval cannot rank two close
  candidates; the intervals the cards give are shown (each with its level and method), and pairs
  whose intervals overlap are named.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal

from kldcard.comparable.numbers import Column, Number, quantity_words
from kldcard.lint.quantity_verdict import Verdict


SHOWN = 8  # numbers listed in the advice (all of them in the JSON columns)
NO_INTERVAL = ("a published mean without its interval cannot rank two close candidates: the difference "
               "may be noise of the text sample")


@dataclass(frozen=True)
class Advice:
    kind: Literal["none", "single", "rank", "intervals"]
    message: str
    lines: tuple[str, ...] = ()
    results: tuple[str, ...] = ()  # results files for `kldcard rank` (kind "rank")

    def to_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "message": self.message, "lines": list(self.lines), "results": list(self.results)}


def advise(columns: Sequence[Column], verdict: Verdict, implausible: Sequence[str] = ()) -> Advice:
    numbers = [(c.name, n) for c in columns for n in c.numbers]
    if not verdict.comparable:
        why = "they are not the same quantity" if verdict.overall == "not comparable" else \
            "nobody can tell whether they are the same quantity"
        return Advice("none", f"no ranking: {why}")
    if implausible and len(numbers) > 1:
        return Advice("none", "no ranking: a value that cannot be a mean KL divergence is not a measurement to "
                      "rank (see 'value:' above)")
    if len(numbers) < 2:
        return Advice("single", "one number: nothing to rank")
    if all(n.kind == "results" and n.per_token for _, n in numbers):
        files = tuple(n.source for _, n in numbers)
        return Advice("rank", "every number is a kldcard result with per-token values: rank them with paired "
                      "intervals on the same positions: kldcard rank " + " ".join(files) + " -o ranking.json "
                      "(or kldcard comparable --rank ranking.json)", results=files)
    lines = [f"{name} {n.label}: {_value(n)}" for name, n in numbers[:SHOWN]]
    if len(numbers) > SHOWN:
        lines.append(f"... and {len(numbers) - SHOWN} more (-o json lists them all)")
    notes = []
    with_ci = [(name, n) for name, n in numbers if n.interval is not None and n.value is not None]
    for (na, a), (nb, b) in combinations(with_ci, 2):
        if a.interval.low <= b.interval.high and b.interval.low <= a.interval.high:  # type: ignore[union-attr]
            notes.append(f"the intervals of {na} {a.label} and {nb} {b.label} overlap: these numbers cannot tell "
                         "them apart (a paired interval from per-token results may)")
    missing = len(numbers) - len(with_ci)
    msg = NO_INTERVAL if missing else ("every number has an interval; intervals of separate measurements "
                                       "are not paired, so only clearly separated ones rank")
    if missing and with_ci:
        msg += f" ({missing} of {len(numbers)} numbers come without one)"
    return Advice("intervals", msg, tuple(lines + notes))


def _value(n: Number) -> str:
    # what the number is (statistic, direction); its positions and vocabulary are in its column's legend
    what = quantity_words(n.readings, short=True)
    return f"{n.shown()}, {what}" + (f" {n.interval.shown()}" if n.interval else ", no interval given")
