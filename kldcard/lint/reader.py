"""Read a free-form card the way a reviewer does: for every KLD claim, one reading per disclosure.

:func:`read_card` (or :func:`read_claims` on a body already scanned) returns a
:class:`~kldcard.lint.reading.ClaimReading` per claim: for each of the nine disclosures its status
(stated / incomplete / inferred / missing), the normalised value read (:mod:`kldcard.lint.read.values`)
and the evidence (line, column and quoted span, or the front-matter key).

Which evidence belongs to which claim: every statement of a disclosure in the body is a candidate
(:func:`kldcard.lint.evidence.collect`); the one nearest the claim in the claim's own section (up to
the next heading) wins, else the nearest anywhere (a card-wide statement applies to every claim).
Keys the winner does not give are filled from the other statements (its section first, then the
card, then the front matter keys the Hub defines), so "-c 512" and "--chunks 100" on two lines make
one complete context. Nothing found: the documented default of a tool the card names or prints
(``inferred``), else ``missing``. Linear in the card: candidates per disclosure are capped, each claim
looks its candidates up by bisection, and readings are shared between claims with the same winner.
"""

from __future__ import annotations

import re
from bisect import bisect_left, bisect_right
from typing import Any

from kldcard.card.document import Card
from kldcard.lint.claims import Claim, KldNumber, find_claims
from kldcard.lint.evidence import collect
from kldcard.lint.markdown import HEADING, Doc, scan
from kldcard.lint.read import front_matter, values
from kldcard.lint.read.complete import is_complete, needs
from kldcard.lint.reading import ClaimReading, DisclosureReading, Evidence, NumberReading
from kldcard.lint.tool_defaults import Tool, default_values, defaults, recognise

__all__ = ["read_card", "read_claims"]

QUOTE_LIMIT = 80  # characters of a quoted span
AROUND = 200  # characters of the span's sentence read either side for its value
MERGE_LIMIT = 6  # further statements read to fill a value's missing keys
CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u200b-\u200f\u2028-\u202e\u2066-\u2069]")
UNIT = re.compile(r"^[\s*_`]*(?:±\s*[\d.,]+\s*)?(nats?|bits?|%)", re.IGNORECASE)


