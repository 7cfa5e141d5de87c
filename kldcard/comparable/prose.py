"""Numbers of a free-form card: the prose reader's claims (:mod:`kldcard.lint.reader`), one
:class:`Number` per number a claim gives, with that number's own readings
(:func:`kldcard.lint.number_readings.number_readings`: its statistic and unit, a table row's own
context length, a number quoted from another party's measurement).
"""

from __future__ import annotations

from kldcard.card.document import Card
from kldcard.comparable.numbers import Interval, Number
from kldcard.lint.number_readings import interval_of, is_uncertainty, number_readings
from kldcard.lint.reader import read_card


def prose_numbers(card: Card, source: str) -> list[Number]:
    """One :class:`Number` per KLD number the card's prose gives (in card order)."""
    lines = card.text.splitlines()
    out = []
    for claim in read_card(card):
        for n in claim.numbers:
            line = lines[n.line - 1] if 1 <= n.line <= len(lines) else ""
            if is_uncertainty(line, n):  # the "± 0.0002" of the number before it
                continue
            unit = n.unit if n.unit in ("nats", "bits", "percent") else None
            ci = interval_of(line, n)
            out.append(Number(source, "prose", n.candidate or f"line {n.line}", n.value,
                              number_readings(claim, n, lines), unit=unit, line=n.line, claim_line=claim.line,
                              interval=Interval(ci[0], ci[1], None, ci[2]) if ci else None))
    return out
