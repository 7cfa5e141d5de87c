"""A card written inline in a test, and what the reader reads in it (the reader's unit tests share these)."""

from __future__ import annotations

from kldcard.card.document import Card, parse_card
from kldcard.lint.claims import find_claims
from kldcard.lint.markdown import scan
from kldcard.lint.reader import read_card
from kldcard.lint.reading import DisclosureReading


def card(text: str) -> Card:
    return parse_card(text.encode(), "README.md")


def reading(text: str, n: int) -> DisclosureReading:
    """Disclosure ``n`` as read for the first KLD claim of the card ``text``."""
    return read_card(card(text))[0].disclosures[n]


def claim_lines(text: str) -> list[int]:
    """The file lines of the KLD claims found in the card ``text``."""
    c = card(text)
    doc = scan(c.body, c.body_line)
    return [doc.position(claim.offset)[0] for claim in find_claims(doc)]


def claims(text: str) -> list[tuple[int, list[str]]]:
    """Each KLD claim found in the card ``text``: its file line and the texts of its KLD numbers."""
    c = card(text)
    doc = scan(c.body, c.body_line)
    return [(doc.position(claim.offset)[0], [n.text for n in claim.numbers]) for claim in find_claims(doc)]
