"""Rows of a flattened table whose other columns are counts and percentages (issue 28, claim detection): a
single-space row "label  24,130  0.1049  83.59%" holds one decimal KL value beside numbers of other kinds, so
counting decimals alone (claim_tables.flat_tables wants two) misses it. A row here: a label word first, then
only numbers (thousands-grouped counts, decimals, percentages), one of them a decimal KL value, three tokens at
least. Samples in tests/test_lint_key_values.py."""

from __future__ import annotations

import re

from kldcard.lint.claims_patterns import NUMBER

TOKEN = re.compile(r"[-+]?\d{1,3}(?:,\d{3})+|[-+]?\d+(?:\.\d+)?(?:e-?\d+)?%?", re.I)


def mixed_row(row: str) -> bool:
    """Whether ``row`` is a label followed by numbers only, one or more of them a decimal KL value."""
    tokens = row.split()
    if len(tokens) < 3 or TOKEN.fullmatch(tokens[0]) or not tokens[0][:1].isalpha():
        return False
    rest = tokens[1:]
    return all(TOKEN.fullmatch(t) for t in rest) and any(NUMBER.fullmatch(t) for t in rest)
