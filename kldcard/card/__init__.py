"""The model card as a document: read it, locate lines, split the front matter, splice managed regions,
download it from the Hub. It knows the card's structure (markers, fences, the ``kld_evaluation`` and
``model-index`` keys) but no numbers.

- :mod:`~kldcard.card.document` — read a card without re-saving the user's YAML; line/column lookups;
- :mod:`~kldcard.card.regions` — the one grammar of ``<!-- kldcard:start/end -->`` markers and code fences;
- :mod:`~kldcard.card.splice` — replace a managed region byte-exactly;
- :mod:`~kldcard.card.hub` — ``hf://owner/name[@rev]`` through huggingface_hub's cache.

May import: errors, files, schema. Loads no numpy (``kldcard lint`` depends on it).
"""

from __future__ import annotations

from kldcard.card.document import Card, parse_card, read_card

__all__ = ["Card", "parse_card", "read_card"]
