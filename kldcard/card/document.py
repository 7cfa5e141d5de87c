"""Read a model card without ever re-saving the user's YAML.

A card is ``README.md`` with optional YAML front matter. We find the same block the Hub's pattern
finds (``huggingface_hub.repocard.REGEX_YAML_BLOCK``) with a linear scan, parse it with PyYAML's *safe*
loader only, and keep the composed node tree so that any JSON pointer into the metadata resolves to
a 1-based line and column in the file. The original bytes are kept untouched; editing (render) splices
regions of the text, never a re-serialised document.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kldcard import files
from kldcard.card.yaml import compose_and_load
from kldcard.errors import InputError

# The default size limit. Real model cards are kilobytes to tens of kilobytes; the largest kind,
# embedding models' cards with an MTEB model-index of thousands of results, can reach hundreds of KB. The linter is linear, but its worst crafted card costs ~1.4 s/MB on the 2-core
# machine (benchmarks/results/lint_corpus.md), so 1 MiB keeps every card it accepts under 2 s; a
# larger card is refused in one line, and `--max-card-bytes` / `max-card-bytes` raise the limit.
MAX_CARD_BYTES = 1 << 20
CARD_BYTES_CEILING = 1 << 30  # what --max-card-bytes may raise it to: a card is read into memory

# The Hub's pattern (huggingface_hub.repocard.REGEX_YAML_BLOCK, the Hub server's ViewMarkdown.ts), kept
# only as the specification the scanner below is tested against: its ``[\r\n]+`` runs at both
# delimiters around a lazy body backtrack cubically ("---" then 4,000 newlines took 17 s).
HUB_YAML_BLOCK = r"^(\s*---[\r\n]+)([\S\s]*?)([\r\n]+---(\r\n|\n|$))"
_NEWLINE_CHARS = "\r\n"


@dataclass(frozen=True)
class BlockMatch:
    """The front-matter block as ``re.Match`` would give it: groups 1-4 are the opener, the YAML
    text, the closer and the closer's line ending, exactly as HUB_YAML_BLOCK captures them."""

    _spans: tuple[tuple[int, int], ...]  # group 0..4
    string: str

    def span(self, group: int = 0) -> tuple[int, int]:
        return self._spans[group]

    def start(self, group: int = 0) -> int:
        return self._spans[group][0]

    def end(self, group: int = 0) -> int:
        return self._spans[group][1]

    def group(self, group: int = 0) -> str:
        s, e = self._spans[group]
        return self.string[s:e]


def _closer_end(text: str, dash: int) -> int:
    """End of a closing ``---`` line starting at ``dash`` (after its line ending), or -1."""
    if text[dash : dash + 3] != "---":
        return -1
    after = dash + 3
    if after == len(text):
        return after
    if text.startswith("\r\n", after):
        return after + 2
    return after + 1 if text[after] == "\n" else -1


def _newline_run_start(text: str, end: int, floor: int) -> int:
    """Start of the run of CR/LF characters that ends at ``end`` (not before ``floor``)."""
    i = end
    while i > floor and text[i - 1] in _NEWLINE_CHARS:
        i -= 1
    return i


class _YamlBlockScanner:
    """``search(text)`` finds what ``re.search(HUB_YAML_BLOCK, text)`` finds, in one linear pass.

    The regex's backtracking order, resolved by hand: the opener's newline run is taken whole first
    and the lazy body ends at the first later line that is exactly ``---``; only when there is none
    does the opener give back one newline so that an immediately following ``---`` closes an empty
    block.
    """

    def search(self, text: str) -> BlockMatch | None:
        n = len(text)
        p = 0
        while p < n and text[p].isspace():  # \s* cannot give anything back: "-" is not a space
            p += 1
        if not text.startswith("---", p):
            return None
        q = p + 3
        b = q
        while b < n and text[b] in _NEWLINE_CHARS:
            b += 1
        if b == q:
            return None
        dash = text.find("---", b + 1)
        while dash != -1:
            if text[dash - 1] in _NEWLINE_CHARS:
                end = _closer_end(text, dash)
                if end != -1:
                    e = _newline_run_start(text, dash, b)
                    return BlockMatch(((0, end), (0, b), (b, e), (e, end), (dash + 3, end)), text)
            dash = text.find("---", dash + 1)
        end = _closer_end(text, b)
        if b - q >= 2 and end != -1:  # "---\n\n---": the opener keeps all newlines but one
            return BlockMatch(((0, end), (0, b - 1), (b - 1, b - 1), (b - 1, end), (b + 3, end)), text)
        return None


