"""D3 in a table row: whether a text's name stands in a cell that speaks of a text or a measurement on one
(:func:`in_text_cell`), so that a benchmark's name heading its own score column is not the KLD's text. Split out of
:mod:`kldcard.lint.read.eval_text` (over STYLE's ~400 lines) as the one part that reads a table's cells; it reads
that module's KL term, and that module nothing of this one.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read import comparison, eval_text_forms
from kldcard.lint.read.eval_text import KL_TERM

I = re.IGNORECASE | re.ASCII

# a table cell that speaks of a text or a measurement on it ("PPL (WikiText-2, ctx=512)", "| corpus | x.txt |", "| 22 prompts,
# 3,550 positions |")
CELL_WORDS = re.compile(
    r"(?<![A-Za-z_])(?:KLD|KL|PPL)(?![A-Za-z_])|perplexity|\beval|\btext|\bcorpus|\bdata(?:set)?\b|\bprompts?\b|\bsplit\b|"
    r"\bwindows?\b|\bchunks?\b|\bctx\b|\bcontext\b|\btokens\b|\bpositions\b|文本|语料|テキスト|コーパス|texto|texte",
    I,
)


def in_text_cell(text: str, m: re.Match[str]) -> bool:
    """For a match in a table row: its own cell or the row's label cell speaks of a text or of a
    measurement on one. A benchmark's name heading its own score column ("| GSM8K (%) |") is not the
    text a KLD in another column was scored on."""
    if m.re is eval_text_forms.TEXTS_COLUMN.compiled:  # the header's own column of texts
        return True
    lo = text.rfind("\n", 0, m.start()) + 1
    hi = text.find("\n", m.end())
    row = text[lo : len(text) if hi < 0 else hi]
    at = m.start() - lo
    cells = row.split("|")
    first = next((c for c in cells if c.strip()), "")
    k = row.rfind("|", 0, at) + 1
    j = row.find("|", at)
    own = row[k : len(row) if j < 0 else j]
    if own.strip() == first.strip() and kl_table_row(text, lo):
        return True  # the row's label in a table whose header names the KL: "| WikiText-2 — median | 0.203 |"
    return bool(CELL_WORDS.search(own.replace(m.group(0), " ", 1)) or CELL_WORDS.search(first.replace(m.group(0), " ", 1)))


def kl_table_row(text: str, line_start: int) -> bool:
    """Whether the row starting at ``line_start`` is a body row of a Markdown table whose header row names a KL term
    (every line between the header and the row is the same table's)."""
    header = comparison.table_header(text, line_start)
    if not header or not KL_TERM.search(header):
        return False
    start = text.rfind(header, 0, line_start)
    lines = text[start:line_start].splitlines()
    return start >= 0 and all(line.lstrip().startswith("|") for line in lines[1:])
