"""Rows of a flattened table with one decimal KL value beside values of other kinds (issue 28, claim detection): a
single-space row "label  24,130  0.1049  83.59%", "504B (this) 168 / 256 328 GB 0.506" or, in a one-row table of
metrics with no label column, "0% 100% 0.0397 200" holds one decimal KL value beside counts, percentages, sizes and
fractions, so counting decimals alone (claim_tables.flat_tables wants two) misses it. A row here: an optional
label (any words, not ending in a value), then a block of values to the line's end — numbers (thousands-grouped
counts, decimals, percentages), a size or speed unit after a number, "/" between two, and the placeholders a
reference row holds ("Q8_0 30.4 GB baseline baseline") — with two entries at least, one of them a decimal number. Samples in tests/test_lint_key_values.py."""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.claims_patterns import NUMBER
from kldcard.lint.read.numbers import COMMA_THOUSANDS

TOKEN = re.compile(r"[-+]?" + COMMA_THOUSANDS + r"|[-+]?\d+(?:\.\d+)?(?:e-?\d+)?%?", re.I)
# a value's companions inside the value block: its unit ("328 GB", "4.1 bpw") or a fraction's slash ("168 / 256")
COMPANION = re.compile(r"/|GB|GiB|MB|MiB|TB|bpw|t/s|tok/s|ms|s", re.I)
# what the reference row holds where the others hold values, as a pipe table's reference row does ("baseline", "—")
PLACEHOLDER = re.compile(r"baseline|reference|ref|\(ref\)|—|–|-|n/a|none", re.I)


def mixed_row(row: str) -> bool:
    """Whether ``row`` is an optional label followed by values only, one or more of them a decimal KL value."""
    tokens = row.split()
    k = len(tokens)
    while k > 0 and (TOKEN.fullmatch(tokens[k - 1]) or PLACEHOLDER.fullmatch(tokens[k - 1])
                     or (k >= 2 and COMPANION.fullmatch(tokens[k - 1]) and TOKEN.fullmatch(tokens[k - 2]))):
        k -= 1
    values = tokens[k:]
    numbers = [t for t in values if TOKEN.fullmatch(t)]
    filled = len(numbers) + sum(bool(PLACEHOLDER.fullmatch(t)) for t in values)
    if len(tokens) < 3 or filled < 2 or not numbers or (k and not tokens[0][:1].isalnum()):
        return False
    return any(NUMBER.fullmatch(t) for t in numbers)
