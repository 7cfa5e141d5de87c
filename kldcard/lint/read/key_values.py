"""Key-value lines (issue 28, claim detection): a KL metric's name and its one value, with nothing else, laid out
as a key and a value rather than a sentence or a table:

- the name alone on its line and the value alone on the next non-blank line, the way a card's metric widget or
  a two-column table reads once flattened ("KL divergence" / "<0.05": a bound reported as the result);
- the name, two or more spaces, the value, in pasted output ("mean KL(BF16 || INT8)     0.001185").

The name is a KL term with at most a statistic before it and a parenthesised direction or unit after it; the
value one number, optionally after a bound sign and before "nats". Not read: headings, list items, lines other
readers took. The claim is the value's line. Samples in tests/test_lint_key_values.py."""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.claim_types import Claim, numbers_in
from kldcard.lint.claims_patterns import KLD_TERM, STAT_LABEL
from kldcard.lint.markdown import HEADING, LIST_ITEM, Doc

I = re.IGNORECASE
MARKUP = " \t*_`>"
STAT = r"(?:(?:mean|median|average|avg|max(?:imum)?|min(?:imum)?|p\d{1,2}(?:\.\d)?)\s+)?"
NAME = re.compile(STAT + r"(?P<term>[^\s(]+(?:\s+div\w*)?)\s*(?:\([^()]{0,40}\))?", I)
VALUE = re.compile(r"(?:[<≤~≈]|<=)?\s*(?P<n>-?\d+(?:\.\d+)?(?:e-?\d+)?)(?:\s*nats?)?", I)
GAP = re.compile(r"\s{2,}")


def _name(text: str) -> bool:
    m = NAME.fullmatch(text.strip(MARKUP))
    return m is not None and KLD_TERM.fullmatch(m.group("term")) is not None


def key_values(doc: Doc, consumed: set[int]) -> list[Claim]:
    """The key-value claims of ``doc``; their lines join ``consumed``."""
    claims: list[Claim] = []
    lines = doc.lines
    for i in sorted(doc.lines_matching(KLD_TERM)):
        line = lines[i]
        if i in consumed or HEADING.match(line) or LIST_ITEM.match(line) or len(line) > 80:
            continue
        parts = GAP.split(line.strip())
        if len(parts) == 2 and _name(parts[0]) and VALUE.fullmatch(parts[1]):  # "maximum KL(...)   0.0153"
            at, value = i, parts[1]
        elif _name(line):
            j = i + 1
            while j < len(lines) and j - i <= 2 and not lines[j].strip():
                j += 1
            if j >= len(lines) or j in consumed or not VALUE.fullmatch(lines[j].strip(MARKUP)):
                continue
            at, value = j, lines[j].strip(MARKUP)
        else:
            continue
        offset = doc.starts[at] + lines[at].rindex(value)
        m = VALUE.fullmatch(value)
        claims.append(Claim("sentence", offset, line.strip(), bool(STAT_LABEL.search(line)),
                            numbers_in(m.group("n"), offset + m.start("n"))))  # fmt: skip
        consumed.update({i, at})
    return claims
