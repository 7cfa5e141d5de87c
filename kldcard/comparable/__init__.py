"""Can these published KLD numbers be compared at all? (``kldcard comparable``)

Reads each number's nine disclosures — from a card's ``kld_evaluation`` block
(:mod:`~kldcard.comparable.block`), a card's prose through the linter's reading
(:mod:`~kldcard.comparable.prose`), or a results JSON written by kldcard
(:mod:`~kldcard.comparable.results`) — and puts them side by side under the same-quantity rules of
:mod:`kldcard.lint.quantity` (:mod:`~kldcard.comparable.table`), with ranking advice
(:mod:`~kldcard.comparable.ranking`) and the text / JSON / Markdown outputs
(:mod:`~kldcard.comparable.formats`).

May import: errors, files, schema, card, lint. Never numpy, numba, an engine, capture, compare or
render: results JSON is read as plain JSON, so a base install compares cards and results.
"""

from __future__ import annotations

from collections.abc import Sequence

from kldcard.card.document import MAX_CARD_BYTES
from kldcard.card.hub import CardCache
from kldcard.comparable.formats import FORMATS, render
from kldcard.comparable.inputs import load, source_names
from kldcard.comparable.table import Comparison, compare_sources

__all__ = ["FORMATS", "Comparison", "comparable", "render"]


def comparable(args: Sequence[str], *, local_files_only: bool = False, max_bytes: int = MAX_CARD_BYTES) -> Comparison:
    """The comparison of the KLD numbers of ``args`` (cards, ``hf://`` specs, ``CARD#LINE``,
    ``CARD::NAME``, results JSON). One argument: its numbers against each other. Raises
    :class:`~kldcard.errors.InputError` for an argument that cannot be read (or is larger than
    ``max_bytes``) or gives no usable number (none, or only ones whose block the linter rejects)."""
    cache = CardCache(local_files_only=local_files_only)
    sources = [load(a, cache, limit=max_bytes) for a in args]
    return compare_sources(sources, source_names(list(args)))
