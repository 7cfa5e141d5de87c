"""Tables whose KL term stands outside the table (issue 28, claim detection): the header row names only the
rows' categories or statistics, and the text says the values are KLD.

- The table's own heading names a KL term and no other quantity ("### KLD" over "| Quant | Chat | Code |";
  "## Quality (KL to BF16, lower = better)" over "| | held-out | neutral |"): every value cell is a KLD number.
- The header names only statistics ("| ctx | preset | median | mean | max | p99 |") and the text above the table,
  up to the previous table or code block and not past a heading that names another quantity or training, names
  a KL term: the statistic columns hold KLD numbers.

The claim is the header row (as for a value-less KLD caption). And a table with a column headed "Metric" (or
"Measure", "Statistic", "Quantity") names each row's quantity there, in any column ("| Source | Setting | Metric |
f16 | q8 |" over "| PR | model | PPL / mean KLD | ... |"): such a row is a KLD row (R1) like one labelled first. Not a threshold scale (every value a bound or a
range, R4), not a table under a heading that also names another metric ("## KLD and PPL"). Samples in
tests/test_lint_claim_detection.py."""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.claims_patterns import GENERIC_CONTEXT, KLD_TERM, TRAINING_CONTEXT
from kldcard.lint.markdown import HEADING, Doc, Table
from kldcard.lint.read.section_rows import STAT_ROW

# how far above a table its heading or its defining text may stand (lines)
LOOK_BACK = 25
# a quantity other than KLD named in a heading or a header cell: its table is that quantity's
OTHER_QUANTITY = re.compile(
    r"\b(?:PPL|perplexity|top[- ]?\d+|top[- ]?k|same[- ]top|agreement|accuracy|acc|MMLU|score|speed|throughput|latency|"
    r"t/s|tok/s|VRAM|memory|size|GB|GiB|loss|reward|refusals?)\b|Δp",
    re.IGNORECASE,
)


def _kld_only(text: str) -> bool:
    return bool(KLD_TERM.search(text)) and not (
        OTHER_QUANTITY.search(text) or TRAINING_CONTEXT.search(text) or GENERIC_CONTEXT.search(text)
    )


def _above(doc: Doc, header: int) -> list[int]:
    """The lines above a table's header line, nearest first, up to LOOK_BACK and not past another table or a code
    block."""
    out = []
    for i in range(header - 1, max(-1, header - 1 - LOOK_BACK), -1):
        if doc.code[i] or doc.lines[i].lstrip().startswith("|"):
            break
        out.append(i)
    return out


def kl_heading(doc: Doc, header: int) -> bool:
    """Whether the nearest heading above a table's header line (any layout) names KLD and nothing else."""
    heading = next((doc.lines[i] for i in _above(doc, header) if HEADING.match(doc.lines[i])), "")
    return _kld_only(heading)


def heading_columns(doc: Doc, header: int, cells: list[str]) -> list[int]:
    """The value columns (all but the label column) of a table (header line ``header``, header ``cells``, any
    layout) whose nearest heading names KLD and nothing else; none when a header cell names another quantity."""
    if any(OTHER_QUANTITY.search(text) or KLD_TERM.search(text) for text in cells):
        return []
    for i in _above(doc, header):
        if HEADING.match(doc.lines[i]):
            return list(range(1, len(cells))) if _kld_only(doc.lines[i]) else []
    return []


def statistic_columns(doc: Doc, header: int, cells: list[str]) -> list[int]:
    """The statistic-named columns of a header that names at least two statistics and no quantity, when the
    text above the table names a KL term (not as a training term)."""
    cols = [k for k, text in enumerate(cells) if STAT_ROW.match(text)]
    if len(cols) < 2 or any(OTHER_QUANTITY.search(text) or KLD_TERM.search(text) for text in cells):
        return []
    above = [doc.lines[i] for i in _above(doc, header)]
    heading = next((line for line in above if HEADING.match(line)), "")
    if OTHER_QUANTITY.search(heading) or TRAINING_CONTEXT.search(heading):
        return []  # the table sits in a section about something else ("## Speed")
    if any(KLD_TERM.search(line) and not TRAINING_CONTEXT.search(line) for line in above):
        return cols
    return []


METRIC_HEADER = re.compile(r"^[\s*_`]*(?:metrics?|measures?|statistics?|quantity|quantities)[\s*_`]*$", re.IGNORECASE)


def metric_column(t: Table) -> list[int]:
    """The index of the column headed "Metric" (or "Measure", "Statistic", "Quantity"), if any."""
    return [k for k, (_, text) in enumerate(t.cells[t.header]) if METRIC_HEADER.match(text)][:1]


# Metrics of fields where "KLD" compares something other than a model's next-token distributions: saliency maps
# (CC, NSS, AUC-Judd, SIM, ...) and generated audio (Frechet Audio Distance, ...). A table that names one as a whole
# header cell or row label is that field's evaluation, not a KLD claim about a model port or quant.
FOREIGN_METRIC = re.compile(
    r"^[\s*_`]*(?:NSS|CC|SIM|EMD|IG|s-?AUC|shuffled AUC|AUC[- ](?:Judd|Borji)|Fr[eé]chet Audio Distance|FAD|Inception Score|"
    r"CLAP(?: score)?)(?:\s*\([^()]*\))?[\s*_`↑↓]*$",
    re.IGNORECASE,
)


def foreign_metrics(t: Table) -> bool:
    """Whether a header cell or a row label of ``t`` is a saliency or audio metric (FOREIGN_METRIC)."""
    cells = [text for _, text in t.cells[t.header]] + [t.cells[r][0][1] for r in t.rows if t.cells[r]]
    return any(FOREIGN_METRIC.match(text) for text in cells)
