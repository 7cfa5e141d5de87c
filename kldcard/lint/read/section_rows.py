"""R1's section rows (tests/data/real_cards/labels.yaml): a transposed table whose "KLD" row carries no value
and is followed by rows labelled by a statistic ("KLD | | |", then "Mean | 0.691 | ...", "Max | ...",
"99.9% | ...", "median | ..."). The claim is the first statistic row; the statistic rows under it are its
numbers (kldcard.lint.claims reads them). Samples in tests/test_lint_read_d789.py.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from bisect import bisect_right

from kldcard.lint.markdown import Table
from kldcard.lint.read.terms import STATISTIC_WORDS, alternation

STAT_ROW = re.compile(
    r"^[\s*_`]*(?:mean|average|avg|median|max(?:imum)?|min(?:imum)?|p\d{1,2}(?:\.\d+)?|\d{1,2}(?:\.\d+)?\s*%|μ|"
    + alternation(STATISTIC_WORDS) + r")[\s*_`:]*$",
    re.IGNORECASE,
)


def statistic_rows(t: Table, r: int) -> list[int]:
    """The rows right under the value-less KLD row ``r`` of ``t`` whose label is a statistic, in order."""
    out: list[int] = []
    for row in t.rows[bisect_right(t.rows, r) :]:
        cells = t.cells[row]
        if row != (out[-1] if out else r) + 1 or not cells or not STAT_ROW.match(cells[0][1]):
            break
        out.append(row)
    return out
