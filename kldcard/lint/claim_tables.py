"""Tables as KLD claims: pipe tables with a KLD column, transposed tables with a KLD row (R1), tables a
web mirror flattened to space-separated lines (R2), and table cells that give a KLD number in words."""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from bisect import bisect_right

from kldcard.lint.claim_attach import KldTerms, number_attached, number_labelled
from kldcard.lint.claim_types import Claim, KldNumber, numbers_in
from kldcard.lint.claims_patterns import (
    GENERIC_CONTEXT,
    HEADING_OR_ITEM,
    KLD_TERM,
    NUMBER,
    OTHER_METRIC,
    RULE_LINE,
    STAT_LABEL,
    THRESHOLD_CELL,
    TRAINING_CONTEXT,
)
from kldcard.lint.markdown import Doc, Table
from kldcard.lint.read import caption_tables, claim_numbers, claim_terms, section_rows, stated_bounds, table_columns, table_context, training_output
from kldcard.lint.read.mixed_rows import mixed_row


def flat_tables(doc: Doc, consumed: set[int]) -> list[Claim]:
    """Tables a web mirror flattened to space-separated lines: a header line naming KLD with no
    number in it, or a header under a KL caption (read.caption_tables, as for a pipe table), then rows of
    several numbers each ("Quant Size PPL KLD" / "Q4_K_M 432.80 ... 0.0374"). The claim is the header line; its
    rows join ``consumed`` so they are not read as prose again."""
    claims: list[Claim] = []
    lines = doc.lines
    for i in sorted(table_columns.header_lines(doc)):  # the header or its caption names KLD
        if i >= len(lines) - 1:
            break
        line = lines[i]
        # pasted fixed-width result tables are often fenced: code lines count here
        if i in consumed or "|" in line or ": " in line or "```" in line or len(line) > 400 or len(line.split()) < 4 or HEADING_OR_ITEM.match(line):
            continue
        term = KLD_TERM.search(line)
        if term is None and not (caption_tables.kl_captioned(doc, i) or table_context.kl_heading(doc, i)):
            continue
        if NUMBER.search(PARENTHESES.sub("", line) if term is None else line) or TRAINING_CONTEXT.search(line) or line.rstrip().endswith((".", ":")):
            continue  # a captioned header may give each column's size in parentheses ("Q4_K_M (4.98 GB)")
        rows = []
        j = i + 1
        if j < len(lines) and RULE_LINE.match(lines[j]):  # a fixed-width table's "-----" under its header
            j += 1
        while (j < len(lines) and j not in consumed and doc.code[j] == doc.code[i] and "|" not in lines[j]
               and (len(NUMBER.findall(lines[j])) >= 2 or (term and claim_numbers.aligned_row(line, lines[j])) or mixed_row(lines[j]))):
            rows.append(j)
            j += 1
        if not rows or claim_terms.wrapped_sentence(line, lines[rows[0]]):  # prose wrapped after its KL term
            continue
        if term is None:  # every decimal of the rows is under the caption's KL term, unless the header names
            start = len(line) - len(line.lstrip())  # another quantity: then which column is KL cannot be told
            cells = PARENTHESES.sub("", line)  # a column's size in parentheses names no column of its own
            other = table_context.OTHER_QUANTITY.search(cells) or caption_tables.NOT_VALUE.search(cells)
            numbers = [] if other else [n for r in rows for n in numbers_in(lines[r], doc.starts[r])
                                        if claim_numbers.is_kld(lines[r], n.offset - doc.starts[r], len(n.text))]
            claims.append(Claim("table", doc.starts[i] + start, line.strip(), False, numbers))
        else:
            window = line[max(0, term.start() - 8) : term.end() + 8]
            numbers = _flat_numbers(doc, line, rows)
            claims.append(Claim("table", doc.starts[i] + term.start(), line.strip(), bool(STAT_LABEL.search(window)), numbers))
        consumed.update([i, *rows])
    return claims


PARENTHESES = re.compile(r"\([^()]*\)")


