"""D9, the aggregation: which statistic a claim's numbers are, beyond evidence_patterns.D9's words.

- statistic words for a KL mean written apart from the KL term: "KL is the mean per-token log-ratio",
  "averaged across windows", "Ø KLD", the median's words in the card languages ("中央値", "mediana");
- an interval named by its letters next to numbers ("CI +4.5 to +6.6", "(CI [0.011, 0.013])"), a "±" named
  ("± SE", "± 1σ");
- the statistic the claim's own numbers carry (a column header "Mean KLD", a tool's "Median KLD:" line, a
  transposed row labelled "Mean" under a "KLD" section row, a note cell "bits/token moyen"):
  :func:`from_numbers` makes it the claim's D9 reading when no statement was found. An uncertainty read
  from a bare "±" is not one (R6: a "±" next to an unlabelled KLD says no statistic).

A statistic word that belongs to another metric is vetoed (:func:`veto`): in a table row that names KL in
another cell ("| avg per task | median | ... | KLD |": the median is the duration's), in a sentence about
speed ("0.79 +/- 0.02 tok/s (SEM)"), a test said not to have been run ("no bootstrap"), or a statistic word that
names no metric itself ("median", "average over", "95% CI", "percentiles") in a sentence without a KL term ("the
median reconstruction error", "Bits/w is the average over the whole model"). Samples in
tests/test_lint_read_d789.py.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from collections.abc import Iterable

from kldcard.lint.read import statistic_forms
from kldcard.lint.read.context import cjk_sentence
from kldcard.lint.read.terms import STATISTIC_WORDS
from kldcard.lint.reading import DisclosureReading, Evidence, NumberReading

I = re.IGNORECASE

PATTERNS = [
    re.compile(
        r"\bmean\s+per[- ](?:token|position|sequence|window|row|sample)\b|\b(?:mean|average|avg)\s*\(\s*[\w.\[\]]{0,30}?(?:log|kl)|\b(?:averaged|mean)\s+across\b|"
        r"Ø\s*(?:KLD|KL\b)|(?<![^\W\d_])(?:mean|average|median|" + "|".join(STATISTIC_WORDS["mean"] + STATISTIC_WORDS["median"])
        + r")\s+(?:\w{1,4}\s+){1,2}(?:KLD|KL\b)|"  # "the mean of the KLD", "promedio de la KLD", "moyenne de la KL"
        r"(?<![^\W\d_])(?:" + "|".join(STATISTIC_WORDS["median"]) + r")(?![^\W\d_])",
        I,
    ),
    re.compile(r"(?<![\w-])CI\s*[:=]?\s*[\[(]?\s*[+\-−]?\d"),  # an interval by its letters ("CI +4.5 to +6.6")
    re.compile(r"±\s*(?:1\s*)?(?:SE|s\.e\.|SEM|σ|std)(?![\w.])"),  # the "±" named: "mean ± SE", "± 1σ"
]
PATTERNS += statistic_forms.PATTERNS  # identifiers, reductions, max/percentile before KL, sigmas (read.statistic_forms)

KL_WORD = re.compile(r"KL|divergen|散度", I)
# statistic words that name no metric themselves: another metric's unless the sentence names the KL. A bare
# percentile ("p50", "P99") is such a word too: "TTFT P50 (ms)", "(mean, stddev, min, max, p50, p95)", "median 2 /
# p99 ~82" of kept-set sizes, "p95 TTFT" (riley h13/d, phantom h13/a, primerl h13/b, zh_digest_ornith h7/c)
OTHER_STATISTIC = re.compile(r"^(?:median|(?:averaged|mean|average) over|\d{2}(?:\.\d)?% CI|percentiles?|p\d{2}(?:\.\d+)?)$", I)
# the median in the card languages, apart from the KL term, states the KL's median ("The 中央値 is given for each
# quant"); followed by a value of its own in a sentence without the KL it is that value's ("(mediana -8%, capa 0
# -43%)" of a layer error: es_idiotsavant h13/f)
OTHER_MEDIAN = re.compile(r"^(?:" + "|".join(STATISTIC_WORDS["median"]) + r")$", I)
OWN_VALUE = re.compile(r"\s*[:=]?\s*[~≈]?[-−+]?\d")
SPEED = re.compile(r"\btok(?:ens)?/s\b|\bt/s\b|\bpass@\d|\blatency\b|\bthroughput\b", I)
NOT_RUN = re.compile(r"(?:\bno\b|\bnot\b|\bwithout\b|\bnever\b|\bsin\b|\bsans\b|\bohne\b|\bnão\b|\bни\b|未)[^.\n]{0,80}$", I)


# a bootstrap is an uncertainty model where its interval is given beside it ("bootstrap 95 % CI", "95% bootstrap over
# requests", "intervalo bootstrap"); a bootstrap only described ("a paired window bootstrap", a `bootstrap_mac.sh` step) is
# labelled D9 M by three authors (exl3_xpu notes h5/b, gptq_fisher validation h9/d, evol readme h11/a)
BOOTSTRAP = re.compile(r"bootstrap", re.IGNORECASE)
INTERVAL = re.compile(r"interval|\bCI\b|\d{2}\s?%", re.IGNORECASE)
INTERVAL_NEAR = 40  # characters either side, on the bootstrap's line


def veto(sentence: str, m: re.Match[str], text: str) -> bool:
    """Whether a D9 match states no statistic of a KLD claim (another metric's, a bootstrap without its interval, or a
    test not run)."""
    if re.made_by(m, statistic_forms.PATTERNS) and statistic_forms.vetoed(sentence, m):
        return True
    start = text.rfind("\n", 0, m.start()) + 1
    end = text.find("\n", m.end())
    end = end if end >= 0 else len(text)
    line = text[start:end]
    if BOOTSTRAP.fullmatch(m.group(0)):
        near = text[max(start, m.start() - INTERVAL_NEAR) : min(end, m.end() + INTERVAL_NEAR)]
        if not INTERVAL.search(near):
            return True
    cells = line.strip().strip("|").split("|")
    if line.lstrip().startswith("|") and KL_WORD.search(line) and not KL_WORD.search(cells[0]):
        # a header row with a KL column: the statistic must stand in that cell ("| Mean KLD |"), not in another
        # column's (a row labelled KL holds KL values in every cell)
        at = m.start() - start
        left, right = line.rfind("|", 0, at), line.find("|", at)
        cell = line[left + 1 : right if right >= 0 else len(line)]
        if not KL_WORD.search(cell) and not statistic_forms.after_kl_column(line, left):
            return True
    if SPEED.search(sentence) and not KL_WORD.search(sentence):
        return True
    other = OTHER_STATISTIC.search(m.group(0)) or (OTHER_MEDIAN.search(m.group(0)) and OWN_VALUE.match(text, m.end()))
    if other and not KL_WORD.search(cjk_sentence(text, sentence, m)):
        # "Bits/w is the average over the whole model", "median reconstruction error", "95% CI" of MMLU; the sentence
        # cut at a CJK full stop too ("...KLD 为 0.0）。基准测了...吞吐量和 p95 TTFT": zh_digest_ornith h7/c)
        return True
    return bool(NOT_RUN.search(text[max(0, m.start() - 80, start) : m.start()])) and not KL_WORD.search(sentence)


SAMPLE_STATS = frozenset({"se", "ci_low", "ci_high"})  # what a "±" or "[a, b]" makes a number: not its statistic


def from_numbers(numbers: Iterable[NumberReading], line: int, column: int, quote: str) -> DisclosureReading | None:
    """The claim's D9 reading from the statistics its numbers carry (header, line or row labels), or None."""
    stats = sorted({n.statistic for n in numbers if n.statistic and n.statistic not in SAMPLE_STATS and n.statistic != "labelled"})
    if not stats:
        return None
    return DisclosureReading(9, "stated", {"statistic": "+".join(stats)}, (Evidence(quote, line, column),))


def row_note(cells: list[tuple[int, str]], statistic: object) -> str | None:
    """The statistic a transposed KLD row names in any of its cells other than the label ("bits/token moyen")."""
    for _, text in cells[1:]:
        if any(ch.isdigit() for ch in text):  # a value cell ("0.0752 (+5.5 %, CI ...)"): its "%" is no percentile
            continue
        s = statistic(text[:320])  # type: ignore[operator]
        if s is not None:
            return str(s)
    return None
