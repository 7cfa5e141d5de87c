"""Whole-text regex search that reads only the text near a literal every match must contain.

Python's ``re`` tries a pattern at every position of the text; for a case-insensitive alternation
without a literal prefix that costs 0.05-0.4 s per MB even when nothing matches, and the prose linter
runs about a hundred such patterns over each card body (issue 16: lint time per MB). Here each
pattern is analysed once, from its parse tree (:mod:`kldcard.lint.scan_plan`), for

- *anchors*: lowercase literals of which every match contains at least one;
- *width*: the most characters a match, with its lookaheads, can read from its start (or unbounded);
- *barriers*: ASCII characters that no part of the pattern (lookarounds included) can consume;

and a top-level alternation branch by branch (each branch's own anchors, width and barriers).

The text is lowercased once (length-preserving), ``str.find`` (C speed) lists the anchor hits, and
the pattern runs with ``pos``/``endpos`` only on windows around them: from the last barrier (or
``width`` characters) before a hit to the next barrier (or ``width`` characters) after it, windows
that overlap merged. That is exact, not a heuristic:

- a match contains an anchor hit, so it starts and ends inside that hit's window, and every
  position the engine reads to decide it (lookaheads included) lies inside the window too: the
  window's ``endpos`` is never seen as the end of the text, except where it is the end of the text;
- ``pos`` only limits where attempts start: lookbehinds, ``\\b`` and ``^`` read the real text before
  it (documented ``re`` behaviour);
- a match of one window ends before the next window starts, so the leftmost-first, non-overlapping
  order of ``finditer`` over the whole text is the concatenation of the windows' orders.

Hits are found only as far as a search needs them (most disclosures are stated near the top).
Patterns the analysis cannot bound (no anchor, a back-reference) run over the whole text as before,
and so does the rest of a text where windows turn out dense. Loops over lines or sentences use
:func:`spans_with` to visit only those that hold an anchor. tests/test_lint_scan.py checks, for every pattern of the
prose linter, that the windowed matches equal the whole-text matches on every card under
tests/data, on the pathological cards and on random text.
"""

from __future__ import annotations

import heapq
import re
from bisect import bisect_left, bisect_right
from collections.abc import Iterator

from kldcard.lint.scan_plan import INF, Part, Plan, fold, plan

__all__ = ["INF", "Text", "finditer", "fold", "plan", "search", "spans_with"]

# More windows per character than this cost more in Python than the regex saves in C.
DENSE = 1 / 128


