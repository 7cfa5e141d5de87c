"""Which numbers of a KLD claim are KL-divergence numbers (R1-R6 of tests/data/real_cards/labels.yaml): a
claim's line, cell or sentence also carries sizes, speeds, perplexities and percentages of other metrics.

A number is not a KLD number when
- a size or speed unit follows it ("15.3 GB", "5.93 BPW", "30.5 t/s"), or another metric's name ("0.81 accuracy",
  "6.21 PPL"), or a parameter count (a model's version:
  "Qwen 3.6 27B"), a section number ("Section 3.2", "3.2 节"), a default ("default 0.5"), or past any float32 value ("-3.39e38": an overflow);
- it is a second figure in a table cell, given in percent ("0.0042 (97.1 %)": the cell's KLD is 0.0042);
- the words right before it (since the previous number, cell border or sentence start) name another metric
  and no KL term ("PPL 7.6585", "top-1 97.1");
- it stands after a bare "±" ("above the ±0.0005 band"), or after the "±" of a number that is itself not
  a KLD number ("PPL 2.73 ± 0.015").

For tables a web mirror flattened to space-separated lines (R2), :func:`flat_column` keeps only the value
under the KLD header word: counted from the right, as the header's words and the rows' values align there
(the row label and multi-word cells are on the left).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.claims_patterns import KLD_TERM
from kldcard.lint.read import other_metrics
from kldcard.lint.read.numbers import KLD_VALUE, TIME_UNITS
from kldcard.lint.read.terms import KL_MENTION, KL_WORD, POSITION_WORDS, alternation

I = re.IGNORECASE

# (and a unit of time: "0.18 seconds per pass", "2.5 ms", "3.1 min": a timing printed beside the KL lines)
UNIT_AFTER = re.compile(r"[\s*_`]*(?:GB|GiB|MB|MiB|TB|TiB|kB|KB|KiB|bytes|bpw|t/s|tok/s|tokens?/s|" + TIME_UNITS + r")\b"
                        r"|\s*[x×][\s*_`]+(?:slower|faster|quicker|speed-?up)\b", I)  # "1.8× slower": a speed factor
# a count noun after a number makes it a count, written with a point or comma grouping ("17.877 posiciones puntuadas",
# "2,632 positions"): the nouns of scored text in the card languages (read.terms.POSITION_WORDS and English's)
COUNT_AFTER = re.compile(r"[ \t\u00a0\u202f]*(?:positions?|tokens|documents?|samples|prompts|sequences|chunks|"
                         + alternation(POSITION_WORDS) + r"|documentos|Dokumente|tokens?)(?![^\W\d_])", I)
PERCENT_AFTER = re.compile(r"\s*%")
# a parameter count right after a decimal makes the decimal a model's version ("Qwen 3.6 27B", "Llama 3.1 8B-Instruct",
# "Qwen 3.6 35B-A3B"): the grammar of model names, written with a space where "Qwen3.6-27B" glues them
VERSION_BEFORE_SIZE = re.compile(r"[ \t]+\d+(?:\.\d+)?[BM](?![A-Za-z0-9])")
# a heading's section number ("### 5.2 `kld_vs_f16` — KL divergence vs f16") or a licence's or release's version
# ("(Apache 2.0, 한국어 특화)", "CC-BY-4.0", "version 1.5", "v 2.1"): the grammar of numbered headings and licence names
SECTION_OR_VERSION_BEFORE = re.compile(
    r"(?:^|\n)[ \t]*#{1,6}[ \t]*$|§[ \t]*$|第[ \t]*$|\b(?:section|sec\.|chapter|appendix)[ \t]*$"
    r"|\b(?:Apache|GPL|LGPL|AGPL|MPL|EPL|CC[- ]BY(?:[- ](?:SA|NC|ND))*|OpenRAIL|licen[cs]e|version|ver\.?|v)[ \t-]*v?$",
    I,
)
# a default right before a number makes it a setting ("--kl-threshold, default 0.5", "须 < KMAX（默认 0.055）",
# "default: 2.0"): the word of a setting's value in the card languages; and code's defaults, plain grammar of the
# languages the cards paste: a lookup's fallback argument ('thresholds.get("max_kl_divergence", 0.1)') and a
# conditional expression's fallback ("kl[:d].mean() if d > 0 else 0.0")
DEFAULT_BEFORE = re.compile(r"(?:\bdefaults?(?:\s+to)?|默认值?|\bpor\s+defecto|\bpar\s+défaut)[\s:=：`(（]*$"
                            r"|\.get\(\s*[\"'][\w.-]+[\"']\s*,\s*$|\belse\s+$", I)
# a numbered heading's number: the heading marker right before it (its part of SECTION_OR_VERSION_BEFORE), read
# before a KL term after the number could keep it ("### 4.3 KL 对齐机制"): the grammar of numbered headings
HEADING_BEFORE = re.compile(r"(?:^|\n)[ \t]*#{1,6}[ \t]*$")
# a correlation coefficient of KL with something else is no KL value, though its label names KL ("ρ(‖d‖, KL) = +0,96",
# "corr(KL, Δacc): 0.93", "Spearman ρ=0.87"): the notation and the words of a correlation right before the number
CORRELATION_BEFORE = re.compile(
    r"(?:\b(?:corr|cor|r)|ρ)\s*\([^()]*\)\s*[=≈:]\s*[+−-]?\s*$"
    r"|(?:\b(?:correlation|Korrelation|corrélation|correlación|correlação|Spearman|Pearson)|ρ|相关系数)[\s:=≈]*[+−-]?\s*$",
    I,
)
# a number the text only supposes ("KL divergence: Would be ~0.000001", "the KLD would have been 0.02"): the
# conditional mood right before it, plain English grammar of a hypothetical value
HYPOTHETICAL_BEFORE = re.compile(r"\bwould\s+(?:be|have\s+been)\s*[~≈<>]?\s*$", I)
# the Chinese section marker after its number ("任务书 3.2 节", "论文第 3.3 节"), as "第" or "Section" before it
SECTION_AFTER = re.compile(r"[ \t]*[节章]")
# a number past any float32 KL is an overflow or a sentinel ("overflows to -3.39e38", FLT_MAX), not a measurement
OVERFLOW = 1e30
KL_AFTER = re.compile(r"[\s*_`]*(?:nats?[\s*_`]*)?(?:(?:mean|median|average|avg)\s+)?" + KL_WORD, I)
# another metric named right after a number makes it that metric's value ("KLD vs BF16 on HellaSwag 0.81 accuracy",
# "6.21 PPL", "72.4 F1", "0,81 de precisión", "0.81准确率"): the scores cards print beside a KLD (read.other_metrics, in every card language), read
# after KL_AFTER so that "0.0038 mean KLD" keeps its number. A name with a value of its own after it labels that
# value, not the number before it ("KLD 0.0123 PPL 6.2104", "kld 0.0123 acc 0.812", "KL 散度 0.012 困惑度 6.21": a
# row of metric, value pairs)
METRIC_AFTER = re.compile(
    r"[ \t\u00a0*_`]*(?:(?:de|of)\s+)?(?:" + other_metrics.spellings(other_metrics.SCORES, other_metrics.SCORES_ELSEWHERE) + ")"
    r"(?![\w-])(?![ \t\u00a0*_`]*[:=：]?[ \t\u00a0*_`]*[~≈]?[-+−]?\.?\d)",
    I,
)
# a metric other than KL named right before a number (read.other_metrics: a score, a top-k's agreement, a size or a
# speed); a KL term between them keeps the number
OTHER_LABEL = re.compile(r"\b(?:" + other_metrics.spellings(other_metrics.SCORES, only=other_metrics.NAMED_BEFORE) + "|"
                         + other_metrics.spellings(other_metrics.TOKEN_AGREEMENT, other_metrics.RUN_FIGURES) + r")\b[^\d|]*$", I)
KL_IN_LABEL = re.compile(KL_MENTION, I)  # a label that names KL keeps its number
PLUS_MINUS = re.compile(r"±\s*$")
NUMBER_BEFORE_PM = re.compile(r"(-?\d[\d.,]*(?:e-?\d+)?)\s*%?\s*±\s*$", I)
# (a digit glued after a letter is part of a name, "fp32-acc", "Q4_K", not a number that ends the label)
LABEL_SPLIT = re.compile(r"(?<![A-Za-z0-9_])\d[\d.,]*(?:e-?\d+)?|\|")


def is_kld(segment: str, pos: int, length: int, *, cell: bool = False) -> bool:
    """Whether the number at ``pos`` (``length`` characters) of ``segment`` (its sentence, line or cell) is a
    KLD number; ``cell``: the segment is one table cell."""
    after = segment[pos + length : pos + length + 12]
    if UNIT_AFTER.match(after) or VERSION_BEFORE_SIZE.match(after) or COUNT_AFTER.match(segment, pos + length):
        return False
    if SECTION_AFTER.match(after) or _magnitude(segment[pos : pos + length]) >= OVERFLOW:
        return False
    before = segment[max(0, pos - 120) : pos]
    # "### 4.3 KL 对齐机制": a heading's number, even with the KL term after it; a number under 1 is a value the
    # heading or a code comment gives ("## 0.0038 mean KLD at Q4_K_M", "# 0.012 KLD vs f16"), never a section's
    if HEADING_BEFORE.search(before) and not segment[pos : pos + length].lstrip("+-−").startswith(("0", ".")):
        return False
    if KL_AFTER.match(after + segment[pos + length + 12 : pos + length + 24]):  # "0.0038 mean KLD": the KL term follows
        return True
    if SECTION_OR_VERSION_BEFORE.search(before) or DEFAULT_BEFORE.search(before):  # "### 5.2 `kld_vs_f16`", "Apache 2.0", "version 1.5"
        return False
    if METRIC_AFTER.match(segment, pos + length):  # "0.81 accuracy", "6.21 PPL": the other metric's value
        return False
    signed = before.rstrip().endswith(("+", "-", "−"))  # "+5.5 %": a relative change of the KLD, kept (R4)
    if cell and PERCENT_AFTER.match(after) and not signed and re.search(r"\d", before):
        return False
    label = LABEL_SPLIT.split(before)[-1]
    if OTHER_LABEL.search(label) and not KL_IN_LABEL.search(label):
        return False
    # a correlation whose label names KL ("ρ(‖d‖, KL) = +0,96": KL_IN_LABEL would keep it); a correlation not naming
    # KL stays a candidate, as before, so that the numbers around it keep their links (claim_terms.chain)
    if (CORRELATION_BEFORE.search(label) and KL_IN_LABEL.search(label)) or HYPOTHETICAL_BEFORE.search(before):  # "Would be ~0.000001"
        return False
    if PLUS_MINUS.search(before):
        m = NUMBER_BEFORE_PM.search(before)
        if m is None:  # a bare "± x": a band, not a measured value
            return False
        return is_kld(segment, pos - len(before) + m.start(1), len(m.group(1)), cell=cell)
    return True


def _magnitude(text: str) -> float:
    try:
        return abs(float(text.strip("*_`~≈+").replace("−", "-").replace(",", "")))
    except ValueError:
        return 0.0


VALUE = re.compile(r"(?<![\w.])[-+]?\d[\d.,]*(?:e-?\d+)?(?:\s*±\s*\d[\d.,]*(?:e-?\d+)?)?%?", I)
PARENS = re.compile(r"\([^()]*\)")
FIXED_GAP = re.compile(r"\S {2,}\S")
# a "header" that is a wrapped sentence, not a table's (its rows are prose too): read every number
PROSE = re.compile(r"[.,;:!?]\s|[，。、；：]|\*\*")


def prose_like(header: str) -> bool:
    return bool(PROSE.search(header))


def flat_column(header: str, term: tuple[int, int], row: str) -> tuple[int, int] | None:
    """The (start, end) span of ``row``'s value under the KLD header word at ``term`` (start, end) of
    ``header``; None when it cannot be told. A fixed-width table (a value under the word) is read by position,
    a flattened one by counting columns from the right (a parenthesised qualifier is not a column)."""
    values = list(VALUE.finditer(row))
    if len(FIXED_GAP.findall(header)) >= 2:  # a fixed-width table: the value under the word
        under = [v for v in values if v.start() < term[1] + 2 and v.end() > term[0] - 2]
        if len(under) == 1:
            return under[0].start(), under[0].end()
    right = len(PARENS.sub(" ", header[term[1] :]).split())  # header words after the KLD term
    if len(values) <= right:
        return None
    v = values[len(values) - 1 - right]
    return v.start(), v.end()


def flat_spans(header: str, row: str) -> list[tuple[int, int]] | None:
    """The spans of ``row``'s values under every KLD word of a flattened ``header``, left to right; None when
    the header is a wrapped sentence or a value cannot be told."""
    if prose_like(header):
        return None
    spans = {flat_column(header, (m.start(), m.end()), row) for m in KLD_TERM.finditer(header)}
    if not spans or None in spans:
        return None
    return sorted(s for s in spans if s is not None)


# A fixed-width table whose other columns are not decimals ("dtype  mean KLD  top-1" / "q8  0.00037  49/49"):
# columns two or more spaces apart, a row as many as the header, and a decimal under the KLD column.
COLUMN_GAP = re.compile(r"\s{2,}")


def aligned_row(header: str, row: str) -> bool:
    """Whether ``row`` is a row of the fixed-width table headed by ``header`` with a decimal under its KL column."""
    heads, cells = COLUMN_GAP.split(header.strip()), COLUMN_GAP.split(row.strip())
    if len(heads) < 3 or len(cells) != len(heads):
        return False
    cols = [k for k, h in enumerate(heads) if KLD_TERM.search(h)]
    return bool(cols) and all(KLD_VALUE.fullmatch(cells[k]) for k in cols)


# A KL column given in thousandths ("mean KL (millinats/tok)", "KLD ×10⁻³", "KL (mnats)") holds whole numbers.
MILLI_HEADER = re.compile(r"\bmilli-?nats?\b|\bmnats?\b|[×x]\s*10(?:⁻³|\^-3|-3)|\be-3\b", I)
WHOLE = re.compile(r"(?<![\w.,\-/])\d{1,6}(?![\w.,%/])")


def milli_integers(header_cell: str, cell: str) -> list[re.Match[str]]:
    """The whole numbers of ``cell`` when its column's header gives KL in thousandths; none otherwise."""
    if not MILLI_HEADER.search(header_cell):
        return []
    found = list(WHOLE.finditer(cell))
    return found if len(found) == 1 and not cell.replace(found[0].group(0), "").strip(" *_`") else []
