"""Value lists (issue 28, claim detection): a caption line that names KLD and ends with a colon, then lines of one
label and one number each, the layout of result notes, logs and code comments:

    RESULT (mean KLD vs Q8_0, lower = closer):      # or "KLD vs BF16:" in prose
      UD-Q4_K_XL  0.011165   <- best
      Q4_K_M      0.016814   (+34%)

The claim is the caption line (R2: the label line of a pipe-less table); the numbers are the rows' first numbers.
A row is a label (no colon, equals sign or pipe; not another metric) then the number, then at most a comment with
no further number outside parentheses; a code comment's marker ("#", "//") is skipped on the caption and the rows.
Not a caption: a line with a number of its own, a training or rule-of-thumb context, a list item (list items are
read as sentences). At least two rows. Samples in tests/test_lint_claim_detection.py."""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.claim_types import Claim, numbers_in
from kldcard.lint.claims_patterns import GENERIC_CONTEXT, KLD_TERM, NUMBER, OTHER_METRIC, STAT_LABEL, TRAINING_CONTEXT
from kldcard.lint.markdown import HEADING, LIST_ITEM, Doc

COMMENT = re.compile(r"^\s*(?:#+|//|--|;+|\*)?\s*")
CAPTION_END = re.compile(r":[\s*_`]*$")
LABEL = re.compile(r"^[^\s:=|<>][^:=|<>]{0,40}?$")
PARENS = re.compile(r"\([^()]*\)")
MAX_ROWS = 64


def _body(line: str) -> str:
    return line[COMMENT.match(line).end() :]


def value_lists(doc: Doc, consumed: set[int]) -> list[Claim]:
    """The value lists of ``doc``; their lines join ``consumed`` (not read again as prose)."""
    claims: list[Claim] = []
    lines = doc.lines
    for i in sorted(doc.lines_matching(KLD_TERM)):
        line = lines[i]
        body = _body(line)
        if i in consumed or len(body) > 200 or not CAPTION_END.search(body) or HEADING.match(line) or LIST_ITEM.match(line):
            continue
        if NUMBER.search(body) or TRAINING_CONTEXT.search(body) or GENERIC_CONTEXT.search(body) or "|" in body:
            continue
        numbers, j = [], i + 1
        while j < len(lines) and j - i <= MAX_ROWS and j not in consumed and doc.code[j] == doc.code[i]:
            row = _row_number(lines[j], doc.starts[j])
            if row is None:
                break
            numbers.append(row)
            j += 1
        if len(numbers) < 2:
            continue
        term = KLD_TERM.search(line)
        claims.append(Claim("table", doc.starts[i] + term.start(), line.strip(), bool(STAT_LABEL.search(body)),
                            [n for row in numbers for n in row]))  # fmt: skip
        consumed.update(range(i, j))
    return claims


def _row_number(line: str, base: int) -> list | None:
    """The number of a value-list row, or None when ``line`` is not one."""
    if LIST_ITEM.match(line):
        return None
    skip = COMMENT.match(line).end()
    body = line[skip:]
    m = NUMBER.search(body)
    if m is None or not LABEL.match(body[: m.start()].rstrip()) or OTHER_METRIC.search(body[: m.start()]):
        return None
    rest = PARENS.sub(" ", body[m.end() :])
    if NUMBER.search(rest) or not body[: m.start()].endswith((" ", "\t")):
        return None
    return numbers_in(m.group(0), base + skip + m.start())