class Text:
    """A text with its folded copy, its reversal and anchor hits, computed once and shared by patterns."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._low: str | None = None
        self._rev: str | None = None
        self._hits: dict[str, _Hits] = {}

    @property
    def low(self) -> str:
        if self._low is None:
            self._low = fold(self.text)
        return self._low

    @property
    def rev(self) -> str:
        if self._rev is None:
            self._rev = self.text[::-1]
        return self._rev

    def hits(self, literal: str) -> _Hits:
        """The start offsets of ``literal`` in the folded text (found once, shared by all patterns)."""
        h = self._hits.get(literal)
        if h is None:
            h = self._hits[literal] = _Hits(self.low, literal)
        return h


class _Hits:
    """The start offsets of one literal, found in order only as far as a query needs them: a search
    that stops at its first match (most disclosures are found near the top) reads no further."""

    __slots__ = ("done", "find", "found", "literal")

    def __init__(self, low: str, literal: str) -> None:
        self.found: list[int] = []
        self.find, self.literal, self.done = low.find, literal, False

    def at_or_after(self, pos: int) -> int:
        """The first offset >= ``pos``, or -1."""
        found = self.found
        while not self.done and (not found or found[-1] < pos):
            i = self.find(self.literal, found[-1] + 1 if found else 0)
            if i < 0:
                self.done = True
            else:
                found.append(i)
        k = bisect_left(found, pos)
        return found[k] if k < len(found) else -1

    def all(self) -> list[int]:
        self.at_or_after(INF)
        return self.found


def finditer(pattern: re.Pattern[str], text: Text) -> Iterator[re.Match[str]]:
    """Exactly ``pattern.finditer(text.text)``, reading only windows around anchor hits.

    Where windows turn out dense (more than one per ``1 / DENSE`` characters so far), they cost more
    in Python than they save: the rest of the text, from the next window on, is matched whole (exact
    too: no match of an earlier window reaches into it)."""
    p = plan(pattern)
    whole = text.text
    if p is None or len(text.low) != len(whole):
        yield from pattern.finditer(whole)
        return
    first, count = -1, 0
    for start, end in _windows(p, text):
        if first < 0:
            first = start
        count += 1
        if count > 32 and count > DENSE * (start - first + 4096):
            yield from pattern.finditer(whole, start)
            return
        yield from pattern.finditer(whole, start, end)


def search(pattern: re.Pattern[str], text: Text) -> re.Match[str] | None:
    """Exactly ``pattern.search(text.text)``."""
    return next(finditer(pattern, text), None)


def spans_with(pattern: re.Pattern[str], text: Text, spans: list[tuple[int, int]], starts: list[int]) -> list[int]:
    """Indices of the ``spans`` (sorted, disjoint; ``starts`` their starts) that hold an anchor of
    ``pattern`` whole: the only spans in which ``pattern.search(text.text[s:e])`` can match (all of
    them when the pattern has no plan). Lets a loop over sentences skip the regex on the others."""
    p = plan(pattern)
    if p is None or len(text.low) != len(text.text):
        return list(range(len(spans)))
    out: set[int] = set()
    last = len(starts) - 1
    for literal in p.anchors:
        size = len(literal)
        k, lo, hi = -1, 0, -1  # the span found last and the offsets [lo, hi) that fall in it
        for h in text.hits(literal).all():
            if not lo <= h < hi:
                k = bisect_right(starts, h) - 1
                lo, hi = (starts[k], starts[k + 1] if k < last else INF) if k >= 0 else (0, starts[0] if starts else INF)
            if k >= 0 and h + size <= spans[k][1]:
                out.add(k)
    return sorted(out)


def _windows(p: Plan, text: Text) -> Iterator[tuple[int, int]]:
    """Merged (pos, endpos) windows around the anchor hits of all the plan's parts."""
    if len(p.parts) == 1:
        yield from _part_windows(p.parts[0], text)
        return
    start = end = -1
    for s, e in heapq.merge(*(_part_windows(x, text) for x in p.parts)):
        if s >= end:
            if end >= 0:
                yield start, end
            start = s
        end = max(end, e)
    if end >= 0:
        yield start, end


def _part_windows(p: Part, text: Text) -> Iterator[tuple[int, int]]:
    """Merged (pos, endpos) windows around one part's anchor hits; see the module docstring.

    A hit at ``a`` needs [lo, hi): lo after the last barrier before it and at most ``width`` back,
    hi two past the first barrier B after it (the barrier is read, never consumed; the second keeps
    a fake end from satisfying ``$``) and at most ``width`` + 2 on. Hits inside a window are skipped
    in bulk: one before B, or more than ``width`` + 2 before the window's end, cannot move its end.
    Barrier searches only cover text after the previous window or up to the next hit's reach."""
    n = len(text.text)
    width, bar = p.width, p.barrier
    lists = [text.hits(x) for x in p.anchors]

    def next_hit(pos: int) -> int:
        best = n
        for h in lists:
            x = h.at_or_after(pos)
            if 0 <= x < best:
                best = x
        return best

    start = end = -1
    a = next_hit(0)
    while a < n:
        if a >= end:
            lo = 0 if width >= INF else max(0, a - width)
            floor = max(lo, end)
            if bar is not None and a > floor:
                m = bar.search(text.rev, n - a, n - floor)  # the last barrier in text[floor:a]
                if m is not None:
                    lo = max(lo, n - m.start())
            if lo >= end:
                if end >= 0:
                    yield start, end
                start = lo
        hi = n if width >= INF else min(n, a + width + 2)
        b = n
        if bar is not None:
            m = bar.search(text.text, a, hi)
            if m is not None:
                b = m.start()
                hi = min(hi, b + 2)
        end = max(end, hi)
        if end >= n:
            break
        # max(b, a + 1): a hit whose own first character is a barrier (b == a; a case-sensitive
        # pattern's letter in the folded text) cannot start a match, and must not be found again
        a = next_hit(max(b, a + 1) if b < n and end >= b + 2 else max(a + 1, end - width - 2))
    if end >= 0:
        yield start, end