def _flat_numbers(doc: Doc, header: str, rows: list[int]) -> list[KldNumber]:
    """The numbers under the KLD words of a flattened table's header (every number of the rows when a row's
    KLD value cannot be told: claim_numbers.flat_spans)."""
    spans = [claim_numbers.flat_spans(header, doc.lines[r]) for r in rows]
    under = [n for r, ss in zip(rows, spans) for s, e in ss or () for n in numbers_in(doc.lines[r][s:e], doc.starts[r] + s)]
    if any(s is None for s in spans) or not under:  # nothing under the KL words: a row shorter than its header
        return [n for r in rows for n in numbers_in(doc.lines[r], doc.starts[r])
                if claim_numbers.is_kld(doc.lines[r], n.offset - doc.starts[r], len(n.text))]  # not "30.4 GB"
    return under


def _kld_cell_numbers(text: str, off: int) -> list[KldNumber]:
    """The KLD numbers of a table cell under a KLD header (not a percent or size beside the value)."""
    cell = _cell_text(text)
    return [n for n in numbers_in(cell, off) if claim_numbers.is_kld(cell, n.offset - off, len(n.text), cell=True)
            and not stated_bounds.not_measured(cell, n.offset - off)]  # "受け入れ幅は現行比 +0.0005": a width, not a value


def table_claims(doc: Doc, t: Table) -> list[Claim]:
    if table_context.foreign_metrics(t) or training_output.training_table(t):  # a saliency or audio evaluation's KLD
        return []  # column (read.table_context); a training run's KL beside its reward (read.training_output)
    header = t.cells[t.header]
    cols = [k for k in table_columns.named([text for _, text in header]) if not stated_bounds.fitted(header[k][1])]  # not "KL(attn||uniform)"
    claims: list[Claim] = []
    if cols:
        cells = [t.cells[r][k] for r in t.rows for k in cols if k < len(t.cells[r])]
        numbers = [n for off, text in cells for n in _kld_cell_numbers(text, off)]
        if not numbers:  # a column in thousandths holds whole numbers ("mean KL (millinats/tok)")
            numbers = [KldNumber(m.group(0), float(m.group(0)), off + m.start()) for r in t.rows for k in cols if k < len(t.cells[r])
                       for off, text in [t.cells[r][k]] for m in claim_numbers.milli_integers(header[k][1], text)]
        if not numbers and _relative_column([text for _, text in cells]):  # "| KL Δ |" / "| -9.6% |": a relative change (R4)
            labelled = all(_header_labelled(header[k][1]) for k in cols)
            return [Claim("table", header[cols[0]][0], doc.lines[t.header].strip(), labelled, [])]
        valued = [text for _, text in cells if NUMBER.search(text)]
        if numbers and valued and _threshold_scale(valued):
            return claims
        if numbers and _planned([text for _, text in cells], numbers):
            return claims
        if numbers:
            labelled = all(_header_labelled(header[k][1]) for k in cols) or _caption_labels(doc, t.header)
            claims.append(Claim("table", header[cols[0]][0], doc.lines[t.header].strip(), labelled, numbers))
        if numbers or cols != [0]:
            return claims
        # only the label column names KL ("| Gemma-12B, KLD vs BF16 | Q8 | Q6 |"): a transposed table (R1), below
    # Transposed tables: the KLD statistic is a row ("| Mean KLD | 0.021 | 0.004 |"), its label in the
    # first cell or, in a table with a category column, the second ("| **基礎性能** | KL Divergence |").
    # Consecutive KLD rows (a tabulated llama-perplexity block) are one claim at the first.
    previous = -2
    named = doc.lines_matching(KLD_TERM)  # a KLD row names KLD; the others are never split into cells
    labels = [*range(2), *table_context.metric_column(t)]  # a "Metric" column names each row's statistic too
    for r in t.rows:
        if r not in named:
            continue
        cells = t.cells[r]
        k = next((k for k in labels if k < len(cells) and _kld_label(cells[k][1])), None)
        if k is None:
            continue
        numbers = [n for off, text in cells[k + 1 :] for n in _kld_cell_numbers(text, off)]
        if not numbers and k == 0 and (stats := section_rows.statistic_rows(t, r)):  # R1: "KLD", then "Mean | ..."
            numbers = [n for row in stats for off, text in t.cells[row][1:] for n in _kld_cell_numbers(text, off)]
            if numbers:
                claims.append(Claim("table", t.cells[stats[0]][0][0], doc.lines[stats[0]].strip(), True, numbers))
                previous = stats[-1]
            continue
        if not numbers:
            continue
        labelled = bool(STAT_LABEL.search(cells[k][1]))
        if previous == r - 1 and claims:
            claims[-1].numbers.extend(numbers)
            claims[-1].labelled &= labelled
        else:
            claims.append(Claim("table", cells[k][0], doc.lines[r].strip(), labelled, numbers))
        previous = r
    if claims and cols:  # R1: the header row names KLD first, so it is the claim's line
        claims[0].offset, claims[0].text = header[0][0], doc.lines[t.header].strip()
    # rows with KL numbers in a cell's words, beside the KLD rows or alone ("| date | ... KLDは0.12529 |")
    used = {doc.line_index(n.offset) for c in claims for n in c.numbers}
    claims.extend(c for c in _cell_sentences(doc, t) if doc.line_index(c.offset) not in used)
    if not claims and not cols:  # the KL term is in the table's heading or the text above it (read.table_context)
        claims.extend(_context_claim(doc, t))
    if not claims and cols == [0]:  # the corner cell names the KL of the whole body, no row does
        claims.extend(_corner_claim(doc, t))
    return claims


