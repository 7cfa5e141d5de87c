"""Read a free-form card the way a reviewer does: for every KLD claim, one reading per disclosure.

:func:`read_card` (or :func:`read_claims` on a body already scanned) returns a
:class:`~kldcard.lint.reading.ClaimReading` per claim: for each of the nine disclosures its status
(stated / incomplete / inferred / missing), the normalised value read (:mod:`kldcard.lint.read.values`)
and the evidence (line, column and quoted span, or the front-matter key).

Which evidence belongs to which claim: every statement of a disclosure in the body is a candidate
(:func:`kldcard.lint.evidence.collect`); the one nearest the claim in the claim's own section (up to
the next heading) wins, else the nearest anywhere (a card-wide statement applies to every claim).
Keys the winner does not give are filled from the other statements (its section first, then the
sections without claims, then the rest of the card, then the front matter keys the Hub defines), so
"-c 512" and "--chunks 100" on two lines make one complete context, and a summary sentence at the top
is read with the protocol stated under a later heading. Nothing found: the documented default of a tool the card names or prints
(``inferred``), else ``missing``. Linear in the card: candidates per disclosure are capped, each claim
looks its candidates up by bisection, and readings are shared between claims with the same winner.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from bisect import bisect_left, bisect_right
from typing import Any

from kldcard.card.document import Card
from kldcard.lint.claims import KLD_TERM, Claim, KldNumber, find_claims
from kldcard.lint.evidence import collect
from kldcard.lint.markdown import HEADING, Doc, Table, scan
from kldcard.lint.read import aggregation, front_matter, slash_pairs, tool_engine, values
from kldcard.lint.read.complete import is_complete, needs
from kldcard.lint.read.tools.named import NAMED, REPORTS
from kldcard.lint.scan import search
from kldcard.lint.reading import ClaimReading, DisclosureReading, Evidence, NumberReading
from kldcard.lint.tool_defaults import Tool, default_values, defaults, fixed_by_tool, recognise

__all__ = ["read_card", "read_claims"]

QUOTE_LIMIT = 80  # characters of a quoted span
AROUND = 200  # characters of the span's sentence read either side for its value
MERGE_LIMIT = 6  # further statements read to fill a value's missing keys
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]")
# the unit after a number; a thousandth of one ("35 mbits", "12 millinats") is read in the unit itself (0.035 bits)
# (a lower-case "m" only: "Mbits" are megabits, no divergence unit)
UNIT = re.compile(r"[\s*_`]*(?:±\s*[\d.,]+\s*)?((?:(?-i:m)|milli-?)?(?:nats?|bits?)\b|%)", re.IGNORECASE)


def clean(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` on one line, without control or bidi characters, at most ``limit`` characters."""
    # clipped first: a claim's "sentence" can be a whole pasted page, and this runs once per claim
    flat = " ".join(CONTROL.sub(" ", text[: 4 * limit + 16]).split())
    return flat if len(flat) <= limit else flat[: limit - 1] + "…"


def read_card(card: Card, doc: Doc | None = None) -> list[ClaimReading]:
    """The reading of every KLD claim of ``card``'s body (``doc``: the body already scanned).

    Meant for cards without a ``kld_evaluation`` block (a block is the card's own reading, checked
    by KLD1xx); on a card with one it reads the prose all the same. [] when the card makes no claim.
    """
    doc = doc or scan(card.body, card.body_line)
    return read_claims(doc, find_claims(doc), card.metadata)


