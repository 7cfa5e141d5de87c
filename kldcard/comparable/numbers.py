"""A KLD number as ``kldcard comparable`` sees it: its value, its interval if any, and its nine readings.

Three sources fill it: a card's ``kld_evaluation`` block (:mod:`kldcard.comparable.block`), a card's
prose (the reader of :mod:`kldcard.lint.reading`, see :mod:`kldcard.comparable.prose`) and a results
JSON written by kldcard (:mod:`kldcard.comparable.results`). Values in nats unless ``unit`` says.
"""

from __future__ import annotations

import math
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
    span: tuple[int, int] | None = None  # the card lines of its claim or candidate (CARD#LINE picks any of them)

    @property
    def shown_unit(self) -> str:
        """The unit as read: the number's own, else its claim's (D7), else "unit not stated"."""
        d7 = self.readings.get(7)
        unit = self.unit or (d7.value.get("unit") if d7 is not None else None)
        if not unit:
            return "unit not stated"
        return f"{unit} (inferred)" if self.unit is None and d7 is not None and d7.status == "inferred" else str(unit)

    @property
    def what(self) -> str:
        """What the number is, as read: statistic, direction, positions and vocabulary ("token-mean of
        KL(P_ref ‖ P_cand) per token, positions: llama-perplexity 142,800, vocabulary: full")."""
        return quantity_words(self.readings)

    def shown(self) -> str:
        """"0.0213 nats" (the value and its unit as read)."""
        return f"{self.value:.6g} {self.shown_unit}" if self.value is not None else "no value"

    def implausible(self) -> str | None:
        """Why the value cannot be a mean KL divergence between a model and its quantization (None: it can)."""
        v = self.value
        if v is None:
            return None
        if not math.isfinite(v):
            return f"{v} is not a finite number: a KL divergence is a finite value >= 0"
        if v < 0:
            return (f"{v:.6g} is negative: a KL divergence is >= 0 (a wrong sign, a different quantity, "
                    "or a rounding artefact of a value near 0)")
        limit = ABSURD_NATS / math.log(2) if self.shown_unit.startswith("bits") else ABSURD_NATS
        if v > limit and not self.shown_unit.startswith("percent"):
            return (f"{v:.6g} {self.shown_unit} is implausible for a quantization's mean KL divergence "
                    f"(more than {ABSURD_NATS:g} nats; a unit, scale or decimal-point error?)")
        return None

    def to_json(self) -> dict[str, Any]:
        return {
            "source": self.source, "kind": self.kind, "label": self.label, "value": self.value,
            "unit": self.unit, "unit_as_read": self.shown_unit, "what": self.what, "line": self.line,
            "claim_line": self.claim_line, "span": list(self.span) if self.span else None,
            "interval": self.interval.to_json() if self.interval else None, "per_token": self.per_token,
            "implausible": self.implausible(),
        }


# A mean KLD between a model and its quantization is well under 1 nat (usable quants: under 0.1); a
# value above this is a unit, scale or transcription error, not a measurement to compare.
ABSURD_NATS = 100.0

_DIRECTIONS = {"forward": "KL(P_ref ‖ P_cand)", "reverse": "KL(P_cand ‖ P_ref)", "js": "Jensen-Shannon divergence",
               "both": "KL in both directions (which one is this?)"}  # "js": not a KL, but what the card says


def quantity_words(readings: dict[int, DisclosureReading], *, short: bool = False) -> str:
    """Statistic, direction, positions and vocabulary of a number, as read (what a printed KLD says it
    is), naming what was inferred from a tool's defaults; ``short``: statistic and direction only."""

    def val(d: int, key: str) -> Any:
        r = readings.get(d)
        return r.value.get(key) if r is not None and r.status != "missing" else None

    inferred = [name for d, name in ((9, "statistic"), (7, "direction"), (6, "positions"), (8, "vocabulary"))
                if (r := readings.get(d)) is not None and r.status == "inferred" and not (short and d in (6, 8))]
    stat, direction = val(9, "statistic"), val(7, "direction")
    kl = _DIRECTIONS.get(str(direction), f"KL ({direction})") + " per token" if direction else "per-token KL"
    unstated = " and ".join(w for w, v in (("statistic", stat), ("direction", direction)) if not v)
    out = (f"{stat} of {kl}" if stat else kl) + (f" ({unstated} not stated)" if unstated else "")
    if not short:
        scheme, count = val(6, "scheme"), val(6, "count")
        pos = " ".join(str(p) for p in (scheme, f"{count:,} positions" if isinstance(count, int) else count) if p)
        vocab, k, floor = val(8, "scheme"), val(8, "k"), val(8, "floor")
        vocab_shown = f"{vocab} k={k}" if vocab and k else (f"floor {floor} nats" if floor else vocab)
        out += f"; positions: {pos or 'not stated'}; vocabulary: {vocab_shown or 'not stated'}"
    return out + (f" (inferred from a tool's defaults: {', '.join(inferred)})" if inferred else "")


@dataclass(frozen=True)
class Unreadable:
    """A number of an input that is not compared: its ``kld_evaluation`` block does not validate."""

    source: str
    label: str
    line: int | None
    rule: str  # "KLD007"
    message: str  # the linter's message
    more: int = 0  # further errors in the same scope
    span: tuple[int, int] | None = None  # the candidate's card lines

    def shown(self) -> str:
        at = f" (line {self.line})" if self.line else ""
        more = f" (and {self.more} more error{'s' * (self.more != 1)}: kldcard lint {self.source})" if self.more else ""
        return f"{self.label}: {self.rule}{at} {self.message}{more}"

    def to_json(self) -> dict[str, Any]:
        return {"source": self.source, "label": self.label, "line": self.line, "rule": self.rule,
                "message": self.message, "more": self.more}


@dataclass
class Source:
    """What one argument gave: its numbers (and the card text, for lines)."""

    name: str
    numbers: list[Number] = field(default_factory=list)
    unreadable: list[Unreadable] = field(default_factory=list)  # numbers left out, and why
    identity: str | None = None  # the sha256 of the file's bytes: two arguments of one card share it


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
        """"Q4_K_M 0.0213 nats, Q8_0 0.0031 nats" (at most five, then "+ N more")."""
        parts = [f"{n.label} {n.shown()}" for n in self.numbers[:5]]
        more = len(self.numbers) - 5
        return ", ".join(parts) + (f" + {more} more" if more > 0 else "")
