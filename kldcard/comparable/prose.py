"""Numbers of a free-form card: the prose reader's claims (:mod:`kldcard.lint.reading`), one
:class:`Number` per number a claim gives.

A number inherits its claim's nine readings; what the reader read for the number itself (its
statistic, its unit) replaces the claim's D9 statistic and D7 unit, so that a table's mean and p99
columns are two quantities.
"""

from __future__ import annotations

from dataclasses import replace

from kldcard.card.document import Card
from kldcard.comparable.numbers import Number
from kldcard.lint.reading import ClaimReading, DisclosureReading, Evidence, NumberReading

try:  # the prose reader (issue 28) fills the reading types; until it is merged only blocks and results are read
    from kldcard.lint.reader import read_card as _read_claims
except ImportError:  # pragma: no cover - depends on the branch state
    _read_claims = None


def reader_available() -> bool:
    return _read_claims is not None


def prose_numbers(card: Card, source: str) -> list[Number]:
    """One :class:`Number` per KLD number the card's prose gives (in card order)."""
    if _read_claims is None:
        return []
    return [number_of(claim, n, source) for claim in _read_claims(card) for n in claim.numbers]


def number_of(claim: ClaimReading, n: NumberReading, source: str) -> Number:
    readings = dict(claim.disclosures)
    here = (Evidence(text=n.text, line=n.line, column=n.column),)
    if n.statistic:
        readings[9] = _with(readings.get(9), 9, {"statistic": n.statistic}, here)
    if n.unit in ("nats", "bits"):
        readings[7] = _with(readings.get(7), 7, {"unit": n.unit}, here)
    unit = n.unit if n.unit in ("nats", "bits", "percent") else None
    return Number(source, "prose", n.candidate or f"line {n.line}", n.value, readings, unit=unit, line=n.line,
                  claim_line=claim.line)


def _with(r: DisclosureReading | None, d: int, value: dict, evidence: tuple[Evidence, ...]) -> DisclosureReading:
    if r is None or r.status == "missing":
        return DisclosureReading(d, "stated", value, evidence)
    return replace(r, value={**r.value, **value}, evidence=(*r.evidence, *evidence))