SPREAD_HEADER = re.compile(r"±|\b(?:CI|SE|SEM|std|interval|stderr)\b", re.IGNORECASE)  # a column of a statistic's spread


def _corner_claim(doc: Doc, t: Table) -> list[Claim]:
    """A table whose corner cell names the KL term and a statistic of its body ("| `rollout_corr/kl`, 8-step block means |
    steps 1–8 | 9–16 |", "| Gemma-12B, KLD vs BF16 | Q8 | Q6 |"): the other header cells are categories (steps, quants),
    none another metric or a statistic, so every value cell is a KLD number; the claim is the header (R1). Columns of
    statistics ("| Paired difference of mean KLD | Mean | 95% interval |") are another layout: not read here."""
    header = t.cells[t.header]
    if len(header) < 2 or any(OTHER_METRIC.search(text) or KLD_TERM.search(text) or STAT_LABEL.search(text)
                              or SPREAD_HEADER.search(text) for _, text in header[1:]):
        return []
    cells = [cell for r in t.rows for cell in t.cells[r][1:]]
    return _body_claim(doc, t, cells, _header_labelled(header[0][1]))


def _context_claim(doc: Doc, t: Table) -> list[Claim]:
    cols, stats = table_columns.from_context(doc, t.header, [text for _, text in t.cells[t.header]])
    cells = [t.cells[r][k] for r in t.rows for k in cols if k < len(t.cells[r])]
    return _body_claim(doc, t, cells, bool(stats))


def _body_claim(doc: Doc, t: Table, cells: list[tuple[int, str]], labelled: bool) -> list[Claim]:
    """The header's claim over ``cells``, the value cells its layout makes KLD: none when no cell holds a number, the
    numbers read as a threshold scale, or no cell holds a KLD number."""
    valued = [text for _, text in cells if NUMBER.search(text)]
    if not valued or _threshold_scale(valued):
        return []
    numbers = [n for off, text in cells for n in _kld_cell_numbers(text, off)]
    if not numbers:
        return []
    return [Claim("table", t.cells[t.header][0][0], doc.lines[t.header].strip(), labelled, numbers)]


def _cell_sentences(doc: Doc, t: Table) -> list[Claim]:
    """Cells of a table without a KLD column or row that carry a KLD number in words
    ("| Recommended. KLD 0.035. |"): one claim per row, read like a sentence."""
    claims: list[Claim] = []
    named = doc.lines_matching(KLD_TERM)
    for r in t.rows:
        if r not in named:
            continue
        for off, text in t.cells[r]:
            terms = list(KLD_TERM.finditer(text))
            if not terms or TRAINING_CONTEXT.search(text) or GENERIC_CONTEXT.search(text):
                continue
            near = KldTerms(terms)
            numbers = [n for n in numbers_in(text, off) if number_attached(text, n.offset - off, len(n.text), near)
                       and claim_numbers.is_kld(text, n.offset - off, len(n.text)) and not _in_range(text, n.offset - off, len(n.text))
                       and not stated_bounds.not_measured(text, n.offset - off)]
            if numbers:
                at = {n.offset - off for n in numbers}
                labelled = all(number_labelled(text, n.offset - off, len(n.text), near, at) for n in numbers)
                claims.append(Claim("sentence", numbers[0].offset, text, labelled, numbers))
                break
    return claims


