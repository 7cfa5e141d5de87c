"""Kinds of KLD claim the base patterns of kldcard.lint.claims_patterns miss (data; samples in
tests/test_lint_read_d789.py):

- KL terms written as a tool's or a script's identifiers: "KLD_95", "KLD_99.9" (a percentile), "mean_kld",
  "max_kl_div", "median_kld" (logs, JSON keys and table headers print metric names in snake case);
- relative measurements written with a percentage or a factor before the comparison word and the term, in
  English and the card languages ("22% lower KLD", "1.66× lower divergence", "a 6.7x worse divergence",
  "13% lower mean KL", "69 % menos KLD"): R4 of tests/data/real_cards/labels.yaml;
- (claims_patterns.AFTER_GAP) a number given in nats before the term: "0.021 nats of mean KL drift".

A bare "divergence" is a KL term only in a relative measurement here: alone it names too many other things.

And one kind of text that only looks like a flattened table (R2): a sentence wrapped after its KL term, its
numbers on the next line ("... interval of the KL delta is" / "[+0.2957, +0.4025] nats/token, far from
zero."): :func:`wrapped_sentence` tells it apart, and the sentence is read as prose. A number linked to a
KLD number before it by a comparison or another statistic is a KLD number too (:func:`chain`).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from typing import Any

from kldcard.lint.read.numbers import SLASH
from kldcard.lint.read.terms import CONJUNCTIONS, KL_WORD

# regular-expression text, joined into claims_patterns.KLD_TERM / RELATIVE / AFTER_GAP
# (not a command-line option: "--max_kl_div=0.03" is a threshold the tool is given)
# and the same names in camel case, the other casing of identifiers ("medKLD=1.496", "meanKLD: 0.02", "maxKLDiv"): the
# statistic glued to the term, its capitals marking the word break
IDENTIFIERS = (r"(?<!-)KLD_\d{2}(?:\.\d)?(?![\w.])|(?<![A-Za-z-])(?:mean|median|max|min|avg|p\d{2})_kl(?:d|_div(?:ergence)?)(?![A-Za-z_])"
               r"|(?<![A-Za-z_-])(?:mean|med|median|max|min|avg)(?:KLD|KL[Dd]iv(?:ergence)?)(?![A-Za-z_])")

COMPARATIVES = (
    "lower|higher|smaller|larger|less|more|worse|better",
    "menos|más|mayor|menor",  # es
    "moins|plus",  # fr
    "weniger|mehr|niedriger|höher",  # de
    "menor|maior",  # pt
)
# the statistic a relative change is of, between the comparison word and the term ("~40% lower max KL-divergence")
STATISTIC_BEFORE = r"(?:(?:mean|median|max(?:imum)?|min(?:imum)?|average|avg|p\d{1,2}(?:\.\d)?)\s+)?"
RELATIVE_MORE = (
    r"(?<![\w.])~?\d+(?:\.\d+)?\s*(?:%|[x×])\**\s+(?:" + "|".join(COMPARATIVES) + r")\s+(?:de\s+)?" + STATISTIC_BEFORE
    + r"(?:" + KL_WORD + r"|divergence\b)|"
    # a share of a KL quantity: "closes 61% of the KLD gap", "95% of the KL mass"
    r"(?<![\w.])\d+(?:\.\d+)?\s*%\s+of\s+the\s+(?:mean\s+)?" + KL_WORD + r"\s+(?:gap|mass|difference|reduction|increase)\b|"
    # a share of a named KL, then a verb: "(~84% of a Q8 KLD was the cross-engine delta)"; not a tolerance
    # ("within 2% of this KLD mean")
    r"(?<!within\s)(?<![\w.~≈])[~≈]?\d+(?:\.\d+)?\s*%\s+of\s+(?:a|an)\s+(?:[\w-]+\s+){0,2}?" + KL_WORD + r"\s+(?:is|was|are|were|comes?|came)\b|"
    # the KL term, then a factor of another KL: "handoff KL ~0.53x of target KL", "KLD 1.8x that of Q4_K_M"
    + KL_WORD + r"\s+[~≈]?\d+(?:\.\d+)?\s*[x×]\s+(?:that\s+)?of\b|"
    # the KL term first, then a copula: "`q4_0`'s tail KLD is 32% worse than q5_0's", "KL is 5x lower than on E2B"
    + KL_WORD + r"\s+(?:is|was|are|were)\s+~?\d+(?:\.\d+)?\s*(?:%|[x×])\**\s+(?:" + "|".join(COMPARATIVES) + r")\b"
)

# a table header ends with a column's name, a wrapped sentence often with a word that needs what follows
FUNCTION_WORD_END = re.compile(
    r"\b(?:is|are|was|were|be|by|of|the|to|and|or|at|from|a|an|with|than|for|in|on|as|into|that|which|its|their)[\s*_`]*$", re.I
)
SENTENCE_INSIDE = re.compile(r"[.!?](?:\*\*)?\s+\S|[，。、；]")  # a sentence ends, or a clause, inside the "header"
SENTENCE_END = re.compile(r"[.:;!?。：；][\s*_`)\]]*$")
# a clause joined by a comma and a conjunction in the "row" (", so the noise floor", ", and top-1"): prose, plain grammar
# (read.terms.CONJUNCTIONS, both kinds)
CLAUSE_INSIDE = re.compile(r",\s+(?:" + "|".join(CONJUNCTIONS["own clause"] + CONJUNCTIONS["tied clause"]) + r")\s+[a-z]")


def wrapped_sentence(header: str, first_row: str) -> bool:
    """Whether a "header" line naming KL and the numbered line under it are one sentence wrapped in two."""
    return bool(FUNCTION_WORD_END.search(header) or SENTENCE_END.search(first_row.rstrip()) or SENTENCE_INSIDE.search(header)
                or CLAUSE_INSIDE.search(first_row))


# Between a KLD number and the next number of its sentence: a comparison or another statistic of the same
# measurement makes that number a KLD number too ("KLD 0.979 against 0.491", "falls from 0.019 to 0.017",
# "0.00023 nat on average (p99 0.001", "0.010513 比 `rk2v4-e8` 的 0.043619").
LINK = re.compile(
    r"\b(?:vs\.?|versus|against|compared\s+(?:to|with)|to|from|than|frente\s+a|contra|contre|gegenüber|"
    r"p\d{1,2}(?:\.\d)?|median|max(?:imum)?|mean)\b|→|->|⟶|比|对|對|相比|より",
    re.IGNORECASE,
)
LINK_GAP = 40  # characters between the two numbers
# a slash alone between two numbers joins them into one list of values (read.numbers.SLASH_LIST: "0.164/0.172")
SLASH_GAP = re.compile(SLASH)


def chain(sentence: str, start: int, candidates: list[Any], attached: list[Any], other: re.Pattern[str]) -> list[Any]:
    """``attached`` (the sentence's KLD numbers) and the ``candidates`` (its other numbers, in order, each with
    ``offset`` and ``text``) linked to a KLD number before them by :data:`LINK`, with no other metric between."""
    kept = {n.offset for n in attached}
    previous = None
    for n in candidates:
        if n.offset in kept:
            previous = n
            continue
        if previous is not None and previous.offset in kept:
            gap = sentence[previous.offset + len(previous.text) - start : n.offset - start]
            linked = SLASH_GAP.fullmatch(gap) or (LINK.search(gap) and not other.search(gap))
            if len(gap) <= LINK_GAP and linked and "\n\n" not in gap:
                kept.add(n.offset)
        previous = n
    return [n for n in candidates if n.offset in kept]


# the further amounts of a relative measurement's sentence: "cut KLD by 11.9% on one panel and by 7.7% on the other"
FURTHER = re.compile(r"\bby\s+~?(?P<n>\d+(?:\.\d+)?)\s*%")


def further(sentence: str, end: int) -> list[int]:
    """Positions in ``sentence`` of the further "by N%" amounts (their numbers) after a relative measurement ending at ``end``."""
    return [m.start("n") for m in FURTHER.finditer(sentence, end)]


# A measured value checked against a gate: "`max_kl_div` is 2.4e-05 ..., against a 0.03 threshold", "~1.86e-3 KL divergence,
# above the old 7e-4 threshold", "max KL = 9.15e-03 > threshold 1.0e-03", "(threshold: 0.0e+00)". The gate's phrase makes
# the sentence no training or target statement (claims_patterns.TRAINING_CONTEXT reads the rest), and its number is no
# measurement. The grammar of a numbered threshold: the number before the word, or the word then the number.
_GATE_WORD = r"(?<![A-Za-z])(?:threshold|gate|limit|cut-?off)"  # (a key's word too: "hf_kl_threshold: 1e-3")
_GATE_NUMBER = r"[<≤>≥]?\s*`?\d[\d.]*(?:e[-+]?\d+)?`?"
GATE = re.compile(
    r"\b(?:against|below|under|within|above|over|exceed(?:s|ing)?|vs\.?)\s+(?:(?:a|an|the|its|our)\s+)?(?:(?:old|new|current|default|previous)\s+)?"
    + _GATE_NUMBER + r"\s+" + _GATE_WORD + r"\b|[<>≤≥]?\s*" + _GATE_WORD + r"\b[\s:=`]*" + _GATE_NUMBER
    # a measured value placed against an unnumbered gate by a comparison word ("+3.2% above threshold", "well outside
    # the strict threshold"): plain grammar of comparison
    + r"|\b(?:above|below|under|over|within|outside|inside)\s+(?:(?:a|an|the|its|our)\s+)?(?:[\w-]+\s+)?" + _GATE_WORD + r"\b"
    # or by a verb of meeting or missing it ("reached the preregistered Tier 1 threshold", "fails the quality gate",
    # "misses the KL gate": h12 enoch, h6 r924, h9 localai): plain grammar of comparison verbs
    + r"|\b(?:reach(?:es|ed)?|meets?|met|pass(?:es|ed)?|clear(?:s|ed)?|miss(?:es|ed)?|fail(?:s|ed)?)\s+(?:(?:a|an|the|its|our)\s+)?"
    r"(?:[\w-]+\s+){0,3}?" + _GATE_WORD + r"\b",
    re.I,
)
GATE_AFTER = re.compile(r"`?\s*" + _GATE_WORD + r"\b", re.I)
GATE_BEFORE = re.compile(_GATE_WORD + r"\b[\s:=`]*[<≤>≥]?\s*`?$", re.I)
# a verb of meeting or missing a target right before the KL term and its number: the number is the target
# ("clears floor 1 but misses KL 0.01", "meets the KL 0.02 bar"): comparison verbs, plain grammar
TARGET_BEFORE = re.compile(r"\b(?:miss(?:es|ed)?|meets?|clears?|fails?)\s+(?:the\s+)?" + KL_WORD + r"[\s:=`]*[<≤]?\s*`?$", re.I)


# a stopping rule: a verb of stopping, a condition, then the bound after a comparison ("stop if the cumulative KL goes
# above 0.15", "abort when mean KLD exceeds 0.05"): the number is the rule's bound, plain grammar of a condition
STOP_RULE = re.compile(r"\b(?:stop|abort|halt|bail|reject|roll\s*back|early[- ]stop)\w*\s+(?:the\s+[\w-]+\s+)?(?:if|when|once|whenever)\b", re.I)
STOP_BOUND = re.compile(r"(?:\b(?:above|over|below|under|exceeds?|exceeding|tops?)|[<>≤≥])\s*`?$", re.I)


def without_gates(sentence: str) -> str:
    """``sentence`` with its "against a 0.03 threshold" phrases blanked (same length)."""
    return GATE.sub(lambda m: " " * len(m.group(0)), sentence)


def is_gate(sentence: str, pos: int, length: int) -> bool:
    """Whether the number at ``pos`` names a gate ("a 0.03 threshold"), not a measured value."""
    return (GATE_AFTER.match(sentence, pos + length) is not None or GATE_BEFORE.search(sentence, max(0, pos - 24), pos) is not None
            or TARGET_BEFORE.search(sentence, max(0, pos - 24), pos) is not None
            or (STOP_BOUND.search(sentence, max(0, pos - 24), pos) is not None  # (the rule's own clause: up to a ";")
                and STOP_RULE.search(sentence, sentence.rfind(";", 0, pos) + 1, pos) is not None))
