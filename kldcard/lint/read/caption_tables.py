"""Tables whose KL term stands in their caption (issue 28, claim detection): the line right above the table
(a blank line between them allowed), short, bold or ending in a colon or a full stop, names a KL term, and the
header row names the rows' categories, tiers or corpora ("**WT2 KLD, 24 chunks, prefill scoring**" over
"| tier | uniform | Lloyd | Δ |"; "KL in mnats; bpw is ..." over "| build | GiB | bpw | prose | code |").

Which columns hold the KLD values: every column after the first whose header cell names no other quantity
(size, bits, speed, top-1, percent) and no relative change ("Δ"). The claim is the header row (as for a
heading's table, kldcard.lint.read.table_context). Not a caption: a line that also names another quantity
before its KL term's clause ends ("PPL and KLD:"), a training or rule-of-thumb line, a heading (those are
table_context's), a line with a number in its KL clause (a sentence that gives its own value), a table in a section whose
heading names another quantity or training ("## Speed").
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.claims_patterns import GENERIC_CONTEXT, KLD_TERM, NUMBER, TRAINING_CONTEXT
from kldcard.lint.markdown import HEADING, Doc
from kldcard.lint.read.table_context import LOOK_BACK as SECTION_LOOK_BACK, OTHER_QUANTITY

LOOK_BACK = 4  # lines
MAX_CAPTION = 240  # characters: a caption, not a paragraph
MAX_TITLE = 100  # characters: a flattened title standing alone
CAPTION_SHAPE = re.compile(r"^\s*(?:\*\*|__)|[:.][\s*_`)]*$")
# a header cell naming something that is not a KLD value: a quantity, a size or bit width, a change, a share
NOT_VALUE = re.compile(r"\b(?:bpw|bits?|params?|experts?|layers?|tier|build|quant\w*|model|type|method)\b|Δ|%|\bdelta\b", re.I)
# the KL term's own clause: up to the next ";" or sentence end ("KL in mnats; bpw is text bytes ...")
CLAUSE = re.compile(r"[^;.]*")


def _captions(doc: Doc, header: int) -> list[str]:
    """The short lines right above a table's header line (any layout), nearest first: up to LOOK_BACK lines, not
    past a heading, another table or a code block (a bold sub-caption may stand between the KL caption and its
    table). A flattened title counts: a short line alone between blank lines, its heading mark lost."""
    out = []
    for i in range(header - 1, max(-1, header - 1 - LOOK_BACK), -1):
        line = doc.lines[i].strip()
        if doc.code[i] != doc.code[header] or line.startswith("|") or HEADING.match(doc.lines[i]):
            break
        if line and len(line) <= MAX_CAPTION:
            out.append(line if CAPTION_SHAPE.search(line) or not _alone(doc, i) else line + ":")
    return out


def _alone(doc: Doc, i: int) -> bool:
    """Whether line ``i`` is a short title standing alone: blank lines (or the text's start) around it."""
    return (len(doc.lines[i].strip()) <= MAX_TITLE and (i == 0 or not doc.lines[i - 1].strip())
            and i + 1 < len(doc.lines) and not doc.lines[i + 1].strip())


def _kl_caption(caption: str) -> bool:
    term = KLD_TERM.search(caption)
    if term is None or TRAINING_CONTEXT.search(caption) or GENERIC_CONTEXT.search(caption):
        return False
    if not CAPTION_SHAPE.search(caption):
        return False
    clause = caption[: term.end()] + CLAUSE.match(caption, term.end()).group(0)
    return not OTHER_QUANTITY.search(clause) and not NUMBER.search(clause)


def kl_captioned(doc: Doc, header: int) -> bool:
    """Whether the table whose header row is line ``header`` (a pipe table, a flattened or fixed-width one) has a
    caption naming a KL term (see the module's doc), in a section about nothing else."""
    if not any(_kl_caption(c) for c in _captions(doc, header)):
        return False
    above = range(header - 1, max(-1, header - 1 - SECTION_LOOK_BACK), -1)
    heading = next((doc.lines[i] for i in above if HEADING.match(doc.lines[i]) and not doc.code[i]), "")
    return not (OTHER_QUANTITY.search(heading) or TRAINING_CONTEXT.search(heading))  # not a table under "## Speed"


def caption_columns(doc: Doc, header: int, cells: list[str]) -> list[int]:
    """The value columns of a table (header line ``header``, header ``cells``, any layout) whose caption names a
    KL term (see the module's doc), or none."""
    if any(KLD_TERM.search(text) for text in cells) or not kl_captioned(doc, header):
        return []
    return [k for k, text in enumerate(cells) if k > 0 and not OTHER_QUANTITY.search(text) and not NOT_VALUE.search(text)]
