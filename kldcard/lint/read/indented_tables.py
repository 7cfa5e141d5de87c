"""Fixed-width tables whose row labels have no header (issue 28, claim detection): the header line is indented
over the label column and names its columns two or more spaces apart, one of them a KL term; each row starts
with its label at the left and has a value under the KL column, as test harnesses and scripts print results:

                     mean_kld   same argmax
    greedy           0.000000   512/512
    prefix_reuse     0.000013

The claim is the header line (R2); its numbers the values under the KL column (a value's span overlaps the
column name's). Not a header: a line with a number, a training term, or fewer than four leading spaces.
Samples in tests/test_lint_key_values.py."""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.claim_types import Claim, numbers_in
from kldcard.lint.claims_patterns import NUMBER, STAT_LABEL, TRAINING_CONTEXT
from kldcard.lint.markdown import Doc
from kldcard.lint.read import table_columns

CELL = re.compile(r"\S+(?: \S+)*")  # cells are two or more spaces apart
MAX_ROWS = 64


def _under(row: str, start: int, end: int) -> re.Match[str] | None:
    """The cell of ``row`` under the column spanning ``start``-``end``, when it is a number."""
    for c in CELL.finditer(row):
        if c.start() < end and c.end() > start:
            return c if NUMBER.fullmatch(c.group(0)) else None
    return None


def indented_tables(doc: Doc, consumed: set[int]) -> list[Claim]:
    """The fixed-width tables with an unheaded label column in ``doc``; their lines join ``consumed``."""
    claims: list[Claim] = []
    lines = doc.lines
    for i in sorted(table_columns.header_lines(doc)):
        line = lines[i]
        indent = len(line) - len(line.lstrip(" "))
        if i in consumed or indent < 4 or "|" in line or NUMBER.search(line) or TRAINING_CONTEXT.search(line):
            continue
        cells = list(CELL.finditer(line))
        ks, labelled = table_columns.named([c.group(0) for c in cells]), True
        if ks:
            labelled = all(STAT_LABEL.search(cells[k].group(0)) for k in ks)
        else:  # the label column has no header: its cell is empty
            ks, labelled = table_columns.from_context(doc, i, ["", *(c.group(0) for c in cells)])
            ks = [k - 1 for k in ks]
        cols = [cells[k] for k in ks]
        if not cols:
            continue
        numbers, j = [], i + 1
        while j < len(lines) and j - i <= MAX_ROWS and j not in consumed and lines[j][:1].strip() and doc.code[j] == doc.code[i]:
            first = CELL.match(lines[j])
            if first is None or first.end() > indent:  # the label stays left of the header
                break
            found = [m for c in cols if (m := _under(lines[j], c.start(), c.end()))]
            if not found:
                break
            numbers += [n for m in found for n in numbers_in(m.group(0), doc.starts[j] + m.start())]
            j += 1
        if not numbers:
            continue
        claims.append(Claim("table", doc.starts[i] + cols[0].start(), line.strip(), labelled, numbers))
        consumed.update(range(i, j))
    return claims
