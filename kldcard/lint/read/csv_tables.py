"""CSV tables (issue 28, claim detection): a comma-separated header with a KL column, then rows with as many
fields, as a dataset file or a pasted results file shows them:

    quant,size_gb,mean_kld,ppl
    Q4_K_M,4.1,0.0213,7.02

The claim is the header line (R2: the label line of a pipe-less table); its numbers the KL columns' values.
A header is three or more fields, none of them a sentence (no field over 60 characters, no ". " inside), at least
one a KL term that no training word qualifies; a row has three fields up to the header's number (a file's
trailing columns may be cut off; quoted commas count as CSV reads them), half of them or more numbers. At least
one row with a number in a KL column. Samples in tests/test_lint_key_values.py."""

from __future__ import annotations

import csv
from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.claim_types import Claim, KldNumber, numbers_in
from kldcard.lint.claims_patterns import KLD_TERM, NUMBER, STAT_LABEL
from kldcard.lint.markdown import Doc
from kldcard.lint.read import table_columns

MAX_ROWS = 256
FIELD_NUMBER = re.compile(r"[-+]?\d[\d.]*(?:e-?\d+)?%?", re.I)  # any number, whole ones too


def _fields(line: str) -> list[str]:
    try:
        return next(csv.reader([line]))
    except (csv.Error, StopIteration):
        return []


def _cell_start(line: str, k: int, cell: str) -> int:
    """Where the ``k``-th field's ``cell`` starts in ``line`` (a quoted comma before it: its first occurrence)."""
    if '"' in line:
        return max(0, line.find(cell))
    parts = line.split(",")
    before = sum(len(p) + 1 for p in parts[:k])
    return before + parts[k].find(cell)


def _header(doc: Doc, i: int, fields: list[str]) -> tuple[list[int], bool]:
    """The KL columns of a CSV header on line ``i`` (read.table_columns: named, or named by the text around it) and
    whether they say their statistic; none when ``fields`` is no header."""
    if len(fields) < 3 or any(len(f) > 60 or ". " in f for f in fields):
        return [], False
    cols = table_columns.named(fields)
    if cols:
        return cols, all(STAT_LABEL.search(fields[k]) for k in cols)
    return table_columns.from_context(doc, i, fields)


def _row(fields: list[str], width: int) -> bool:
    """Whether ``fields`` is a data row of a ``width``-column CSV: three to ``width`` fields (a file's trailing
    columns may be cut off), half of them or more numbers."""
    numeric = sum(bool(FIELD_NUMBER.fullmatch(f.strip())) for f in fields)
    return 3 <= len(fields) <= width and 2 * numeric >= len(fields)


def csv_tables(doc: Doc, consumed: set[int]) -> list[Claim]:
    """The CSV tables of ``doc`` with a KL column; their lines join ``consumed``."""
    claims: list[Claim] = []
    lines = doc.lines
    for i in sorted(table_columns.header_lines(doc)):
        if i in consumed or "," not in lines[i] or "|" in lines[i]:
            continue
        heads = _fields(lines[i].strip())
        cols, labelled = _header(doc, i, heads)
        if not cols:
            continue
        numbers: list[KldNumber] = []
        j = i + 1
        while j < len(lines) and j - i <= MAX_ROWS and j not in consumed and "," in lines[j]:
            fields = _fields(lines[j].strip())
            if not _row(fields, len(heads)):
                break
            for k in cols:
                if k < len(fields) and NUMBER.fullmatch(cell := fields[k].strip()):
                    numbers += numbers_in(cell, doc.starts[j] + _cell_start(lines[j], k, cell))
            j += 1
        if not numbers:
            continue
        term = KLD_TERM.search(lines[i])
        start = term.start() if term else len(lines[i]) - len(lines[i].lstrip())
        claims.append(Claim("table", doc.starts[i] + start, lines[i].strip()[:200], labelled, numbers))
        consumed.update(range(i, j))
    return claims