class _Reader:
    def __init__(self, doc: Doc, metadata: dict[str, Any] | None, found: dict[int, list[re.Match[str]]] | None) -> None:
        self.doc = doc
        self.found = found if found is not None else collect(doc)
        self.starts = {n: [m.start() for m in ms] for n, ms in self.found.items()}
        self.meta = front_matter.read(metadata)
        report = next((name for name, p in REPORTS.items() if search(p, doc.scanned) is not None), None)
        # a tool's own printed report outranks a mere mention of another tool (whose defaults would
        # then be inferred for numbers it did not produce)
        self.tool: Tool | None = None if report else recognise(doc.scanned)
        self.named = report or (self.tool.name if self.tool is not None else named_tool(doc))
        heads = [doc.starts[i] for i, line in enumerate(doc.lines) if "#" in line and not doc.code[i] and HEADING.match(line)]
        self.heads = heads
        self._values: dict[tuple[int, int], dict[str, Any]] = {}
        self.claimed: set[int] = set()  # start offsets of the sections that hold a claim
        self.tables = {t.header: t for t in doc.tables}
        self.row_tables = {r: t for t in doc.tables for r in t.rows}
        self._wide: dict[int, list[int]] = {}
        self._memo: dict[tuple[int, int, int], DisclosureReading] = {}

    # ---- where ------------------------------------------------------------------------------
    def section(self, offset: int) -> tuple[int, int]:
        """(start, end) body offsets of the section holding ``offset``."""
        k = bisect_right(self.heads, offset)
        start = self.heads[k - 1] if k else 0
        end = self.heads[k] if k < len(self.heads) else len(self.doc.text) + 1
        return start, end

    def evidence(self, m: re.Match[str]) -> Evidence:
        """The match's first line, quoted, at the line and column where its text starts."""
        text = m.group(0)
        lead = len(text) - len(text.lstrip())
        line, col = self.doc.position(m.start() + lead)
        return Evidence(clean(text.strip().splitlines()[0] if text.strip() else text), line, col)

    def value(self, n: int, k: int) -> dict[str, Any]:
        key = (n, k)
        if key not in self._values:
            m = self.found[n][k]
            s, e = self.doc.sentence_at(m.start())
            around = self.doc.text[max(s, m.start() - AROUND) : min(max(e, m.end()), m.end() + AROUND)]
            # a reference pattern's "ref" group is the reference itself ("KL divergence (3.0bpw, original)")
            span = (m.group("ref") or m.group(0)) if "ref" in m.re.groupindex else m.group(0)
            self._values[key] = values.value(n, span, around)
        return self._values[key]

    @staticmethod
    def _nearest(starts: list[int], lo: int, hi: int, offset: int) -> int | None:
        """Index of the start in ``starts[lo:hi]`` nearest ``offset``."""
        if lo >= hi:
            return None
        k = bisect_left(starts, offset, lo, hi)
        best = [j for j in (k - 1, k) if lo <= j < hi]
        return min(best, key=lambda j: abs(starts[j] - offset))

    # ---- what -------------------------------------------------------------------------------
    def reading(self, n: int, offset: int, own: DisclosureReading | None = None) -> DisclosureReading:
        if own is not None:
            return own
        starts = self.starts[n]
        s0, s1 = self.section(offset)
        lo, hi = bisect_left(starts, s0), bisect_left(starts, s1)
        primary = self._nearest(starts, lo, hi, offset)
        if primary is None:  # a card-wide statement (in a section without claims), else the nearest
            wide = self._card_wide(n)
            primary = min(wide, key=lambda j: abs(starts[j] - offset)) if wide else self._nearest(starts, 0, len(starts), offset)
        key = (n, s0, -1 if primary is None else primary)
        if key not in self._memo:
            self._memo[key] = self._build(n, primary, lo, hi)
        d = self._memo[key]
        if self.tool is not None and d.status in ("incomplete", "inferred"):
            d5 = self.reading(5, offset) if n == 6 else None  # the claim's own length and chunks, not the tool's default
            return self._completed(d, d5.said if d5 else {})
        return d

    def _completed(self, d: DisclosureReading, context: dict[str, Any]) -> DisclosureReading:
        """``d`` completed by what the tool the card prints or names fixes whatever its options
        (tool_defaults.fixed_by_tool), from the claim's own reading: "8 chunks" under llama-perplexity has the
        second half of each scored, counted over the claim's chunks and their length, rather than a warning asking
        for it or a default length the card contradicts. The tool's part is its own evidence and ``inferred_keys``,
        so the scaffold does not write it as the card's word. A reading with the card's own evidence keeps its status
        by completeness (a chunk count is D6's evidence, labels/CONVENTIONS), one without is ``inferred``; KLD313
        lists the tool's part either way."""
        n = d.disclosure
        said = d.said
        if d.status == "inferred" and not context.get("n_ctx"):
            return d  # nothing of the claim's own to count from: the tool's default stands as it is
        fixed, words = fixed_by_tool(self.tool, n, said, context)  # type: ignore[arg-type]
        if not fixed:
            return d
        line, col = self.doc.position(self.tool.offset)  # type: ignore[union-attr]
        value = {**said, **fixed}
        own = tuple(e for e in d.evidence if e.tool is None)
        status = "inferred" if not own else "stated" if is_complete(n, value) else "incomplete"
        evidence = (*own, Evidence(clean(words, 200), line, col, tool=self.tool.name))  # type: ignore[union-attr]
        return DisclosureReading(n, status, value, evidence, () if status == "inferred" else needs(n, value), tuple(fixed))  # type: ignore[arg-type]

    def _card_wide(self, n: int) -> list[int]:
        """Indices of D``n``'s statements that lie in sections without a claim (they apply to all)."""
        if n not in self._wide:
            self._wide[n] = [j for j, x in enumerate(self.starts[n]) if self.section(x)[0] not in self.claimed]
        return self._wide[n]

    def _build(self, n: int, primary: int | None, lo: int, hi: int) -> DisclosureReading:
        value: dict[str, Any] = {}
        evidence: list[Evidence] = []
        if primary is not None:
            # the claim's own section first, then the statements that apply card-wide (sections without
            # claims), then, for keys still unread, another claim's section: a summary at the top and
            # the protocol under a later heading describe one measurement far more often than two
            near = range(max(lo, primary - MERGE_LIMIT), min(hi, primary + MERGE_LIMIT + 1))
            order = [primary] + [j for j in near if j != primary]
            order += [j for j in self._card_wide(n)[: 4 * MERGE_LIMIT] if j not in order][:MERGE_LIMIT]
            order += [j for j in range(min(len(self.starts[n]), 4 * MERGE_LIMIT)) if j not in order][:MERGE_LIMIT]
            for j in order:
                v = self.value(n, j)
                new = {k: x for k, x in v.items() if k not in value}
                if j == primary or new:
                    value.update(new)
                    evidence.append(self.evidence(self.found[n][j]))
        for meta in self.meta.get(n, []):
            new = {k: x for k, x in meta.value.items() if k not in value}
            if new:
                value.update(new)
                evidence.append(Evidence(clean(meta.text), key=meta.key))
        if evidence:
            status = "stated" if is_complete(n, value) else "incomplete"
            return DisclosureReading(n, status, value, tuple(evidence), needs(n, value))  # type: ignore[arg-type]
        if n == 2 and self.tool is not None and (engine := tool_engine.engine(self.tool, self.doc.scanned)) is not None:
            line, col = self.doc.position(self.tool.offset)  # the engine named by its tool's output (R8')
            value = {"engine": engine}
            return DisclosureReading(2, "incomplete", value, (Evidence(self.tool.name, line, col, tool=self.tool.name),), needs(2, value))
        if self.tool is not None and n in defaults(self.tool):
            line, col = self.doc.position(self.tool.offset)
            words = defaults(self.tool)[n]
            value = dict(default_values(self.tool).get(n, {}))
            return DisclosureReading(n, "inferred", value, (Evidence(clean(words, 200), line, col, tool=self.tool.name),),
                                     (), tuple(value))  # fmt: skip
        return DisclosureReading(n, "missing", {}, (), needs(n, {}))

    def claim(self, c: Claim) -> ClaimReading:
        line, col = self.doc.position(c.offset)
        own9 = None
        if c.labelled:  # the claim's own label says which statistic its numbers are
            i = self.doc.line_index(c.offset)
            at = c.offset - self.doc.starts[i]
            quoted = self.doc.lines[i][at : at + QUOTE_LIMIT * 4]
            # the label stands before a sentence's number ("Mean KLD 0.0213"), in a table's header
            near = self.doc.lines[i][max(0, at - QUOTE_LIMIT) : at + QUOTE_LIMIT]
            stat = values.statistic(c.text[: QUOTE_LIMIT * 4] if c.kind == "table" else near) or "labelled"
            own9 = DisclosureReading(9, "stated", {"statistic": stat}, (Evidence(clean(quoted), line, col),))
        readings = {n: self.reading(n, c.offset, own9 if n == 9 else None) for n in range(1, 10)}
        unit = readings[7].value.get("unit") if readings[7].status == "stated" else None
        label = readings[9].value.get("statistic") if c.labelled else None
        columns = self.columns(c)
        owners = self.candidates(c)
        numbers = tuple(self.number(x, columns.get(x.offset) or self.line_label(c, x) or self.interleaved(c, x, label) or label,
                                    unit, owners.get(x.offset))
                        for x in c.numbers)
        if readings[9].status == "missing":  # the statistic the numbers carry (read.aggregation)
            readings[9] = aggregation.from_numbers(numbers, line, col, clean(c.text)) or readings[9]
        tool = _CLAIM_TOOLS.get(c.tool or "") or self.named
        return ClaimReading(c.kind, line, col, clean(c.text, 200), numbers, readings, tool)

    def number(self, x: KldNumber, statistic: str | None, unit: str | None, candidate: str | None) -> NumberReading:
        line, col = self.doc.position(x.offset)
        end = x.offset + len(x.text)
        after = UNIT.match(self.doc.text, end, min(len(self.doc.text), end + 40))
        value = x.value
        if after is not None:
            word = after.group(1).lower()
            if after.group(1).startswith("m") or word.startswith("milli"):
                word, value = word.removeprefix("milli").removeprefix("-").removeprefix("m"), value / 1000
            unit = "percent" if word == "%" else ("bits" if word.startswith("bit") else "nats")
        before = self.doc.text[max(0, x.offset - 4) : x.offset].rstrip()
        following = self.doc.text[end : end + 2].lstrip()
        if before.endswith("±"):  # "0.0231 ± 0.0002": the number's standard error
            statistic = "se"
        elif before.endswith("[") and following.startswith(","):  # "[0.0224, 0.0238]": an interval
            statistic = "ci_low"
        elif before.endswith(",") and following.startswith("]"):
            statistic = "ci_high"
        return NumberReading(x.text, value, line, col, unit, statistic, candidate)

    def interleaved(self, c: Claim, x: KldNumber, label: str | None) -> str | None:
        """Where the claim's label names several statistics and its numbers alternate with them on one line
        ("mean KLD 3.6e-5, max 2.1e-3", "kld 0.012  median 0.004  p90 0.030"), each number's own: the one
        statistic named between the previous number on its line and it. None where that stretch names none
        or several (the claim's label stands)."""
        if label is None or "+" not in label:
            return None
        stretch = self.stretch_before(x)
        stat = values.statistic(stretch)
        if stat is None or "+" in stat:
            return None
        return stat

    def line_label(self, c: Claim, x: KldNumber) -> str | None:
        """For pasted tool output: the statistic the number's own line names ("99.9%   KLD:", "Median");
        for a transposed table's KLD rows, the row's label ("| KL max | 0.1129 |")."""
        if c.kind == "table":
            r = self.doc.line_index(x.offset)
            table = self.row_tables.get(r)
            if table is None or self.column_claim(table, self.doc.line_index(c.offset)) or not table.cells[r]:
                return None
            cells = table.cells[r]
            return values.statistic(cells[0][1][: QUOTE_LIMIT * 4]) or aggregation.row_note(cells, values.statistic)
        if c.kind != "tool-output":
            return None
        i = self.doc.line_index(x.offset)
        paired = slash_pairs.paired_label(self.doc.lines[i], x.offset - self.doc.starts[i])  # "median / p95 0.01 / 0.4"
        if paired is not None and (stat := values.statistic(paired)) is not None:
            return stat
        return values.statistic(self.stretch_before(x)) or values.statistic(self.line_before(x))

    def line_before(self, x: KldNumber) -> str:
        """The text of the number's line before it."""
        i = self.doc.line_index(x.offset)
        return self.doc.lines[i][: x.offset - self.doc.starts[i]]

    def stretch_before(self, x: KldNumber) -> str:
        """The words between the previous number on the number's line and it ("p90 " in "median 0.004 p90 0.030"):
        the label a number written in a run of label-number pairs carries."""
        return values.KLD_VALUE.split(self.line_before(x))[-1]

    @staticmethod
    def column_claim(table: Table, i: int) -> bool:
        """Whether a table claim at line ``i`` is a KLD column's (its header names KL past the label column),
        not a transposed table's whose header names KL only in its label cell ("| Gemma-12B, KLD vs BF16 | Q8 |")."""
        return table.header == i and any(KLD_TERM.search(text) for _, text in table.cells[i][1:])

    def columns(self, c: Claim) -> dict[int, str | None]:
        """For a pipe-table claim: number offset -> the statistic its column header names."""
        if c.kind != "table":
            return {}
        table = self.tables.get(self.doc.line_index(c.offset))
        if table is None:
            return {}
        stats = [values.statistic(text[: QUOTE_LIMIT * 4]) for _, text in table.cells[table.header]]
        if not any(stats):
            return {}
        out: dict[int, str | None] = {}
        by_row: dict[int, list[KldNumber]] = {}
        for x in c.numbers:
            by_row.setdefault(self.doc.line_index(x.offset), []).append(x)
        for r, numbers in by_row.items():
            starts = [off for off, _ in table.cells[r]]
            for x in numbers:
                k = bisect_right(starts, x.offset) - 1
                if 0 <= k < len(stats) and stats[k] is not None:
                    out[x.offset] = stats[k]
        return out

    def candidates(self, c: Claim) -> dict[int, str]:
        """Number offset -> the candidate it belongs to: a column claim's row label ("Q4_K_M"), a
        transposed row's column header, a flattened table's first word. Each row is split once."""
        if c.kind != "table":
            return {}
        out: dict[int, str] = {}
        i = self.doc.line_index(c.offset)
        table = self.tables.get(i) or self.row_tables.get(i)
        labels: dict[int, str] = {}
        starts: dict[int, list[int]] = {}
        for x in c.numbers:
            r = self.doc.line_index(x.offset)
            if table is None:  # a flattened table: the row's first word
                if r not in labels:
                    words = self.doc.lines[r].split()
                    labels[r] = clean(words[0], 60) if words else ""
                label = labels[r]
            elif self.column_claim(table, i):  # a KLD column: the row's first cell
                if r not in labels:
                    cells = table.cells[r]
                    labels[r] = clean(cells[0][1].strip("*_` "), 60) if cells else ""
                label = labels[r]
            else:  # a transposed KLD row: the header of the number's column
                if r not in starts:
                    starts[r] = [off for off, _ in table.cells[r]]
                k = bisect_right(starts[r], x.offset) - 1
                head = table.cells[table.header]
                label = clean(head[k][1].strip("*_` "), 60) if 0 <= k < len(head) else ""
            if label:
                out[x.offset] = label
        return out


_CLAIM_TOOLS = {"llama-perplexity": "llama-perplexity", "llama-perplexity-chunks": "llama-perplexity", "model_diff": "exllamav3 model_diff"}


def named_tool(doc: Doc) -> str | None:
    """The tool a card names first among those the reading recognises by name (read.tools.named)."""
    found = [(m.start(), name) for name, p in NAMED.items() if (m := search(p, doc.scanned)) is not None]
    return min(found)[1] if found else None


def read_claims(doc: Doc, claims: list[Claim], metadata: dict[str, Any] | None = None,
                found: dict[int, list[re.Match[str]]] | None = None) -> list[ClaimReading]:
    """The readings of ``claims`` (:func:`kldcard.lint.claims.find_claims` of ``doc``); ``found``:
    :func:`kldcard.lint.evidence.collect` of ``doc`` when already computed."""
    if not claims:
        return []
    reader = _Reader(doc, metadata, found)
    reader.claimed = {reader.section(c.offset)[0] for c in claims}
    return [reader.claim(c) for c in claims]
