"""D9 statistics as cards write them beyond evidence_patterns.D9 and :mod:`kldcard.lint.read.aggregation`:

- a statistic in an identifier, as tools print and scripts read it: "kld_mean", "mean_kl_per_token",
  "max_kl_div", "kl_p99" (:data:`IDENTIFIER`);
- PyTorch's reduction by name: "batchmean", ``reduction="mean"``, and the expectation in words ("expected value
  over positions", "in expectation") (:data:`REDUCTION`);
- a statistic or a percentile before the KL term, up to two modifiers apart: "max KL divergence", "worst-case KLD",
  "mean weight-only KL", "最大KLD" / "KLD 最大",
  "99.9% KL divergence", "99th percentile KLD", "`99.9%` KLD" (:data:`BEFORE_KL`); not a signed change ("+19% KLD");
- an uncertainty by its letters: "σd ≈ 0.006", a "σd" column, in a sentence with a KL term (:data:`SIGMA`;
  a count of sigmas, "7.8σ", is a difference's significance); "± are printed stderr" (:data:`STDERR`, a "±"
  said to be a standard error; "stderr" alone is a stream, "±0.036 stderr" a value).

- the statistic's name right after a value, in a sentence with a KL term: "~0.0031 mean / 0.0050 max" (:data:`AFTER_VALUE`);
- the statistic in parentheses closing a KL label: "KL vs teacher (mean)", "KL (mean)" (:data:`PAREN_AFTER_KL`);
- a percentile header cell right after a KL column ("| KLD | p99 | 99.9% |", :data:`PERCENTILE_CELL`; the bare
  statistics that follow a KL column are its own, :func:`after_kl_column`).

The statistic's name is read by values.statistic (the reading's ``statistic``).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.terms import KL_MENTION

I = re.IGNORECASE

STAT = r"(?:mean|avg|average|median|max|min|p\d{2}(?:\.\d+)?)"
# (not an identifier that names a bound: "MAX_KL_THRESHOLD", "max_kl_div_limit" is a constant a check is given, as
# read.metric_keys leaves "kld_threshold" out)
_BOUND = r"(?!\w*?(?:thresh|limit|toler|target|budget|gate))"
IDENTIFIER = re.compile(
    r"(?<![A-Za-z])" + STAT + r"_(?:kl|kld)" + _BOUND + r"(?:_\w+)?(?![A-Za-z])|(?<![A-Za-z])(?:kl|kld)(?:_div)?_" + STAT + _BOUND + r"(?![A-Za-z])", I
)
REDUCTION = re.compile(r"\bbatchmean\b|\breduction\s*=\s*['\"](?:mean|batchmean)['\"]|\bexpected value\b|\bin expectation\b", I)
BEFORE_KL = re.compile(
    # up to two modifiers between ("mean weight-only KL", "Max per-position KLD", "Mean full-vocabulary KL")
    r"(?<![^\W\d_])(?:mean|average|avg|median|max|maximum|min|minimum|worst[- ]case|peak)\s+(?:[A-Za-z][\w-]*\s+){0,2}?(?:KLD|KL\b|KL[- ]div)|"
    # the statistic in Chinese / Japanese, before or after the term, with no word boundary (the scripts write none):
    # "最大KLD", "KLD 最大", "中位 KLD" (中位 = 中位数, the median), "平均KL", "KLD 均值" (general grammar of the languages)
    r"(?:最大|最小|中位(?:数|值)?|中央値|平均)\s*(?:KLD|KL)(?![A-Za-z])|(?<![A-Za-z])(?:KLD|KL)\s*(?:最大|最小|均值|中位数|中央値)|"
    # (the percentile may carry its markdown emphasis or code span: "`99.9%` KLD", "**99%** KLD", general markdown)
    r"(?<![+\-−±\d.,\w])[`*]{0,2}(?:90|95|99|99\.9+)(?:\s*%|th\s+percentile|\s*-?th)[`*]{0,2}[ \t]+(?:KLD|KL\b|KL[- ]div)",
    I,
)
# the statistic in parentheses closing a KL label, a few words after the term: "KL vs teacher (mean)", "KL (mean)",
# "KL Divergence (mean)" (a row label of a pasted table; vqlab, mamba130m, dreamfast: three authors)
PAREN_AFTER_KL = re.compile(
    r"(?<![A-Za-z_])(?:KLD?|KL[- ]div\w*)(?![A-Za-z_])[^()\n|.;:=]{0,30}?\(\s*(?:mean|median|average|avg|max|maximum|min|p\d{2}(?:\.\d+)?)\s*\)",
    I,
)
# the statistic's name right after a value: "~0.0031 mean / 0.0050 max over 126 steps" (general grammar of a figure
# and its label; read only in a sentence with a KL term, :func:`vetoed`)
# (not a hyphenated compound, a unit: "≈ 6.6 avg-bits")
AFTER_VALUE = re.compile(r"(?<![\w.])[~≈]?\d+(?:\.\d+)?(?:e[-+]?\d+)?[ \t]+(?:mean|median|max|maximum|avg|average)\b(?!-(?!kl)\w)(?![ \t]+(?:of|is|was)\b)", I)
NEAR = 200  # characters before a value in which its KL term may stand
# a spread given as a value or a column ("σd ≈ 0.006", "| σd |"); a count of sigmas alone ("7.8σ paired") is the
# significance of a difference, not an uncertainty model of the numbers (real_cards/dev2 vramfit_readme_acceptance_test)
SIGMA = re.compile(r"σ\w{0,2}\s*[≈=~:]\s*\d|\|\s*σ\w{0,2}\s*(?=\|)", I)
# the "±" said to be a standard error ("± are printed stderr", "± = std. error"); not "±0.036 stderr" (a value)
STDERR = re.compile(
    r"±\s*(?:(?:are|is|values?|means?|denotes?|shows?|gives?)\b|[=:])[^\n±\d]{0,30}\b(?:stderr|std\.?\s*err(?:or)?|standard\s+errors?)\b", I
)
# a header cell that is a percentile and nothing else ("| KLD | p99 | 99.9% |"): the KL column's, when it follows it
# (or a statistic's name alone: "| mismatch_kl | max |", as "| mean KLD | median |" is written: primerl, yoga_arc,
# malaiwah, zh_ninfer, ja_phaseshift)
PERCENTILE_CELL = re.compile(
    r"(?<=\|)[ \t]*\**(?:p\d{2}(?:\.\d+)?|\d{2}(?:\.\d+)?\s*%|\d{2}(?:st|nd|rd|th)\s+pct\w*|mean|median|max(?:imum)?|min(?:imum)?|avg|average)\**[ \t]*(?=\|)", I
)
PATTERNS = [IDENTIFIER, REDUCTION, BEFORE_KL, PAREN_AFTER_KL, AFTER_VALUE, SIGMA, STDERR, PERCENTILE_CELL]
BARE_STAT = re.compile(
    r"[ \t]*\**(?:p\d{1,2}(?:\.\d+)?|\d{1,2}(?:\.\d+)?\s*%|\d{2}(?:st|nd|rd|th)\s+pct\w*|mean|median|max|min|avg|average|std|σ)\**[ \t]*", I
)

KL = re.compile(r"(?<![A-Za-z_])(?:KLD|KL)(?![A-Za-z_])|KL[- ]?div|divergen|散度", I)
# a KL column's header cell, a metric key's snake case included ("mismatch_kl", "kl_mean")
KL_CELL = re.compile(KL_MENTION, I)


SEPARATOR_NEXT = re.compile(r"[^\n]*\n[ \t]*\|?[ \t]*:?-{3,}")


def vetoed(sentence: str, m: re.Match[str]) -> bool:
    """A sigma in a sentence without a KL term is another metric's (a PPL's, a benchmark's); a percentile cell
    counts only in a table's header row, right after its KL column (a value cell "96.3%" is an agreement)."""
    if m.re is PERCENTILE_CELL.compiled:
        text = m.string
        start = text.rfind("\n", 0, m.start()) + 1
        end = text.find("\n", m.end())
        line = text[start : end if end >= 0 else len(text)]
        header = SEPARATOR_NEXT.match(text, start) is not None
        return not (header and after_kl_column(line, m.start() - start - 1))
    if m.re is AFTER_VALUE.compiled:  # the KL term in its sentence or in the lines just before (a wrapped, quoted diff line)
        return not KL_CELL.search(sentence) and not KL_CELL.search(m.string, max(0, m.start() - NEAR), m.start())
    return m.re is SIGMA.compiled and not KL.search(sentence)


def after_kl_column(line: str, left: int) -> bool:
    """Whether the header cell that starts after ``line[left]`` (a "|") is a bare statistic that follows a KL
    column through bare statistics only ("| Quant | KLD | median | p99 |"): that column's statistics. A statistic
    before the KL column is another metric's ("| task | median | KLD |": a duration's median)."""
    cells = line[: left + 1].split("|")[:-1]  # the cells left of this one
    right = line.find("|", left + 1)
    if not BARE_STAT.fullmatch(line[left + 1 : right if right >= 0 else len(line)]):
        return False
    for cell in reversed(cells):
        if KL_CELL.search(cell):
            return True
        if not BARE_STAT.fullmatch(cell):
            return False
    return False
