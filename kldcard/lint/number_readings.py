"""Each prose KLD number's own readings: its claim's readings, and what the card says of that number alone.

A claim's reading (:mod:`kldcard.lint.reader`) holds for all of its numbers. Some numbers of a claim are
not measured the way the claim says:

- a number labelled with its own statistic or unit (a table's ``p99`` column, ``0.03 bits``);
- a table row with its own context length (a ``ctx`` / ``context`` column whose values differ by row);
- a number taken from someone else's measurement (``according to unsloth's page``, ``reported by``, a
  ``source`` column): nothing of how it was measured is known from this card, so every disclosure is
  ``missing`` for it, with the attribution as evidence.

``kldcard comparable`` and KLD212 read prose numbers through :func:`number_readings`.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from bisect import bisect_left
from dataclasses import replace
from functools import lru_cache

from kldcard.lint.reading import ClaimReading, DisclosureReading, Evidence, NumberReading

__all__ = ["borrowed_from", "interval_of", "is_uncertainty", "number_readings", "row_cells"]

# Attribution of a number to another party's measurement, in the number's own line.
_BORROWED = re.compile(
    r"\baccording to\b|\b(?:as )?reported (?:by|on|in)\b|\b(?:taken|copied|quoted|borrowed) from\b|"
    r"\b(?:from|per|on) (?:the |their |his |her )?[\w.-]+(?:'s|’s) (?:card|model card|page|benchmark|blog|post|"
    r"numbers|table|results)\b|\bsegún\b|\bselon\b|\blaut\b",
    re.IGNORECASE,
)
_CTX_HEADER = re.compile(r"^\W*(?:ctx|n_ctx|context(?: length| size| window)?|seq(?:uence)?[ _-]?len(?:gth)?|-c)\W*$",
                         re.IGNORECASE)
_SOURCE_HEADER = re.compile(r"^\W*(?:source|measured by|reported by|from|numbers? from|via)\W*$", re.IGNORECASE)
# a column header that names its own context: "KLD@ctx4096", "KLD (context 8k)", "KLD 512 ctx"
_HEADER_CTX = re.compile(r"(?:\bctx|\bcontext|\bn_ctx|(?<![\w-])-c)\W{0,3}(\d[\d,]*\s*[kK]?)\b|"
                         r"\b(\d[\d,]*\s*[kK]?)\W{0,2}(?:ctx|context|token context)\b", re.IGNORECASE)
_INT = re.compile(r"\d[\d,_ ]*(?:[kK]\b)?")


@lru_cache(maxsize=256)
def _cells(line: str) -> tuple[str, ...]:
    line = line.strip()
    if line.startswith("|"):
        line = line[1:]
    if line.endswith("|"):
        line = line[:-1]
    return tuple(c.strip() for c in line.split("|"))


def row_cells(lines: list[str], claim: ClaimReading, n: NumberReading) -> tuple[tuple[str, ...], tuple[str, ...]] | None:
    """(header cells, the number's row cells) when the number sits in a pipe table starting at the
    claim's line; None otherwise. ``lines``: the card's lines (line 1 = index 0)."""
    if claim.kind != "table" or not (1 <= claim.line <= len(lines)) or not (1 <= n.line <= len(lines)):
        return None
    header, row = lines[claim.line - 1], lines[n.line - 1]
    if "|" not in header or "|" not in row or n.line == claim.line:
        return None
    return _cells(header), _cells(row)


@lru_cache(maxsize=256)
def borrowed_from(line: str) -> str | None:
    """The attribution in ``line`` ("according to unsloth's benchmark page"), or None."""
    m = _BORROWED.search(line)
    if not m:
        return None
    return " ".join(line[m.start(): m.start() + 60].split())


@lru_cache(maxsize=256)
def _pipes(line: str) -> tuple[tuple[int, ...], bool]:
    # once per line, not per number: a transposed table has thousands of numbers on one line
    return tuple(m.start() for m in re.finditer(r"\|", line)), line.lstrip().startswith("|")


@lru_cache(maxsize=256)
def _special_columns(header_line: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """(context columns, source columns) of a table's header line (once per table, not per number)."""
    header = _cells(header_line)
    return (tuple(i for i, h in enumerate(header) if _CTX_HEADER.match(h)),
            tuple(i for i, h in enumerate(header) if _SOURCE_HEADER.match(h)))


def _column(line: str, column: int) -> int | None:
    """The index of the table cell holding 1-based ``column`` of a pipe-table row."""
    pipes, leading = _pipes(line)
    index = bisect_left(pipes, max(column - 1, 0)) - (1 if leading else 0)
    return index if index >= 0 else None


_NUM = r"[0-9]+(?:[.,][0-9]+)?(?:[eE][-+−]?[0-9]+)?"
_PLUS_MINUS = re.compile(r"[*_`\s]*(?:±|\+/-|\+-)\s*[*_`]*(" + _NUM + ")")
_BRACKETS = re.compile(r"[*_`\s]*(?:\(|\[)\s*(?:95\s*%\s*CI:?\s*)?(" + _NUM + r")\s*(?:,|–|—|-|to)\s*(" + _NUM
                       + r")\s*(?:\)|\])")
_BEFORE_PM = re.compile(r"(?:±|\+/-|\+-)\s*[*_`]*$")


def _float(text: str) -> float:
    return float(text.replace(",", ".").replace("−", "-"))


def interval_of(line: str, n: NumberReading) -> tuple[float, float, str] | None:
    """The interval written right after number ``n`` in its ``line``: ``0.0213 ± 0.0002`` gives
    (0.0211, 0.0215, "±, meaning not stated"); ``0.0213 [0.0209, 0.0217]`` gives the bracket's bounds."""
    after = line[n.column - 1 + len(n.text): n.column - 1 + len(n.text) + 60] if n.column >= 1 else ""
    m = _PLUS_MINUS.match(after)
    if m:
        half = _float(m.group(1))
        return n.value - half, n.value + half, "±: SE or half-width, not stated"
    m = _BRACKETS.match(after)
    if m:
        low, high = _float(m.group(1)), _float(m.group(2))
        if low <= n.value <= high:
            return low, high, "interval as written"
    return None


def is_uncertainty(line: str, n: NumberReading) -> bool:
    """True when ``n`` is the "± x" part of another number (an uncertainty, not a KLD value)."""
    return n.column >= 2 and _BEFORE_PM.search(line[max(0, n.column - 12): n.column - 1]) is not None


def _ctx(cell: str) -> int | None:
    m = _INT.search(cell)
    if not m:
        return None
    text = m.group(0).replace(",", "").replace("_", "").replace(" ", "")
    return int(text[:-1]) * 1024 if text[-1:] in "kK" else int(text)


def number_readings(claim: ClaimReading, n: NumberReading, lines: list[str]) -> dict[int, DisclosureReading]:
    """The readings (D1–D9) of number ``n`` of ``claim`` (``lines``: the card's lines)."""
    readings = dict(claim.disclosures)
    here = (Evidence(text=n.text, line=n.line, column=n.column),)
    line = lines[n.line - 1] if 1 <= n.line <= len(lines) else ""
    cells = row_cells(lines, claim, n)
    source = borrowed_from(line)
    if cells is not None:
        header, row = cells
        own = _column(line, n.column)
        m = _HEADER_CTX.search(header[own]) if own is not None and own < len(header) else None
        if m and _ctx(m.group(1) or m.group(2)) is not None:
            ev = (Evidence(text=header[own], line=claim.line),)
            readings[5] = _with(readings.get(5), 5, {"n_ctx": _ctx(m.group(1) or m.group(2))}, ev, replace_value=True)
        ctx_cols, source_cols = _special_columns(lines[claim.line - 1])
        for i in (i for i in ctx_cols if i < len(row) and _ctx(row[i]) is not None):
            ev = (Evidence(text=f"{header[i]}: {row[i]}", line=n.line),)
            readings[5] = _with(readings.get(5), 5, {"n_ctx": _ctx(row[i])}, ev, replace_value=True)
        for i in (i for i in source_cols if i < len(row) and row[i]):
            source = source or f"{header[i]}: {row[i]}"
    if source is not None:
        ev = (Evidence(text=source, line=n.line),)
        why = (f"this number is another party's measurement ({source}); the card does not say how it was measured",)
        return {d: DisclosureReading(d, "missing", {}, ev, why) for d in range(1, 10)}
    if n.statistic:
        readings[9] = _with(readings.get(9), 9, {"statistic": n.statistic}, here)
    if n.unit in ("nats", "bits"):
        readings[7] = _with(readings.get(7), 7, {"unit": n.unit}, here)
    return readings


def _with(r: DisclosureReading | None, d: int, value: dict, evidence: tuple[Evidence, ...], *,
          replace_value: bool = False) -> DisclosureReading:
    if r is None or r.status == "missing":
        return DisclosureReading(d, "incomplete", value, evidence)
    kept = {k: v for k, v in r.value.items() if not (replace_value and k in value)}
    merged = {**kept, **value}
    return replace(r, value=merged, evidence=(*evidence, *r.evidence))
