"""Which columns of a table hold KLD values, whatever its layout (issue 28, claim detection). A pipe table, a CSV
file, a fixed-width printout, an indented one with unheaded row labels and a table a web mirror flattened are
split into header cells by their own readers (kldcard.lint.claim_tables, read.csv_tables, read.indented_tables);
which of those cells make a KLD column is decided here, once, so a KL term reads the same wherever it stands:

- a header cell names a KL term, not as a training setting ("mean KLD", "kl_div"; not "KL penalty"): its column
  (:func:`named`);
- no cell names one, and the header names statistics under text that names a KL term
  (read.table_context.statistic_columns), or the nearest heading names KLD and nothing else
  (read.table_context.heading_columns), or a caption over the table names it (read.caption_tables): the value
  columns (:func:`from_context`).

A table's header line is looked for where a KL term is (:func:`header_lines`): on a line naming one, or on the
first line under a caption or heading that names one, a blank line between. Samples in
tests/test_lint_claim_lead_in.py and tests/test_lint_key_values.py.
"""

from __future__ import annotations

from kldcard.lint.claims_patterns import KLD_TERM, TRAINING_CONTEXT
from kldcard.lint.markdown import Doc
from kldcard.lint.read import caption_tables, table_context


def kl_cell(text: str) -> bool:
    """Whether a header cell (or a CSV field, a fixed-width column's name) names a KLD column."""
    return bool(KLD_TERM.search(text)) and not TRAINING_CONTEXT.search(text)


def named(cells: list[str]) -> list[int]:
    """The columns whose header cell names a KL term."""
    return [k for k, text in enumerate(cells) if kl_cell(text)]


def from_context(doc: Doc, header: int, cells: list[str]) -> tuple[list[int], bool]:
    """The KLD columns of a header (line ``header``, ``cells`` with the label column first) that names no KL term,
    read from the text around the table; and whether each column says its statistic (a statistic header)."""
    stats = table_context.statistic_columns(doc, header, cells)
    if stats:
        return stats, True
    return table_context.heading_columns(doc, header, cells) or caption_tables.caption_columns(doc, header, cells), False


def header_lines(doc: Doc) -> set[int]:
    """The lines a KLD table's header may stand on: each line naming a KL term, and the first non-blank line
    under one when a blank line stands between (a caption's or a heading's table)."""
    out = set(doc.lines_matching(KLD_TERM))
    for c in doc.lines_matching(KLD_TERM):
        j = c + 1
        while j < len(doc.lines) and j <= c + caption_tables.LOOK_BACK and not doc.lines[j].strip():
            j += 1
        if c + 1 < j < len(doc.lines):
            out.add(j)
    return out