# a hyphenated range in a cell's words ("High sensitivity (KL 0.004-0.008)") is the band a row stands for, not a
# measurement (read.numbers reads "0.002-0.004" as a number in prose; an approximate "~1.5–2.9" stays a value)
RANGE_AFTER, RANGE_BEFORE = re.compile(r"-\d*[.,]\d"), re.compile(r"\d-$")


def _in_range(text: str, pos: int, length: int) -> bool:
    return bool(RANGE_AFTER.match(text, pos + length) or RANGE_BEFORE.search(text[max(0, pos - 3) : pos]))


# an empty result cell: a dash, "TODO", "TBD", "n/a", "?" or nothing
EMPTY_CELL = re.compile(r"^[\s*_`]*(?:[-—–?]|TODO|TBD|TBA|n/?a|pending)?[\s*_`]*$", re.IGNORECASE)


def _planned(column: list[str], numbers: list[KldNumber]) -> bool:
    """Whether a KLD column is a results table still to be filled: its only values are zeros (the reference's own row,
    "| FP32 baseline | 32 | — | 0.0 |") and its other cells are empty or placeholders. A column of zeros alone (an
    exact-match result) is a measurement."""
    return all(n.value == 0 for n in numbers) and any(EMPTY_CELL.match(text) for text in column)


# A KL column of percentages is a relative change of the KL ("| Mean KLD Δ | -24.55% |", "| KL | +8.0% |", "| KL vs bf16 | 29% |"),
# R4: the columns of five authors in the labelled texts, every one a claim. Empty cells may stand among them.
PERCENT_CELL = re.compile(r"^[\s*_`]*[+−\-–]?\d+(?:[.,]\d+)?\s*%[\s*_`]*$")


def _relative_column(column: list[str]) -> bool:
    valued = [text for text in column if not EMPTY_CELL.match(text)]
    return bool(valued) and all(PERCENT_CELL.match(text) for text in valued)


APPROXIMATE = re.compile(r"^\W{0,3}[~≈]")


def _threshold_scale(valued: list[str]) -> bool:
    """Whether every valued cell is a bound or a range (an interpretation scale, R4). Cells that are only
    approximate ("~0.025") are rounded measurements: a column of them alone is not a scale."""
    return all(THRESHOLD_CELL.search(text) for text in valued) and not all(APPROXIMATE.match(text) for text in valued)


def _kld_label(cell: str) -> bool:
    # a parenthesis qualifies the label ("KL vs FP8 serve (top-20, wikitext / code)": the truncation and the texts) or
    # names its term ("Divergencia (KL)"): a metric inside one is no second metric, one outside is ("Top-1 (vs KL)")
    bare = PARENTHESES.sub(" ", cell)
    return bool(KLD_TERM.search(cell)) and not TRAINING_CONTEXT.search(cell) and not OTHER_METRIC.search(bare)


HTML_TAG = re.compile(r"<[^<>]{0,200}>")


def _cell_text(text: str) -> str:
    """A cell without its HTML (``**0.034**<br><small>…</small>``), same length so offsets hold."""
    return HTML_TAG.sub(lambda m: " " * len(m.group(0)), text)


def _header_labelled(cell: str) -> bool:
    return bool(STAT_LABEL.search(cell) or re.search(r"\d{1,2}(?:\.\d+)?\s*%", cell))


def _caption_labels(doc: Doc, header: int) -> bool:
    """Whether a sentence of the paragraph just above a table says which statistic its "KLD" column holds."""
    i = header - 1
    while i >= 0 and not doc.lines[i].strip():
        i -= 1
    if i < 0 or header - i > 2 or doc.code[i]:
        return False
    top = i
    while top > 0 and i - top < 3 and doc.lines[top - 1].strip() and not doc.code[top - 1]:
        top -= 1
    begin, end = doc.starts[top], doc.starts[i] + len(doc.lines[i])
    # sentences are sorted and disjoint: those overlapping [begin, end) start from the one holding begin
    k = max(0, bisect_right(doc.sentence_starts, begin) - 1)
    sentences = doc.sentences
    for j in range(k, len(sentences)):  # by index: islice would step over the first k, quadratic over tables
        s, e = sentences[j]
        if s >= end:
            break
        if e > begin:
            caption = NUMBER.sub(" ", doc.text[s:e])
            if KLD_TERM.search(caption) and STAT_LABEL.search(caption):
                return True
    return False
