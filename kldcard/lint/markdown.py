"""Just enough Markdown structure for the prose linter: lines, fenced code, pipe tables, sentences.

Not a Markdown parser. Cards are scanned line by line once; every span keeps its offset into the
body so that findings can name a 1-based file line and column.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from bisect import bisect_right
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import cached_property

from kldcard.card.regions import fenced
from kldcard.lint.read.terms import APPROXIMATELY, abbreviations
from kldcard.lint.scan import Text, spans_with

# Each run of spaces is matched by one quantifier only (no "\s*\|?\s*"): a line of spaces is linear.
# (a "+" at the joints too, as psql and org-mode print it: "|------+------|")
TABLE_SEP = re.compile(r"^\s*+(?:\|\s*+)?:?-{2,}:?\s*+(?:[|+]\s*+:?-{2,}:?\s*+)*(?:\|\s*+)?$")
HEADING = re.compile(r"^\s{0,3}#{1,6}\s")
LIST_ITEM = re.compile(r"^\s*(?:[-*+]|\d+[.)])\s+")
# HTML tables as cards paste them: one <tr> per line, header cells <th>, data cells <td>.
# A cell's text stops at the next <td>/<th> tag (opening or closing): from each "<td" the pattern reads
# only up to the next cell, so a line of unclosed cells costs linear, not quadratic, time.
HTML_CELL = re.compile(r"<t([hd])\b[^<>]{0,500}>((?:[^<]|<(?!/?t[hd]\b))*?)</t[hd]\s*>", re.IGNORECASE)
HTML_TABLE_LINE = re.compile(r"^\s*</?(?:table|thead|tbody|tr)\b[^>]*>\s*$", re.IGNORECASE)
# A sentence ends at . ! ? followed by space and something that can start a sentence; "e.g. q8_0",
# "e.g. UD-Q4_K_XL", "vs. BF16" and "0.012" do not split, nor does an abbreviation the card languages write before an
# amount, where an amount follows it ("ca. 30 %", "Approx. 0.01", "aprox. 0,02", "env. 12 %", "bzw. 0,3"; "a conda
# env. Then ..." still splits).
# the "about" words' abbreviations (read.terms.APPROXIMATELY: "ca.", "approx.", "aprox.", "env.") and German's and
# English's of "or", "if need be", "including", "respectively", which stand before an amount too
ABBREVIATIONS_BEFORE_AMOUNT = (*abbreviations(APPROXIMATELY), "bzw", "ggf", "inkl", "incl", "resp")
SENTENCE_END = re.compile(
    r"(?<=[.!?])(?<![eE]\.g\.)(?<![iI]\.e\.)(?<!\bvs\.)(?<!\bcf\.)"
    + r"(?!(?i:" + "|".join(rf"(?<=\b{a}\.)" for a in ABBREVIATIONS_BEFORE_AMOUNT) + r")\s+[~≈]?\d)"
    + r"\s+(?=[A-Z0-9(\[`*_\"'])"
)


@dataclass
class Table:
    header: int  # line index (0-based, within the body) of the header row
    rows: list[int]  # line indices of the data rows
    cells: dict[int, list[tuple[int, str]]] = field(default_factory=dict)  # line -> [(offset, text)]


@dataclass
class Doc:
    """A card body split into lines, with fenced-code flags, tables and text sentences."""

    text: str
    first_line: int  # 1-based file line of body line 0
    starts: list[int]  # body offset of each line
    lines: list[str]  # line text without the line ending
    code: list[bool]  # line is inside a fenced code block (fences included)
    tables: list[Table]
    sentences: list[tuple[int, int]]  # (start, end) body offsets of prose sentences

    def line_index(self, offset: int) -> int:
        return bisect_right(self.starts, offset) - 1

    def position(self, offset: int) -> tuple[int, int]:
        """1-based (file line, column) of a body offset."""
        i = self.line_index(offset)
        return self.first_line + i, offset - self.starts[i] + 1

    def sentence_at(self, offset: int) -> tuple[int, int]:
        """The sentence (or table row / code line) containing ``offset``."""
        k = bisect_right(self.sentence_starts, offset) - 1
        if k >= 0 and self.sentences[k][0] <= offset < self.sentences[k][1]:
            return self.sentences[k]
        i = self.line_index(offset)
        return self.starts[i], self.starts[i] + len(self.lines[i])

    def __post_init__(self) -> None:
        self.sentence_starts = [s for s, _ in self.sentences]

    def lines_with(self, pattern: re.Pattern[str]) -> set[int]:
        """Indices of the lines holding an anchor of ``pattern`` whole: the only lines on which
        ``pattern.match(line)`` or ``pattern.search(line)`` can succeed (see kldcard.lint.scan)."""
        key = (pattern.pattern, pattern.flags)
        if key not in self._lines_with:
            self._lines_with[key] = set(spans_with(pattern, self.scanned, self._line_spans, self.starts))
        return self._lines_with[key]

    def lines_matching(self, pattern: re.Pattern[str]) -> set[int]:
        """Indices of the lines on which ``pattern.search(line)`` succeeds. :meth:`lines_with` is only the anchor
        pre-filter (a line holding "kl" holds KLD_TERM's anchor, not a KL term; a pattern without a stored plan
        gives every line): a reader that asks "which lines name X" asks this."""
        key = (pattern.pattern, pattern.flags)
        if key not in self._lines_matching:
            self._lines_matching[key] = {i for i in self.lines_with(pattern) if pattern.search(self.lines[i])}
        return self._lines_matching[key]

    @cached_property
    def _lines_with(self) -> dict[tuple[str, int], set[int]]:
        return {}

    @cached_property
    def _lines_matching(self) -> dict[tuple[str, int], set[int]]:
        return {}

    @cached_property
    def _line_spans(self) -> list[tuple[int, int]]:
        return [(s, s + len(line)) for s, line in zip(self.starts, self.lines)]

    @cached_property
    def scanned(self) -> Text:
        """The body for :func:`kldcard.lint.scan.finditer` (folded once, anchor hits shared by patterns)."""
        return Text(self.text)


def line_run(text: str, start: int, end: int, keep: Callable[[str], bool], above: int, below: int) -> tuple[int, int]:
    """The run of "\\n"-separated lines around ``text[start:end]`` (whole lines: ``start`` a line start, ``end`` a line
    end) that ``keep`` accepts, at most ``above`` lines up and ``below`` lines down: (start of its first line, end of
    its last). The one walk over a table in raw text, for readers that hold a match rather than a :class:`Doc`
    (``Doc.tables`` knows only pipe tables with a separator row): each reader says by ``keep`` what its table's lines
    are."""
    for _ in range(above):
        if start == 0:
            break
        prev = text.rfind("\n", 0, start - 1) + 1
        if not keep(text[prev : start - 1]):
            break
        start = prev
    for _ in range(below):
        if end >= len(text):
            break
        nxt = text.find("\n", end + 1)
        nxt = len(text) if nxt < 0 else nxt
        if not keep(text[end + 1 : nxt]):
            break
        end = nxt
    return start, end


PIPE_RUN = re.compile(r"\\*\|")  # a pipe with the backslashes right before it


def split_unescaped(inner: str) -> list[str]:
    """``inner`` split at its unescaped pipes: "KL(p \\|\\| q)" keeps its escaped pipes as the cell's text (GFM); a
    pipe after an even run of backslashes ("a \\\\| b", an escaped backslash) still splits."""
    parts, start = [], 0
    for m in PIPE_RUN.finditer(inner):
        if (m.end() - m.start() - 1) % 2 == 0:
            parts.append(inner[start : m.end() - 1])
            start = m.end()
    parts.append(inner[start:])
    return parts


def split_cells(line: str, base: int) -> list[tuple[int, str]]:
    """Cells of a pipe-table row as (body offset, stripped text)."""
    cells = []
    pos = 0
    stripped = line.strip()
    lead = line.index(stripped[0]) if stripped else 0
    inner = stripped
    if inner.startswith("|"):
        inner = inner[1:]
        lead += 1
    if inner.endswith("|"):
        inner = inner[:-1]
    for part in split_unescaped(inner):
        text = part.strip()
        off = base + lead + pos + (part.index(text) if text else 0)
        cells.append((off, text))
        pos += len(part) + 1
    return cells


class _Cells(dict):  # type: ignore[type-arg]
    """line index -> cells, split when first read: most rows of a long table without a KLD column
    are never read (claims reads a row only when it names KLD)."""

    def __init__(self, lines: list[str], starts: list[int], split: Callable[[str, int], list[tuple[int, str]]]) -> None:
        super().__init__()
        self._lines, self._starts, self._split = lines, starts, split

    def __missing__(self, i: int) -> list[tuple[int, str]]:
        cells = self[i] = self._split(self._lines[i], self._starts[i])
        return cells


def _bare_row(line: str) -> bool:
    """``| a | b |``: starts and ends with a pipe and has at least two cells."""
    s = line.strip()
    return len(s) > 2 and s[0] == "|" and s[-1] == "|" and s.count("|") >= 3


def _html_cells(line: str, base: int) -> list[tuple[int, str]]:
    return [(base + m.start(2) + (len(m.group(2)) - len(m.group(2).lstrip())), m.group(2).strip()) for m in HTML_CELL.finditer(line)]


def _html_table(lines: list[str], starts: list[int], code: list[bool], i: int, tables: list[Table], in_table: list[bool]) -> int:
    """Record the HTML table whose header row is line ``i``; return the index after its last row."""
    t = Table(header=i, rows=[], cells=_Cells(lines, starts, _html_cells))
    in_table[i] = True
    j = i + 1
    while j < len(lines) and not code[j] and ("<td" in lines[j].lower() or HTML_TABLE_LINE.match(lines[j])):
        in_table[j] = True
        if "<td" in lines[j].lower():
            t.rows.append(j)
        j += 1
    tables.append(t)
    return j


# The line breaks a file's line numbers count (CRLF, CR, LF: as document._line_of and editors do). str.splitlines
# also breaks at form feeds, U+2028 and other separators, which would shift every later line's number.
LINE = re.compile(r"[^\r\n]*+(?:\r\n|\r|\n)|[^\r\n]++$")


def scan(body: str, first_line: int) -> Doc:
    raw = LINE.findall(body) or [""]
    starts, lines = [], []
    off = 0
    for r in raw:
        starts.append(off)
        lines.append(r.rstrip("\r\n"))
        off += len(r)
    n = len(lines)
    code = fenced(lines)

    tables: list[Table] = []
    in_table = [False] * n
    # Only a line with a pipe or a <th> can start a table: the loop visits those, in order.
    candidates = [k for k, line in enumerate(lines) if "|" in line or ("<" in line and "<th" in line.lower())]
    i = 0
    for c in candidates:
        if c < i:
            continue
        i = c
        if i >= n - 1:
            break
        if not code[i] and "|" in lines[i] and TABLE_SEP.match(lines[i + 1]) and "|" in lines[i + 1] + lines[i]:
            t = Table(header=i, rows=[], cells=_Cells(lines, starts, split_cells))
            in_table[i] = in_table[i + 1] = True
            j = i + 2
            while j < n and not code[j] and "|" in lines[j] and lines[j].strip():
                t.rows.append(j)
                in_table[j] = True
                j += 1
            tables.append(t)
            i = j
        elif not code[i] and _bare_row(lines[i]) and _bare_row(lines[i + 1]) and not TABLE_SEP.match(lines[i + 1]):
            # a pipe table without its separator row, as mirrors and chat exports paste them
            t = Table(header=i, rows=[], cells=_Cells(lines, starts, split_cells))
            in_table[i] = True
            j = i + 1
            while j < n and not code[j] and _bare_row(lines[j]):
                t.rows.append(j)
                in_table[j] = True
                j += 1
            tables.append(t)
            i = j
        elif not code[i] and "<th" in lines[i].lower() and HTML_CELL.search(lines[i]):
            i = _html_table(lines, starts, code, i, tables, in_table)
    for i, line in enumerate(lines):  # bare <table>/<tr> wrapper lines are not prose
        if "<" in line and not code[i] and HTML_TABLE_LINE.match(line):
            in_table[i] = True

    sentences: list[tuple[int, int]] = []
    para: list[int] = []

    def flush() -> None:
        if not para:
            return
        start, end = starts[para[0]], starts[para[-1]] + len(lines[para[-1]])
        chunk = body[start:end]
        s = 0
        for m in SENTENCE_END.finditer(chunk):
            sentences.append((start + s, start + m.start()))
            s = m.end()
        sentences.append((start + s, end))
        para.clear()

    for i, line in enumerate(lines):
        first = line.lstrip()[:1]  # a heading or list item starts with one of "#-*+" or a digit
        if code[i] or in_table[i] or not first:
            if para:
                flush()
            continue
        if first in "#-*+" or first.isdigit():
            heading = first == "#" and HEADING.match(line)
            if heading or LIST_ITEM.match(line):
                flush()
            para.append(i)
            if heading:
                flush()
        else:
            para.append(i)
    flush()
    return Doc(body, first_line, starts, lines, code, tables, sentences)
