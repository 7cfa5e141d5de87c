"""Lists a KL sentence introduces (issue 28, claim detection): a paragraph whose last sentence names a KL term
and ends with a colon ("... give materially different KL vectors from one run to the next:"), then list items
that each give a statistic and its value ("- run A: mean 0.0471, ...", "- run B: median 0.0032"). The items
complete the sentence, so the KL term is theirs (R5: one claim per item line; the number is the first decimal
right after the statistic word).

Not a lead-in: a heading, a list item, code, a training or rule-of-thumb sentence. Not an item: one without a
statistic word right before a decimal, or one that names another metric before it ("PPL mean 7.1"); the list
ends at the first such item. Samples in tests/test_lint_claim_lead_in.py.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.claim_types import Claim, numbers_in
from kldcard.lint.claims_patterns import GENERIC_CONTEXT, KLD_TERM, OTHER_METRIC, STAT_LABEL, TRAINING_CONTEXT
from kldcard.lint.markdown import HEADING, LIST_ITEM, Doc

LEAD_END = re.compile(r":[\s*_`]*$")
LAST_SENTENCE = re.compile(r"(?:^|[.!?]\s)(?P<s>[^.!?]*(?:\.\d[^.!?]*)*)$")
STAT_VALUE = re.compile(
    r"\b(?:mean|median|average|avg|max(?:imum)?|min(?:imum)?|p\d{2}(?:\.\d)?)\b[\s*_`]*[:=]?[\s*_`]*"
    r"(?P<num>-?\d*\.\d+(?:[eE][-+]?\d+)?)(?![\w%]|\.\d)",
    re.IGNORECASE,
)
MAX_ITEMS = 32
# a lead-in that is a KL label and nothing more, bold or plain ("**KL to base (the 60 prompts) at night 7:**", "Mean KL
# vs BF16, per arm:"): its items are that KL's values by their own labels, a statistic word or not ("- dl-2: 0.15 and
# 0.19", "- run A: 0.031"); the first decimal after the item's label is the claim's (R5)
# (the term with statistic words before it and only its qualifiers after: a parenthesis, a phrase opened by a
# preposition; not a sentence about the KL, "How KL is computed:")
LABEL_LEAD = re.compile(
    r"^[\s*_`>]*(?:(?:mean|median|average|avg|max(?:imum)?|per-token|token-level|forward|reverse)\s+){0,3}(?:" + KLD_TERM.pattern + r")"
    # (possessive: a phrase cannot give back what it read, so a line that fails is read once, not once per split;
    # a comma only before "per/by/for/across/at" and a word: "Mean KL vs BF16, per arm:")
    r"(?:\s*\([^()\n]{0,60}\)|\s+(?:to|vs\.?|versus|against|from|of|on|over|at|per|for|by|across|in)\s+[^:.!?(),\n]{1,60}+"
    r"|,\s*(?:per|by|for|across|at)\s+[^:.!?(),\n]{1,40}+)*+"
    r"[\s*_`]*:[\s*_`]*$",
    re.IGNORECASE,
)
LABEL_VALUE = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+[^:\n]{1,40}:[^\d\n]{0,12}?(?P<num>-?\d*\.\d+(?:[eE][-+]?\d+)?)(?![\w%]|\.\d)"
                         # (a value with a unit is another quantity's: "- VRAM: 5.1 GB", "- throughput: 41.2 tok/s")
                         r"(?!\s*(?:GB|GiB|MB|MiB|tok|t/s|ms|s\b|%|x\b|×|bpw|bits|W\b))")
# an item that is a setting or a bound, whatever its value ("- top_p: 0.95", "- warn above: 0.05")
ITEM_NOT_MEASURED = re.compile(r"\b(?:top_?[pk]|temperature|temp|lr|beta|threshold|gate|limit|warn|above|below|max|min_p|seed)\b", re.IGNORECASE)


def _lead_in(line: str) -> bool:
    if LIST_ITEM.match(line) or HEADING.match(line) or not LEAD_END.search(line):
        return False
    m = LAST_SENTENCE.search(line.rstrip())
    sentence = m.group("s") if m else line
    return bool(KLD_TERM.search(sentence)) and not (TRAINING_CONTEXT.search(sentence) or GENERIC_CONTEXT.search(sentence))


def lead_in_lists(doc: Doc, taken: set[int]) -> list[Claim]:
    """The item claims of the lead-in lists of ``doc``, on lines not in ``taken`` (lines already claimed)."""
    claims: list[Claim] = []
    lines = doc.lines
    for i in sorted(doc.lines_matching(KLD_TERM)):
        if doc.code[i] or not _lead_in(lines[i]):
            continue
        label = LABEL_LEAD.match(lines[i]) is not None
        j = i + 1
        if j < len(lines) and not lines[j].strip():
            j += 1
        while j < len(lines) and j - i <= MAX_ITEMS and LIST_ITEM.match(lines[j]) and not doc.code[j]:
            stat = STAT_VALUE.search(lines[j])
            m = stat or (LABEL_VALUE.match(lines[j]) if label and not ITEM_NOT_MEASURED.search(lines[j]) else None)
            if m is None or OTHER_METRIC.search(lines[j][: m.start("num")]):
                break
            if j not in taken:
                at = doc.starts[j] + m.start("num")
                # labelled by the item's statistic word, or the lead-in's ("Mean KL vs BF16, per arm:")
                labelled = stat is not None or bool(STAT_LABEL.search(lines[i]))
                claims.append(Claim("sentence", at, lines[j].strip(), labelled, numbers_in(m.group("num"), at)))
                taken.add(j)
            j += 1
    return claims