# Same blocks as huggingface_hub.repocard.REGEX_YAML_BLOCK; kept local so that reading a card does not
# import huggingface_hub (slow) and stays identical across hub versions.
YAML_BLOCK = _YamlBlockScanner()


@dataclass
class Card:
    """A parsed card. ``text`` is the decoded file; ``metadata`` the front matter (a dict)."""

    path: str
    text: str
    metadata: dict[str, Any]
    body: str
    body_line: int  # 1-based line of the first body line
    newline: str  # detected line ending: "\n", "\r\n" or "\r"
    front_matter_span: tuple[int, int] | None  # (start, end) offsets of the YAML text inside ``text``
    _node: yaml.Node | None = field(default=None, repr=False)
    _yaml_line: int = 1  # 1-based line where the YAML text starts
    # a Hub card's files fetched from its repo at the card's commit (path in the repo -> local path,
    # None: the repo has none); local cards find theirs next to ``path``
    repo_files: dict[str, Path | None] = field(default_factory=dict, repr=False)

    def locate(self, pointer: str) -> tuple[int, int]:
        """1-based (line, column) of the deepest existing node along an RFC 6901 ``pointer``.

        A pointer to a missing key resolves to its nearest existing ancestor, so a finding about a
        missing disclosure points at the mapping that should contain it.
        """
        node = self._node
        if node is None:
            return (1, 1)
        best = node
        for raw in [p for p in pointer.split("/")[1:]] if pointer else []:
            part = raw.replace("~1", "/").replace("~0", "~")
            nxt = None
            if isinstance(node, yaml.MappingNode):
                # the last of duplicate keys wins, as in yaml.safe_load
                for k, v in reversed(node.value):
                    if isinstance(k, yaml.ScalarNode) and k.value == part:
                        nxt = v
                        best = k if not isinstance(v, yaml.ScalarNode) else v
                        break
            elif isinstance(node, yaml.SequenceNode) and part.isdigit() and int(part) < len(node.value):
                nxt = node.value[int(part)]
                best = nxt
            if nxt is None:
                break
            node = nxt
        mark = best.start_mark
        return (self._yaml_line + mark.line, mark.column + 1)

    def lines_of(self, pointer: str) -> tuple[int, int] | None:
        """The first and last 1-based line of the front-matter node at ``pointer`` (None when absent)."""
        node = self.node_at(pointer)
        if node is None:
            return None
        first, end = node.start_mark.line, node.end_mark.line
        if end > first and node.end_mark.column == 0:  # a block node ends at the start of the next line
            end -= 1
        return (self._yaml_line + first, self._yaml_line + end)

    def node_at(self, pointer: str) -> yaml.Node | None:
        """The YAML node at ``pointer``, or None when the path does not exist."""
        node = self._node
        for raw in pointer.split("/")[1:] if pointer else []:
            part = raw.replace("~1", "/").replace("~0", "~")
            if isinstance(node, yaml.MappingNode):
                node = next(
                    (v for k, v in reversed(node.value) if isinstance(k, yaml.ScalarNode) and k.value == part), None
                )
            elif isinstance(node, yaml.SequenceNode) and part.isdigit() and int(part) < len(node.value):
                node = node.value[int(part)]
            else:
                return None
            if node is None:
                return None
        return node


def detect_newline(text: str) -> str:
    m = re.search(r"\r\n|\r|\n", text)
    return m.group(0) if m else "\n"


def read_bytes(path: str | os.PathLike[str], limit: int = MAX_CARD_BYTES) -> bytes:
    """Read a card file's bytes (at most ``limit``), refusing what cannot be a card (one-line
    :class:`InputError`)."""
    p = Path(path)
    if not p.exists():
        why = " (a symbolic link whose target is missing or loops)" if p.is_symlink() else ""
        raise InputError(f"{p}: no such file{why}")
    if p.is_dir():
        raise InputError(f"{p}: is a directory; pass the card file (e.g. {p / 'README.md'})")
    try:
        size = p.stat().st_size
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from None
    if size > limit:
        raise InputError(f"{p}: {size} bytes is too large for a model card (limit {limit}; --max-card-bytes raises it)")
    return files.read_bytes(p, "card", limit=limit)  # also refuses a FIFO or device, and a file that grew


