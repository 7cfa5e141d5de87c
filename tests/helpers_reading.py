"""A card written inline in a test, and what the reader reads in it (the reader's unit tests share these)."""

from __future__ import annotations

from kldcard.card.document import Card, parse_card
from kldcard.lint.reader import read_card
from kldcard.lint.reading import DisclosureReading


def card(text: str) -> Card:
    return parse_card(text.encode(), "README.md")


def reading(text: str, n: int) -> DisclosureReading:
    """Disclosure ``n`` as read for the first KLD claim of the card ``text``."""
    return read_card(card(text))[0].disclosures[n]
