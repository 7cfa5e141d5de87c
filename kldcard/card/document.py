"""Read a model card without ever re-saving the user's YAML.

A card is ``README.md`` with optional YAML front matter. We split it with the same pattern the Hub
uses (``huggingface_hub.repocard.REGEX_YAML_BLOCK``), parse the front matter with PyYAML's *safe*
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

from kldcard.errors import InputError

MAX_CARD_BYTES = 10 * 1024 * 1024  # real cards are kilobytes; anything this big is not a card

# Same pattern as huggingface_hub.repocard.REGEX_YAML_BLOCK (and the Hub server); kept local so that
# reading a card does not import huggingface_hub (slow) and stays identical across hub versions.
YAML_BLOCK = re.compile(r"^(\s*---[\r\n]+)([\S\s]*?)([\r\n]+---(\r\n|\n|$))")


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


def read_bytes(path: str | os.PathLike[str]) -> bytes:
    """Read a card file's bytes, refusing what cannot be a card (one-line :class:`InputError`)."""
    p = Path(path)
    if not p.exists():
        raise InputError(f"{p}: no such file")
    if p.is_dir():
        raise InputError(f"{p}: is a directory; pass the card file (e.g. {p / 'README.md'})")
    try:
        size = p.stat().st_size
        if size > MAX_CARD_BYTES:
            raise InputError(f"{p}: {size} bytes is too large for a model card (limit {MAX_CARD_BYTES})")
        data = p.read_bytes()
    except OSError as exc:
        raise InputError(f"{p}: cannot read: {exc.strerror or exc}") from None
    return data


def parse_card(data: bytes, path: str = "<card>") -> Card:
    """Parse card bytes. Raises :class:`InputError` for anything that is not a readable card."""
    if not data.strip():
        raise InputError(f"{path}: empty file, nothing to lint")
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
        node = yaml.compose(yaml_text, Loader=yaml.SafeLoader)
        metadata = yaml.safe_load(yaml_text)
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