def clean(text: str, limit: int = QUOTE_LIMIT) -> str:
    """``text`` on one line, without control or bidi characters, at most ``limit`` characters."""
    flat = " ".join(CONTROL.sub(" ", text).split())
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
        self.tool: Tool | None = recognise(doc.scanned)
        heads = [doc.starts[i] for i, line in enumerate(doc.lines) if "#" in line and not doc.code[i] and HEADING.match(line)]
        self.heads = heads
        self._values: dict[tuple[int, int], dict[str, Any]] = {}
        self._memo: dict[tuple[int, int, int], DisclosureReading] = {}

    # ---- where ------------------------------------------------------------------------------
    def section(self, offset: int) -> tuple[int, int]:
        """(start, end) body offsets of the section holding ``offset``."""
        k = bisect_right(self.heads, offset)
        start = self.heads[k - 1] if k else 0
        end = self.heads[k] if k < len(self.heads) else len(self.doc.text) + 1
        return start, end

    def evidence(self, m: re.Match[str]) -> Evidence:
        line, col = self.doc.position(m.start())
        return Evidence(clean(m.group(0).strip()), line, col + len(m.group(0)) - len(m.group(0).lstrip()))

    def value(self, n: int, k: int) -> dict[str, Any]:
        key = (n, k)
        if key not in self._values:
            m = self.found[n][k]
            s, e = self.doc.sentence_at(m.start())
            around = self.doc.text[max(s, m.start() - AROUND) : min(max(e, m.end()), m.end() + AROUND)]
            self._values[key] = values.value(n, m.group(0), around)
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
        if primary is None:
            primary = self._nearest(starts, 0, len(starts), offset)
        key = (n, lo if primary is not None and lo <= primary < hi else -1, -1 if primary is None else primary)
        if key not in self._memo:
            self._memo[key] = self._build(n, primary, lo, hi)
        return self._memo[key]

    def _build(self, n: int, primary: int | None, lo: int, hi: int) -> DisclosureReading:
        value: dict[str, Any] = {}
        evidence: list[Evidence] = []
        if primary is not None:
            order = [primary] + [j for j in range(lo, hi) if j != primary][:MERGE_LIMIT]
            order += [j for j in range(len(self.starts[n])) if j not in order][:MERGE_LIMIT]
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
        if self.tool is not None and n in defaults(self.tool):
            line, col = self.doc.position(self.tool.offset)
            words = defaults(self.tool)[n]
            return DisclosureReading(n, "inferred", dict(default_values(self.tool).get(n, {})),
                                     (Evidence(clean(words, 200), line, col, tool=self.tool.name),))  # fmt: skip
        return DisclosureReading(n, "missing", {}, (), needs(n, {}))

    def claim(self, c: Claim) -> ClaimReading:
        line, col = self.doc.position(c.offset)
        own9 = None
        if c.labelled:  # the claim's own label says which statistic its numbers are
            stat = values.statistic(c.text) or "labelled"
            own9 = DisclosureReading(9, "stated", {"statistic": stat}, (Evidence(clean(c.text), line, col),))
        readings = {n: self.reading(n, c.offset, own9 if n == 9 else None) for n in range(1, 10)}
        unit = readings[7].value.get("unit") if readings[7].status == "stated" else None
        label = readings[9].value.get("statistic") if c.labelled else None
        columns = self.columns(c)
        numbers = tuple(self.number(c, x, columns.get(x.offset, label), unit) for x in c.numbers)
        tool = _CLAIM_TOOLS.get(c.tool or "") or (self.tool.name if self.tool is not None else None)
        return ClaimReading(c.kind, line, col, clean(c.text, 200), numbers, readings, tool)

    def number(self, c: Claim, x: KldNumber, statistic: str | None, unit: str | None) -> NumberReading:
        line, col = self.doc.position(x.offset)
        end = x.offset + len(x.text)
        after = UNIT.match(self.doc.text, end, min(len(self.doc.text), end + 40))
        if after is not None:
            word = after.group(1).lower()
            unit = "percent" if word == "%" else ("bits" if word.startswith("bit") else "nats")
        return NumberReading(x.text, x.value, line, col, unit, statistic, self.candidate(c, x))

    def columns(self, c: Claim) -> dict[int, str | None]:
        """For a pipe-table claim: number offset -> the statistic its column header names."""
        if c.kind != "table":
            return {}
        i = self.doc.line_index(c.offset)
        table = next((t for t in self.doc.tables if t.header == i), None)
        if table is None:
            return {}
        header = table.cells[table.header]
        stats = [values.statistic(text) for _, text in header]
        out: dict[int, str | None] = {}
        rows = {self.doc.line_index(x.offset) for x in c.numbers}
        for r in sorted(rows):
            cells = table.cells[r]
            starts = [off for off, _ in cells]
            for x in c.numbers:
                if self.doc.line_index(x.offset) == r:
                    k = bisect_right(starts, x.offset) - 1
                    if 0 <= k < len(stats) and stats[k] is not None:
                        out[x.offset] = stats[k]
        return out

    def candidate(self, c: Claim, x: KldNumber) -> str | None:
        """The row label of a table number ("Q4_K_M"), when the claim is a table column."""
        if c.kind != "table":
            return None
        i = self.doc.line_index(x.offset)
        line = self.doc.lines[i].strip()
        if not line.startswith("|"):
            first = line.split()[0] if line.split() else ""
            return clean(first, 60) or None
        cells = [t.strip() for t in line.strip("|").split("|")]
        return clean(cells[0].strip("*_` "), 60) or None if cells else None


_CLAIM_TOOLS = {"llama-perplexity": "llama-perplexity", "llama-perplexity-chunks": "llama-perplexity", "model_diff": "exllamav3 model_diff"}


def read_claims(doc: Doc, claims: list[Claim], metadata: dict[str, Any] | None = None,
                found: dict[int, list[re.Match[str]]] | None = None) -> list[ClaimReading]:
    """The readings of ``claims`` (:func:`kldcard.lint.claims.find_claims` of ``doc``); ``found``:
    :func:`kldcard.lint.evidence.collect` of ``doc`` when already computed."""
    if not claims:
        return []
    reader = _Reader(doc, metadata, found)
    return [reader.claim(c) for c in claims]
