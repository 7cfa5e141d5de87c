"""Lists of bounds (issue 28, claim detection; R4 of tests/data/real_cards/labels.yaml): a list whose title names
thresholds, limits or tolerances gives the bounds a run is held to, not what a run measured ("These defaults are
policy limits:" then "- Mean token KL: no more than 0.0001 nats"; a "### When to Relax Thresholds" section's
"- KL divergence: 0.1-0.2"; a "# Default thresholds" comment over '"max_kl_divergence": 0.1').

The list's title is the line that opens it (the nearest line above its items that is no item: a heading, a line ending
in a colon or an opening brace, or a code comment), and, when that line is a bare label ("**Adjustments**:"), the
heading of its section over the other labels of the section. A list opened by a sentence ("... stays clearly under the
0.0629 threshold. Same top p ...") or a heading that only names gates ("### Gates": results are reported against
gates) has no such title; the bound words are stated_bounds' (its one list, in the card languages too: "## 阈值",
"Umbrales:") and "thresholds". Read from the layout of the list, not its words: samples in
tests/test_lint_read_forms_claims.py.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.markdown import HEADING, LIST_ITEM, Doc
from kldcard.lint.read.lead_in_lists import LAST_SENTENCE
from kldcard.lint.read.stated_bounds import BOUND_WORDS, BOUND_WORDS_OTHER_LANGUAGES

# the words of a bound (read.stated_bounds' list, whose labels need a colon right after them), and "thresholds" (a
# title's word only: a "threshold: 0.05" label is read.claim_terms.GATE's)
BOUND_NOUN = re.compile(r"\b(?:thresholds?|" + BOUND_WORDS + r")\b|" + BOUND_WORDS_OTHER_LANGUAGES, re.IGNORECASE)
# an item of a list: a bullet or number, or an entry of a dict or config with its value ('"max_kl": 0.1', "max_kl =
# 0.1", "max_kl: <= 0.1"); a key with words after it ("Note: see below") or nothing ("Results:") is no entry
ITEM = re.compile(r'^\s*(?:"[\w. -]{1,60}"|[\w.-]{1,60})\s*[:=]\s*[-+<>≤≥~"\'\[\d.]')
# a line that opens a list: ends in a colon (emphasis after it allowed) or an opening brace, or is a code comment
OPENER = re.compile(r"[:{][\s*_`]*$")
COMMENT = re.compile(r"^\s*(?:#|//)")
# a bare label: a few words (emphasised or not) and a colon, nothing after it ("**Adjustments**:")
BARE_LABEL = re.compile(r"^\s*[*_]{0,2}[^\W\d][\w -]{0,30}[*_]{0,2}\s*:[\s*_]*$")
# a label line with its value ("**Use case**: Research, experiments"): passed over on the way up to the heading
LABEL_LINE = re.compile(r"^\s*[*_]{2}[^*_\n]{1,40}[*_]{2}\s*:")
TITLE_REACH = 400  # characters of a lead-in paragraph read for its last sentence
REACH = 40  # lines walked up from an item: a list's title is near it (bounded per line: linear lint)


def _title(doc: Doc, i: int) -> int | None:
    """The line that opens the list line ``i`` is an item of, or None (no list, or too far up)."""
    lines = doc.lines
    j = i - 1
    # an item line that itself opens a list ("measured = {", "Results:") is the nearer list's title: stop there
    while j >= 0 and i - j <= REACH and (not lines[j].strip() or LIST_ITEM.match(lines[j])
                                         or (ITEM.match(lines[j]) and not OPENER.search(lines[j]))):
        j -= 1
    if j < 0 or i - j > REACH:
        return None
    return j if HEADING.match(lines[j]) or COMMENT.match(lines[j]) or OPENER.search(lines[j]) else None


def _section_heading(doc: Doc, j: int) -> str | None:
    """The heading right over the bare label at ``j``, with only blank and label lines between, or None."""
    k = j - 1
    while k >= 0 and j - k <= REACH and (not doc.lines[k].strip() or LABEL_LINE.match(doc.lines[k])):
        k -= 1
    return doc.lines[k] if k >= 0 and j - k <= REACH and HEADING.match(doc.lines[k]) else None


def bound_item(doc: Doc, i: int) -> bool:
    """Whether line ``i`` is an item of a list titled as bounds (thresholds, limits, tolerances)."""
    if not (LIST_ITEM.match(doc.lines[i]) or ITEM.match(doc.lines[i])):
        return False
    j = _title(doc, i)
    if j is None:
        return False
    title = doc.lines[j]
    if not (HEADING.match(title) or COMMENT.match(title)):  # a lead-in paragraph: its last sentence opens the list
        m = LAST_SENTENCE.search(title.rstrip()[-TITLE_REACH:])  # (bounded: a pasted page on one line stays linear)
        title = m.group("s") if m else title
    if BOUND_NOUN.search(title):
        return True
    if HEADING.match(doc.lines[j]) or not BARE_LABEL.match(doc.lines[j]):
        return False
    heading = _section_heading(doc, j)
    return heading is not None and BOUND_NOUN.search(heading) is not None
