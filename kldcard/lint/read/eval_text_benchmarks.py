"""D3 and a task suite's name: whether it names a benchmark's score rather than the KLD's text (:func:`benchmark_only`),
and whether the suite's items picked by number are the text scored (:func:`items_picked`, read by eval_text_uses as
well). Split out of :mod:`kldcard.lint.read.eval_text` (over STYLE's ~400 lines) as the benchmark vetoes; it reads that
module's KL term, and that module nothing of this one.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read import eval_text_units
from kldcard.lint.read.eval_text import KL_TERM
from kldcard.lint.read.sentence_terms import has

I = re.IGNORECASE | re.ASCII

# task suites that evidence_patterns.D3 names: a score on them is a benchmark, a KLD on their prompts is rare
BENCHMARK = re.compile(r"^" + eval_text_units.TASK_SUITE + r"$", I)


# a suite's score by its protocol: "5-shot MMLU", "0-shot GSM8K", "MMLU (5-shot)"
SHOTS = re.compile(r"\b\d+-shot\s*$", I)
SHOTS_AFTER = re.compile(r"\s*\(?\d+-shot\b", I)
PROMPTS_AFTER = re.compile(r"\s*(?:\(\d+-shot\)\s*)?(?:prompts?|questions?|contexts?|problems?|items?)\b", I)
# the suite's items picked by number ("MATH-500, probs 60-69"): the text scored, with or without a KL term beside it
ITEMS_AFTER = re.compile(eval_text_units.ITEMS_PICKED, I)
# ... unless the suite's score follows them ("GSM8K, problems 1-200: 81.5% accuracy"): the benchmark's result again
SCORE_AFTER = re.compile(r"[^.;\n]{0,40}?(?:\d(?:[.,]\d+)?\s*%|\baccuracy\b|\bacc\b|\bpass@\d|\bexact[- ]match\b|\bF1\b)", I)


def items_picked(text: str, m: re.Match[str]) -> bool:
    """The suite at ``m`` is followed by the items picked from it and not by its score: the suite's items are the text
    scored ("MATH-500, probs 60-69"), not a benchmark result ("GSM8K, problems 1-200: 81.5% accuracy")."""
    items = ITEMS_AFTER.match(text, m.end())
    return items is not None and not SCORE_AFTER.match(text, items.end())


def benchmark_only(sentence: str, m: re.Match[str]) -> bool:
    """A task suite's name in a sentence without a KL term (its scores, not the KLD's text), or as an N-shot
    benchmark beside one ("beat the others on 5-shot MMLU and KL Divergence")."""
    if not BENCHMARK.match(m.group(0)):
        return False
    if items_picked(m.string, m):
        return False
    if not has(KL_TERM, sentence):
        return True
    if PROMPTS_AFTER.match(m.string, m.end()):  # "over MMLU (5-shot) prompts": the KL's text
        return False
    return bool(SHOTS.search(m.string, max(0, m.start() - 12), m.start()) or SHOTS_AFTER.match(m.string, m.end(), m.end() + 12))
