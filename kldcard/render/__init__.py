"""From compare results to a card: disclosures → evaluation → section + metadata → card update.

- :mod:`~kldcard.render.disclosures` — what the captures cannot know (a YAML the user writes);
- :mod:`~kldcard.render.evaluation` — the ``kld_evaluation`` block built from compare results;
- :mod:`~kldcard.render.section` — the Markdown section (jinja2 template);
- :mod:`~kldcard.render.disclosure_table` — the section's table of the nine disclosures;
- :mod:`~kldcard.render.metadata` — the front-matter YAML and ``model-index`` entries;
- :mod:`~kldcard.render.update` — splice both into an existing card (atomic, bytes outside untouched);
- :mod:`~kldcard.render.plot` — the plot (how a number is printed is :mod:`kldcard.card.numbers`, shared with lint --fix).

May import: errors, files, schema, resources, card, stack, capture, compare. Never lint or cli.
"""

from __future__ import annotations

from kldcard.render.section import render_section, section_context

__all__ = ["render_section", "section_context"]
