"""Whether a number of a sentence belongs to one of its KLD terms, and whether a statistic label stands
beside it: the nearness rules shared by prose claims (:mod:`kldcard.lint.claims`) and table cells written
as words (:mod:`kldcard.lint.claim_tables`)."""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from bisect import bisect_left, bisect_right
from collections.abc import Collection

from kldcard.lint.claims_patterns import AFTER_GAP, NUMBER, OTHER_METRIC, PARENTHETICAL, STAT_LABEL, SUITE_AS_TEXT, UNCERTAINTY
from kldcard.lint.read import far_numbers
from kldcard.lint.read.terms import APPROXIMATELY, alternation

# A "sentence" can be a whole pasted page without a full stop; every look around a number is bounded
# so that the work per number is constant, not the sentence's length (linear lint, issue 16).
MAX_GAP = 400  # characters: 60 of text plus a few parentheticals of at most 80
CJK_STOPS = "。！？"  # full stops of Chinese and Japanese, which the sentence splitter (". ") does not end sentences at

# a clause or sentence break in a gap: what follows it is another clause's (a task suite there is a metric of its own)
GAP_BREAK = re.compile(r"[;.!?]\s")


class KldTerms:
    """A sentence's KLD terms with bisectable ends and starts: the nearest term before / after a
    number in O(log n) instead of a scan per number (quadratic on a table pasted as one line)."""

    def __init__(self, terms: list[re.Match[str]]) -> None:
        self.terms = terms
        self.ends = [t.end() for t in terms]  # terms do not overlap: ends and starts are both sorted
        self.starts = [t.start() for t in terms]

    def before(self, pos: int) -> re.Match[str] | None:
        k = bisect_right(self.ends, pos)
        return self.terms[k - 1] if k else None

    def after(self, pos: int) -> re.Match[str] | None:
        k = bisect_left(self.starts, pos)
        return self.terms[k] if k < len(self.terms) else None


# A number in a parenthesis that qualifies the clause before it ("come out very low (on the order of 10^-3)", "stays
# small (about 0.004)"): the clause is measured up to the parenthesis, as a closed aside is left out (plain grammar).
# Only an approximation word may open it: another aside ("(averaged as in table 2.1", "(2,919 tokens, transformers 5.8")
# holds a number of its own.
OPEN_ASIDE = re.compile(r"\(\s*(?:(?:on\s+the\s+order\s+of|of\s+the\s+order\s+of|order\s+of|approx\b|"
                        + alternation(APPROXIMATELY) + r"|[~≈])\s*)*$", re.I)  # the "about" words: read.terms.APPROXIMATELY


def _near(gap: str) -> bool:
    """Whether the text between a KL term and its number is short enough, asides and an opened parenthesis left out."""
    m = OPEN_ASIDE.search(gap)
    if m is not None:
        gap = gap[: m.start()]
    return len(PARENTHETICAL.sub("", gap)) <= 60


# A statistic word right before a value, at most a short name between ("mean 3056", "max|Δlogit|=4.7"), labels that
# value: when the value is not the KLD number, the word is another quantity's label, not the KLD's ("(internal MLP
# error mean 3056) measured KLD 0.028548", "KL(bf16||fp8)=0.0045, max|Δlogit|=4.7": gptq_attempt3 h13/a, cipher h4/b;
# plain grammar of a label and its value)
OWN_VALUE = re.compile(r"[^\s,;()]{0,12}[ \t]*[=:]?[ \t]*[~≈]?(?=[-−]?\d)")
# the values of a slashed list share their labels ("median/p99: 0.01/0.3")
SLASH_LIST = re.compile(r"[\d.,eE+\-−]+(?:[ \t]*/[ \t]*[\d.,eE+\-−]+)*[ \t]*/[ \t]*")


def _labels_other(sentence: str, label: re.Match[str], pos: int, kld: Collection[int]) -> bool:
    """Whether the statistic ``label`` labels a value of its own that is neither the number at ``pos`` nor another
    KLD number of the claim (``kld``: their positions; "KLD 0.0045 (max 0.12)" states the KLD's max)."""
    own = OWN_VALUE.match(sentence, label.end())
    if own is None or own.end() == pos or own.end() in kld:
        return False
    return not (own.end() < pos and SLASH_LIST.fullmatch(sentence, own.end(), pos))


def number_labelled(sentence: str, pos: int, length: int, terms: KldTerms, kld: Collection[int] = ()) -> bool:
    """Whether a statistic label stands near the number and its KLD term ("mean KLD of 0.02 nats"); ``kld``: the
    positions of the claim's other KLD numbers in ``sentence``."""
    before, after = terms.before(pos), terms.after(pos + length)
    start = max(0, (before.start() if before else pos) - 20, pos - MAX_GAP)
    end = min((after.end() if after and not before else pos + length) + 25, pos + length + MAX_GAP)
    # a CJK full stop ends the sentence the splitter (". " only) does not: "（KLD 为 0.0012）。基准还测了 p95 TTFT"
    start = max([start] + [sentence.rfind(c, start, pos) + 1 for c in CJK_STOPS])
    end = min([end] + [e for e in (sentence.find(c, pos + length, end) for c in CJK_STOPS) if e >= 0])
    return any(not _labels_other(sentence, m, pos, kld) for m in STAT_LABEL.finditer(sentence, start, end))


def number_attached(sentence: str, pos: int, length: int, terms: KldTerms) -> bool:
    """Whether the number at ``pos`` belongs to a KLD term of the sentence.

    It does when the nearest KLD term before it is at most 60 characters away with no other metric
    and no other number in between (uncertainty words such as "±" or "95% CI" pass through), or when
    a KLD term follows within 15 characters ("0.0009 mean KLD"), or when the term's clause ends in a colon right
    before the number (read.far_numbers: "KLD over the public mix against the control: 0.0250").
    """
    before = terms.before(pos)
    if before is not None and pos - before.end() <= MAX_GAP:
        gap = sentence[before.end() : pos]
        suite = SUITE_AS_TEXT.search(gap)
        if suite is not None and not GAP_BREAK.search(gap, 0, suite.start()):  # "Mean KLD on GSM8K: 0.012": the text
            gap = gap[: suite.start()] + " " + gap[suite.end() :]
        # A parenthetical does not detach the number: "KL-divergence (mean over 512 samples): 0.0064"; nor does an aside
        # about another metric, its numbers included ("el KLD medio ... (40 x 512; PPL del Q8_0 = 8,489) es de 0,081").
        # A parenthetical of bare values ("(0.004 vs 0.003)") holds the term's own numbers: what follows it is detached.
        aside = PARENTHETICAL.sub(lambda m: "" if OTHER_METRIC.search(m.group(0)) else m.group(0), gap)
        if _near(gap) and not OTHER_METRIC.search(aside):
            nums = list(NUMBER.finditer(aside))
            if not nums or UNCERTAINTY.search(gap):
                return True
        if far_numbers.colon_value(gap) and not OTHER_METRIC.search(gap):  # "KLD ... against X: 0.025"
            return True
    after = terms.after(pos + length)
    if after is not None and after.start() - pos - length <= MAX_GAP:
        gap = sentence[pos + length : after.start()]
        if AFTER_GAP.match(gap):
            return True
    return False
