"""A KLD number as ``kldcard comparable`` sees it: its value, its interval if any, and its nine readings.

Three sources fill it: a card's ``kld_evaluation`` block (:mod:`kldcard.comparable.block`), a card's
prose (the reader of :mod:`kldcard.lint.reading`, see :mod:`kldcard.comparable.prose`) and a results
JSON written by kldcard (:mod:`kldcard.comparable.results`). Values in nats unless ``unit`` says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kldcard.lint.reading import DisclosureReading


@dataclass(frozen=True)
class Interval:
    low: float
    high: float
    level: float | None = None  # 0.95
    method: str | None = None  # "window-bootstrap", "± (i.i.d. SE)", ...

    def shown(self) -> str:
        lvl = f"{self.level:.0%} " if self.level else ""
        how = f" {self.method}" if self.method else ""
        return f"[{self.low:.6g}, {self.high:.6g}] ({lvl}{how.strip() or 'interval, method not stated'})".replace("( ", "(")

    def to_json(self) -> dict[str, Any]:
        return {"low": self.low, "high": self.high, "level": self.level, "method": self.method}


@dataclass(frozen=True)
class Number:
    """One KLD number and what it is."""

    source: str  # the argument it came from (file, hf:// spec, results JSON)
    kind: str  # "block" | "prose" | "results"
    label: str  # the candidate ("Q4_K_M") or, when the card does not say, the number's text
    value: float | None
    readings: dict[int, DisclosureReading]
    unit: str | None = "nats"
    line: int | None = None  # card line of the number (prose) or of the candidate (block)
    interval: Interval | None = None
    per_token: str | None = None  # results: the per-token file, when it exists
    claim_line: int | None = None  # prose: the line of the claim the number belongs to

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source, "kind": self.kind, "label": self.label, "value": self.value,
            "unit": self.unit, "line": self.line, "claim_line": self.claim_line,
            "interval": self.interval.to_json() if self.interval else None, "per_token": self.per_token,
        }


@dataclass
class Source:
    """What one argument gave: its numbers (and the card text, for lines)."""

    name: str
    numbers: list[Number] = field(default_factory=list)


@dataclass(frozen=True)
class Column:
    name: str  # "A", "B2"
    source: str  # the argument
    numbers: tuple[Number, ...]

    @property
    def readings(self) -> dict[int, DisclosureReading]:
        return self.numbers[0].readings

    @property
    def numbers_shown(self) -> str:
        """"Q4_K_M 0.0213, Q8_0 0.0031" (at most five, then "+ N more")."""
        parts = [f"{n.label} {n.value:.6g}" if n.value is not None else n.label for n in self.numbers[:5]]
        more = len(self.numbers) - 5
        return ", ".join(parts) + (f" + {more} more" if more > 0 else "")
