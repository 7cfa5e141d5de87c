"""Find KLD claims in a card body: tables, pasted tool output, and sentences that give a KLD number.

A *claim* is a place where the card reports a measured KL divergence (nats, in whatever direction the
card chose). Mentions without a number ("What is KLD?", "lower KLD is better"), rules of thumb, code
that computes KL, and KL terms of a training objective (a KL penalty, a target KL) are not claims.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from dataclasses import dataclass, field

from kldcard.lint.markdown import LIST_ITEM, Doc, Table
from kldcard.lint.read import claim_numbers, claim_terms, section_rows
from kldcard.lint.read.numbers import decimals_half_ulp, parse_number
from kldcard.lint.read.tools import LINES as TOOL_LINES
from kldcard.lint.scan import search, spans_with
from kldcard.lint.claims_patterns import (  # noqa: F401  (KLD_TERM, TRAINING_CONTEXT are read from here by prose and evidence)
    AFTER_GAP,
    BOUND_BEFORE,
    CODE_RESULT,
    GENERIC_CONTEXT,
    HEADING_OR_ITEM,
    KLD_TERM,
    LIST_OR_QUOTE,
    LLAMA_CHUNK,
    LLAMA_CHUNK_HEADER,
    LLAMA_HEADER,
    LLAMA_STAT,
    MODEL_DIFF_PER_TOKEN,
    MODEL_DIFF_STAT,
    NUMBER,
    OLD_STAT,
    OTHER_METRIC,
    PARENTHETICAL,
    RELATIVE,
    RULE_LINE,
    SIBLING_STAT,
    STAT_LABEL,
    THRESHOLD_CELL,
    TRAINING_CONTEXT,
    UNCERTAINTY,
)

# ASCII semantics: case-insensitive matching with Unicode folding is ~3x slower and every keyword is
# ASCII; the few non-ASCII symbols (μ, Δp, β) stand outside \b groups because \b is ASCII-only here.
I = re.IGNORECASE | re.ASCII


@dataclass(frozen=True)
class KldNumber:
    """A number the card presents as a KL divergence value (nats unless the card says otherwise)."""

    text: str
    value: float
    offset: int  # body offset

    @property
    def decimals_half_ulp(self) -> float:
        """Half a unit in the last printed digit: the rounding the printed text allows."""
        return decimals_half_ulp(self.text)


@dataclass
class Claim:
    """One KLD claim: a table, a pasted tool-output block, or a line of prose."""

    kind: str  # "table" | "tool-output" | "sentence"
    offset: int  # body offset the claim is located at
    text: str  # the header row, first statistic line, or the sentence
    labelled: bool  # every number says which statistic it is (mean, median, p99, ...)
    numbers: list[KldNumber] = field(default_factory=list)
    # pasted output: "llama-perplexity", "llama-perplexity-chunks", "model_diff", "result-lines" or the
    # name of another tool whose grammar read the line (kldcard.lint.read.tools)
    tool: str | None = None


def find_claims(doc: Doc) -> list[Claim]:
    """All KLD claims in ``doc``, ordered by position."""
    if search(KLD_TERM, doc.scanned) is None:
        return []
    tool_claims, tool_lines = _tool_output(doc)
    flat_claims = _flat_tables(doc, tool_lines)
    claims = tool_claims + flat_claims + [c for t in doc.tables for c in _table(doc, t)] + _sentences(doc, tool_lines)
    claims.sort(key=lambda c: c.offset)
    return claims


def _numbers(text: str, base: int) -> list[KldNumber]:
    """The numbers of ``text``; not a bound ("KL < 0.01: excellent", "median KL < ~0.005": a threshold, R4)."""
    return [KldNumber(m.group(0), parse_number(m.group(0))[0], base + m.start()) for m in NUMBER.finditer(text)
            if not BOUND_BEFORE.search(text, max(0, m.start() - 8), m.start())]


def _tool_output(doc: Doc) -> tuple[list[Claim], set[int]]:
    """Pasted llama-perplexity / model_diff statistics (fenced or not), and the lines they cover."""
    claims: list[Claim] = []
    lines: set[int] = set()
    current: Claim | None = None
    stat = {i: LLAMA_STAT.match(doc.lines[i]) for i in doc.lines_with(LLAMA_STAT)}
    # A line holding none of the patterns' anchors matches none of them: it only ends a block.
    old, diffs, chunks, results, headers = (
        doc.lines_with(p) for p in (OLD_STAT, MODEL_DIFF_STAT, LLAMA_CHUNK, CODE_RESULT, LLAMA_HEADER)
    )
    diffs = diffs | doc.lines_with(MODEL_DIFF_PER_TOKEN)
    chunk_heads = doc.lines_with(LLAMA_CHUNK_HEADER)
    printed: dict[int, tuple[str, re.Match[str]]] = {}  # the other tools' printed lines (read.tools)
    for name, pattern in TOOL_LINES:
        for i in doc.lines_with(pattern):
            if i not in printed and (m := pattern.match(doc.lines[i])):
                printed[i] = (name, m)
    visit = sorted(set(stat).union(old, diffs, chunks, results, headers, chunk_heads, printed))
    old_block = False  # inside the first-format block, right under its header
    previous = header = -2
    for i in visit:
        # the current per-chunk rows come each under its own header, a blank line apart: one block
        chunking = current is not None and (current.tool == "llama-perplexity-chunks" or current.tool in _GRAMMAR_TOOLS)
        # (blank lines, and an elision "..." where a paste cut rows, do not end a run of rows)
        if i != previous + 1 and not (chunking and all(doc.lines[j].strip() in ("", "...", "…") for j in range(previous + 1, i))):
            current, old_block = None, False
        previous = i
        line = doc.lines[i]
        if i in chunk_heads and LLAMA_CHUNK_HEADER.match(line):
            lines.add(i)
            header = i
            continue
        old_block = old_block and i in old and bool(OLD_STAT.match(line))
        llama = stat.get(i) or (old_block and OLD_STAT.match(line))
        diff = (MODEL_DIFF_STAT.match(line) or MODEL_DIFF_PER_TOKEN.match(line)) if i in diffs else None
        chunk = LLAMA_CHUNK.match(line) if i in chunks else None
        tool_line = printed.get(i) if not (llama or diff or chunk) else None
        result = doc.code[i] and not (llama or diff or chunk or tool_line) and i in results and CODE_RESULT.match(line)
        if llama and LIST_OR_QUOTE.match(line) and not stat.get(i - 1) and not stat.get(i + 1):
            llama = None  # a lone "- Mean KLD: 0.0188" item is prose; pasted output comes as a block
        if chunk:  # running (cumulative) KLD of the chunks so far: not labelled as a mean
            if current is None or current.tool != "llama-perplexity-chunks":
                at = header if header == i - 1 else i  # the rows' header, right above them, is where they start
                current = Claim("tool-output", doc.starts[at], doc.lines[at].strip(), labelled=False, tool="llama-perplexity-chunks")
                claims.append(current)
            current.numbers.extend(_numbers(chunk.group("kld"), doc.starts[i] + chunk.start("kld")))
            lines.add(i)
        elif llama or diff:
            tool = "llama-perplexity" if llama else "model_diff"
            if current is None or current.tool != tool:
                current = Claim("tool-output", doc.starts[i], line.strip(), labelled=bool(llama), tool=tool)
                claims.append(current)
            colon = line.index(":", diff.end() - len(diff.group(0).split(":")[-1]) - 1) if diff else line.index(":")
            current.numbers.extend(_numbers(line[colon + 1 :], doc.starts[i] + colon + 1))
            lines.add(i)
        elif tool_line:  # a line another tool prints, its number in the grammar's "kld" group
            name, m = tool_line
            if current is None or current.tool != name:
                current = Claim("tool-output", doc.starts[i], line.strip(), labelled=False, tool=name)
                claims.append(current)
            current.numbers.extend(_numbers(m.group("kld"), doc.starts[i] + m.start("kld")))
            lines.add(i)
        elif result:
            if current is None or current.tool != "result-lines":
                current = Claim("tool-output", doc.starts[i], line.strip(), labelled=False, tool="result-lines")
                claims.append(current)
            current.numbers.extend(_numbers(result.group(1), doc.starts[i] + result.start(1)))
            lines.add(i)
        elif i in headers and LLAMA_HEADER.match(line):
            lines.add(i)
            current = None
            old_block = True
        elif not (chunking and line.strip() in ("...", "…")):  # any other line (blank, header, Δp block) ends the block
            current = None
    return claims, lines


_GRAMMAR_TOOLS = frozenset(name for name, _ in TOOL_LINES)


def _flat_tables(doc: Doc, consumed: set[int]) -> list[Claim]:
    """Tables a web mirror flattened to space-separated lines: a header line naming KLD with no
    number in it, then rows of several numbers each ("Quant Size PPL KLD" / "Q4_K_M 432.80 ... 0.0374").
    The claim is the header line; its rows join ``consumed`` so they are not read as prose again."""
    claims: list[Claim] = []
    lines = doc.lines
    for i in sorted(doc.lines_with(KLD_TERM)):  # the header names KLD
        if i >= len(lines) - 1:
            break
        line = lines[i]
        # pasted fixed-width result tables are often fenced: code lines count here
        if i in consumed or "|" in line or ": " in line or "```" in line or len(line) > 400 or len(line.split()) < 4 or HEADING_OR_ITEM.match(line):
            continue
        term = KLD_TERM.search(line)
        if term is None or NUMBER.search(line) or TRAINING_CONTEXT.search(line) or line.rstrip().endswith((".", ":")):
            continue
        rows = []
        j = i + 1
        if j < len(lines) and RULE_LINE.match(lines[j]):  # a fixed-width table's "-----" under its header
            j += 1
        while (j < len(lines) and j not in consumed and doc.code[j] == doc.code[i] and "|" not in lines[j]
               and (len(NUMBER.findall(lines[j])) >= 2 or claim_numbers.aligned_row(line, lines[j]))):
            rows.append(j)
            j += 1
        if not rows or claim_terms.wrapped_sentence(line, lines[rows[0]]):  # prose wrapped after its KL term
            continue
        window = line[max(0, term.start() - 8) : term.end() + 8]
        numbers = _flat_numbers(doc, line, rows)
        claims.append(Claim("table", doc.starts[i] + term.start(), line.strip(), bool(STAT_LABEL.search(window)), numbers))
        consumed.update([i, *rows])
    return claims


def _flat_numbers(doc: Doc, header: str, rows: list[int]) -> list[KldNumber]:
    """The numbers under the KLD words of a flattened table's header (every number of the rows when a row's
    KLD value cannot be told: claim_numbers.flat_spans)."""
    spans = [claim_numbers.flat_spans(header, doc.lines[r]) for r in rows]
    if any(s is None for s in spans):
        return [n for r in rows for n in _numbers(doc.lines[r], doc.starts[r])]
    return [n for r, ss in zip(rows, spans) for s, e in ss or () for n in _numbers(doc.lines[r][s:e], doc.starts[r] + s)]


def _kld_cell_numbers(text: str, off: int) -> list[KldNumber]:
    """The KLD numbers of a table cell under a KLD header (not a percent or size beside the value)."""
    cell = _cell_text(text)
    return [n for n in _numbers(cell, off) if claim_numbers.is_kld(cell, n.offset - off, len(n.text), cell=True)]


def _table(doc: Doc, t: Table) -> list[Claim]:
    header = t.cells[t.header]
    cols = [k for k, (_, text) in enumerate(header) if KLD_TERM.search(text) and not TRAINING_CONTEXT.search(text)]
    claims: list[Claim] = []
    if cols:
        cells = [t.cells[r][k] for r in t.rows for k in cols if k < len(t.cells[r])]
        numbers = [n for off, text in cells for n in _kld_cell_numbers(text, off)]
        if not numbers:  # a column in thousandths holds whole numbers ("mean KL (millinats/tok)")
            numbers = [KldNumber(m.group(0), float(m.group(0)), off + m.start()) for r in t.rows for k in cols if k < len(t.cells[r])
                       for off, text in [t.cells[r][k]] for m in claim_numbers.milli_integers(header[k][1], text)]
        valued = [text for _, text in cells if NUMBER.search(text)]
        if numbers and valued and all(THRESHOLD_CELL.search(text) for text in valued):
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
    named = doc.lines_with(KLD_TERM)  # a KLD row names KLD; the others are never split into cells
    for r in t.rows:
        if r not in named:
            continue
        cells = t.cells[r]
        k = next((k for k in range(min(2, len(cells))) if _kld_label(cells[k][1])), None)
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
    return claims


def _cell_sentences(doc: Doc, t: Table) -> list[Claim]:
    """Cells of a table without a KLD column or row that carry a KLD number in words
    ("| Recommended. KLD 0.035. |"): one claim per row, read like a sentence."""
    claims: list[Claim] = []
    named = doc.lines_with(KLD_TERM)
    for r in t.rows:
        if r not in named:
            continue
        for off, text in t.cells[r]:
            terms = list(KLD_TERM.finditer(text))
            if not terms or TRAINING_CONTEXT.search(text) or GENERIC_CONTEXT.search(text):
                continue
            near = _Terms(terms)
            numbers = [n for n in _numbers(text, off) if _attached(text, n.offset - off, len(n.text), near)
                       and claim_numbers.is_kld(text, n.offset - off, len(n.text))]
            if numbers:
                labelled = all(_labelled(text, n.offset - off, len(n.text), near) for n in numbers)
                claims.append(Claim("sentence", numbers[0].offset, text, labelled, numbers))
                break
    return claims


def _kld_label(cell: str) -> bool:
    return bool(KLD_TERM.search(cell)) and not TRAINING_CONTEXT.search(cell) and not OTHER_METRIC.search(cell)


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


def _sentences(doc: Doc, tool_lines: set[int]) -> list[Claim]:
    claims: list[Claim] = []
    seen_lines: set[int] = set()
    text = doc.text
    for k in spans_with(KLD_TERM, doc.scanned, doc.sentences, doc.sentence_starts):
        start, end = doc.sentences[k]
        sentence = text[start:end]
        if ("." not in sentence and "," not in sentence) or NUMBER.search(sentence) is None:  # no number, no claim
            continue
        terms = list(KLD_TERM.finditer(sentence))
        # (a measured value "against a 0.03 threshold" is still a measurement: read.claim_terms.GATE)
        if not terms or TRAINING_CONTEXT.search(claim_terms.without_gates(sentence)) or GENERIC_CONTEXT.search(sentence):
            continue
        near = _Terms(terms)
        candidates = [n for n in _numbers(sentence, start) if doc.line_index(n.offset) not in tool_lines
                      and claim_numbers.is_kld(sentence, n.offset - start, len(n.text))
                      and not claim_terms.is_gate(sentence, n.offset - start, len(n.text))]
        numbers = [n for n in candidates if _attached(sentence, n.offset - start, len(n.text), near)]
        numbers = claim_terms.chain(sentence, start, candidates, numbers, OTHER_METRIC) if numbers else numbers
        if not numbers:
            continue
        labelled = all(_labelled(sentence, n.offset - start, len(n.text), near) for n in numbers)
        for n in numbers:
            line = doc.line_index(n.offset)
            if line in seen_lines:  # one claim per line; later numbers on it join that claim
                claims[-1].numbers.append(n)
                continue
            seen_lines.add(line)
            claims.append(Claim("sentence", n.offset, sentence.strip(), labelled, [n]))
    claims.extend(_relative(doc, tool_lines, {doc.line_index(c.offset) for c in claims}))
    return claims + _sibling_items(doc, claims, tool_lines)




def _relative(doc: Doc, tool_lines: set[int], taken: set[int]) -> list[Claim]:
    out = []
    for k in spans_with(RELATIVE, doc.scanned, doc.sentences, doc.sentence_starts):
        start, end = doc.sentences[k]
        sentence = doc.text[start:end]
        if "%" not in sentence and "x" not in sentence.lower() and "×" not in sentence:
            continue
        for m in RELATIVE.finditer(sentence):
            for at in [m.start(), *claim_terms.further(sentence, m.end())]:  # "... by 11.9% ... and by 7.7%"
                line = doc.line_index(start + at)
                if line in tool_lines or line in taken or TRAINING_CONTEXT.search(sentence):
                    continue
                taken.add(line)
                out.append(Claim("sentence", start + at, sentence.strip(), bool(STAT_LABEL.search(m.group(0)))))
    return out


def _sibling_items(doc: Doc, claims: list[Claim], tool_lines: set[int]) -> list[Claim]:
    """List items that continue a KLD list item with another statistic ("- Median: 0.0071")."""
    out: list[Claim] = []
    claimed = {doc.line_index(c.offset) for c in claims}
    for c in claims:
        i = doc.line_index(c.offset)
        if not LIST_ITEM.match(doc.lines[i]):
            continue
        j = i + 1
        while j < len(doc.lines) and LIST_ITEM.match(doc.lines[j]) and j not in claimed and j not in tool_lines:
            m = SIBLING_STAT.match(doc.lines[j])
            if m is None or OTHER_METRIC.search(doc.lines[j]):
                break
            out.append(Claim("sentence", doc.starts[j] + m.start("num"), doc.lines[j].strip(), True,
                             _numbers(m.group("num"), doc.starts[j] + m.start("num"))))  # fmt: skip
            j += 1
    return out


# A "sentence" can be a whole pasted page without a full stop; every look around a number is bounded
# so that the work per number is constant, not the sentence's length (linear lint, issue 16).
MAX_GAP = 400  # characters: 45 of text plus a few parentheticals of at most 80


class _Terms:
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


def _labelled(sentence: str, pos: int, length: int, terms: _Terms) -> bool:
    """Whether a statistic label stands near the number and its KLD term ("mean KLD of 0.02 nats")."""
    before, after = terms.before(pos), terms.after(pos + length)
    start = max(0, (before.start() if before else pos) - 20, pos - MAX_GAP)
    end = min((after.end() if after and not before else pos + length) + 25, pos + length + MAX_GAP)
    return bool(STAT_LABEL.search(sentence[start:end]))


def _attached(sentence: str, pos: int, length: int, terms: _Terms) -> bool:
    """Whether the number at ``pos`` belongs to a KLD term of the sentence.

    It does when the nearest KLD term before it is at most 45 characters away with no other metric
    and no other number in between (uncertainty words such as "±" or "95% CI" pass through), or when
    a KLD term follows within 15 characters ("0.0009 mean KLD").
    """
    before = terms.before(pos)
    if before is not None and pos - before.end() <= MAX_GAP:
        gap = sentence[before.end() : pos]
        # A parenthetical does not detach the number: "KL-divergence (mean over 512 samples): 0.0064".
        if len(PARENTHETICAL.sub("", gap)) <= 45 and not OTHER_METRIC.search(gap):
            nums = list(NUMBER.finditer(gap))
            if not nums or UNCERTAINTY.search(gap):
                return True
    after = terms.after(pos + length)
    if after is not None and after.start() - pos - length <= MAX_GAP:
        gap = sentence[pos + length : after.start()]
        if AFTER_GAP.match(gap):
            return True
    return False