# UTF-32 before UTF-16: the UTF-32LE BOM begins with the UTF-16LE one.
_BOMS = (
    (b"\xff\xfe\x00\x00", "UTF-32LE"),
    (b"\x00\x00\xfe\xff", "UTF-32BE"),
    (b"\xff\xfe", "UTF-16LE"),
    (b"\xfe\xff", "UTF-16BE"),
)


def wide_encoding(data: bytes) -> str | None:
    """"UTF-16LE", "UTF-16BE", "UTF-32LE" or "UTF-32BE" when ``data`` is text in that encoding (by its
    byte-order mark, or without one by the NUL pattern mostly-ASCII text leaves), else None."""
    for bom, name in _BOMS:
        if data.startswith(bom):
            return name
    head = data[: 8192 - 8192 % 4]
    if len(head) < 4 or b"\x00" not in head:
        return None

    def nul_share(lane: int, width: int) -> float:
        column = head[lane::width]
        return column.count(0) / len(column)

    # Markdown is mostly ASCII: in UTF-32 three of every four bytes are NUL, in UTF-16 one of two.
    for name, width, zero, nonzero in (("UTF-32LE", 4, (1, 2, 3), 0), ("UTF-32BE", 4, (0, 1, 2), 3),
                                       ("UTF-16LE", 2, (1,), 0), ("UTF-16BE", 2, (0,), 1)):  # fmt: skip
        if all(nul_share(z, width) > 0.9 for z in zero) and nul_share(nonzero, width) < 0.1:
            return name
    return None


def parse_card(data: bytes, path: str = "<card>") -> Card:
    """Parse card bytes. Raises :class:`InputError` for anything that is not a readable card."""
    if not data.strip():
        raise InputError(f"{path}: empty file (nothing but whitespace), not a model card")
    wide = wide_encoding(data)
    if wide is not None:
        raise InputError(
            f"{path}: the card is {wide} text, not UTF-8; convert it, e.g. "
            f"iconv -f {wide} -t UTF-8 {path} > README.utf8.md"
        )
    if b"\x00" in data[:8192]:
        raise InputError(f"{path}: binary file (contains NUL bytes), not a Markdown card")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise InputError(f"{path}: not valid UTF-8 (byte {exc.start}); save the card as UTF-8") from None
    newline = detect_newline(text)
    m = YAML_BLOCK.search(text)
    if not m:
        return Card(path, text, {}, text, 1, newline, None)
    yaml_text = m.group(2)
    yaml_line = _line_of(text, m.start(2))
    try:
        node, metadata = compose_and_load(yaml_text)
    except yaml.YAMLError as exc:
        where, problem = yaml_error_parts(exc, yaml_line)
        raise InputError(f"{path}{where}: malformed YAML front matter: {problem}") from None
    except RecursionError:
        raise InputError(f"{path}: YAML front matter nests too deeply") from None
    if metadata is None:
        metadata = {}
    if not isinstance(metadata, dict):
        raise InputError(
            f"{path}:{yaml_line}:1: front matter must be a YAML mapping (key: value), not {type(metadata).__name__}"
        )
    body_start = m.end()
    return Card(
        path=path,
        text=text,
        metadata=metadata,
        body=text[body_start:],
        body_line=_line_of(text, body_start),
        newline=newline,
        front_matter_span=(m.start(2), m.end(2)),
        _node=node,
        _yaml_line=yaml_line,
    )


def yaml_error_parts(exc: yaml.YAMLError, first_line: int = 1) -> tuple[str, str]:
    """(``":LINE:COL"`` or ``""``, the problem in one line) of a PyYAML error; ``first_line`` is
    the file line the YAML text starts on."""
    mark = getattr(exc, "problem_mark", None)
    where = f":{first_line + mark.line}:{mark.column + 1}" if mark else ""
    return where, getattr(exc, "problem", None) or str(exc).splitlines()[0]


def _line_of(text: str, offset: int) -> int:
    """1-based line number of ``offset``, counting CRLF, CR and LF as one line break each."""
    return len(re.findall(r"\r\n|\r|\n", text[:offset])) + 1


def read_card(path: str | os.PathLike[str]) -> Card:
    """Read and parse a local card file. The file is opened read-only and never written."""
    return parse_card(read_bytes(path), str(path))
