"""Numbers of a free-form card: the prose reader's claims (:mod:`kldcard.lint.reader`), one
:class:`Number` per number a claim gives, with that number's own readings
(:func:`kldcard.lint.number_readings.number_readings`: its statistic and unit, a table row's own
context length, a number quoted from another party's measurement).

Each number carries its claim's span: the lines of the paragraph, table or code block that holds the
claim's line and its numbers (``CARD#LINE`` picks a claim by any of them).
"""

from __future__ import annotations

from kldcard.card.document import Card
from kldcard.comparable.numbers import Interval, Number
from kldcard.lint.number_readings import interval_of, is_uncertainty, number_readings
from kldcard.lint.reader import read_card


def claim_span(lines: list[str], first: int, last: int) -> tuple[int, int]:
    """Lines ``first``..``last`` (1-based) widened to the run of non-blank lines around them."""
    first, last = max(1, min(first, len(lines))), max(1, min(last, len(lines)))
    while first > 1 and lines[first - 2].strip():
        first -= 1
    while last < len(lines) and lines[last].strip():
        last += 1
    return first, last


def prose_numbers(card: Card, source: str) -> list[Number]:
    """One :class:`Number` per KLD number the card's prose gives (in card order)."""
    lines = card.text.splitlines()
    out = []
    for claim in read_card(card):
        at = [claim.line, *(n.line for n in claim.numbers)]
        span = claim_span(lines, min(at), max(at)) if lines else None
        for n in claim.numbers:
            line = lines[n.line - 1] if 1 <= n.line <= len(lines) else ""
            if is_uncertainty(line, n):  # the "± 0.0002" of the number before it
                continue
            unit = n.unit if n.unit in ("nats", "bits", "percent") else None
            ci = interval_of(line, n)
            out.append(Number(source, "prose", n.candidate or f"line {n.line}", n.value,
                              number_readings(claim, n, lines), unit=unit, line=n.line, claim_line=claim.line,
                              interval=Interval(ci[0], ci[1], None, ci[2]) if ci else None, span=span))
    return out
