"""The model card as a document: read it, locate lines, split the front matter, splice managed regions,
download it from the Hub, repair it. It knows the card's structure (markers, fences, the
``kld_evaluation`` and ``model-index`` keys) and how a card spells a number, but computes none.

- :mod:`~kldcard.card.document` — read a card without re-saving the user's YAML; line/column lookups;
- :mod:`~kldcard.card.regions` — the one grammar of ``<!-- kldcard:start/end -->`` markers and code fences;
- :mod:`~kldcard.card.splice` — replace a managed region byte-exactly;
- :mod:`~kldcard.card.hub` — ``hf://owner/name[@rev]`` through huggingface_hub's cache;
- :mod:`~kldcard.card.model_index` / :mod:`~kldcard.card.numbers` — model-index KLD results from a
  validated block, in the digits the body shows (render and ``lint --fix`` share them);
- :mod:`~kldcard.card.fixes` — the safe fixes of ``kldcard lint --fix`` as byte-exact text edits.

May import: errors, files, schema. Loads no numpy (``kldcard lint`` depends on it).
"""

from __future__ import annotations

from kldcard.card.document import Card, parse_card, read_card

__all__ = ["Card", "parse_card", "read_card"]
