"""How a number is printed on a card: moved to :mod:`kldcard.card.numbers` (``kldcard lint --fix``
regenerates model-index entries without loading the renderer); re-exported here for render."""

from __future__ import annotations

from kldcard.card.numbers import fmt_int, fmt_nats, fmt_percent, fmt_plain, md_cell

__all__ = ["fmt_int", "fmt_nats", "fmt_percent", "fmt_plain", "md_cell"]
