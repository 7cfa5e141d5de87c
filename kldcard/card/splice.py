"""Text surgery on a model card: replace only kldcard's managed regions, keep every other byte.

Managed regions (everything else — CRLF, comments, anchors, key order, flow style, unknown keys,
the rest of the body — is copied through unchanged):

1. the body section between ``<!-- kldcard:start schema=1 -->`` and ``<!-- kldcard:end -->``;
   without markers it is inserted at the end of ``## Evaluation``, else in a new ``## Evaluation``
   before ``## Environmental Impact`` / ``## Citation``, else at the end. Headings and markers inside
   fenced code are ignored; duplicate or unbalanced markers are an :class:`InputError`.
2. the top-level front-matter key ``kld_evaluation:`` (its line range, located with ``yaml.compose``
   marks, is replaced by a freshly safe-dumped block; appended when absent);
3. the KLD results inside ``model-index[0].results`` (each item's line range is replaced; other
   results stay as they are); ``model-index`` is created when absent.

The user's YAML is never re-serialised (see reference/model-cards.md §3: a round trip loses comments,
anchors, flow style and unknown model-index keys). Front matter is created when the card has none.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from dataclasses import dataclass
from typing import Any

import yaml

from kldcard.card.document import YAML_BLOCK, detect_newline
from kldcard.card.regions import (
    END_MARKER,
    MODEL_INDEX_KEY,
    START_MARKER,
    fenced,
    find_markers,
    is_kld_result,
    marker_problem,
)
from kldcard.card.yaml import compose, dump_yaml, load
from kldcard.errors import InputError

_HEADING_RE = re.compile(r"^ {0,3}(#{1,6})(?:[ \t]+(.*?))?[ \t]*#*[ \t]*$")
_LINE_RE = re.compile(r"[^\r\n]*(?:\r\n|\r|\n)|[^\r\n]+$")

EVALUATION_HEADING = "## Evaluation"
INSERT_BEFORE = ("environmental impact", "citation")


# ---------------------------------------------------------------------------------------------
# Lines
# ---------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Line:
    start: int  # offset of the first character
    end: int  # offset just past the line ending
    content: str  # without the line ending


def split_lines(text: str, base: int = 0) -> list[Line]:
    """Lines of ``text`` with offsets (CRLF, CR and LF each end a line; nothing else does)."""
    out = []
    for m in _LINE_RE.finditer(text):
        raw = m.group(0)
        out.append(Line(base + m.start(), base + m.end(), raw.rstrip("\r\n")))
    return out


def _with_newline(block: str, newline: str) -> str:
    """``block`` (LF text) with the card's line ending."""
    return block.replace("\r\n", "\n").replace("\n", newline)


def _indent(block: str, column: int) -> str:
    if column == 0:
        return block
    pad = " " * column
    return "".join(pad + ln if ln.strip() else ln for ln in block.splitlines(keepends=True))


# ---------------------------------------------------------------------------------------------
# Body
# ---------------------------------------------------------------------------------------------


def _unfenced_lines(lines: list[Line]) -> list[tuple[int, Line]]:
    """(index, line) of every line outside fenced code blocks (the fence rule of :mod:`~kldcard.card.regions`)."""
    code = fenced([ln.content for ln in lines])
    return [(i, ln) for i, ln in enumerate(lines) if not code[i]]


def region_text(section: str, newline: str) -> str:
    """The managed body region: markers around ``section`` (no trailing line ending)."""
    body = section.rstrip("\n")
    return _with_newline(f"{START_MARKER}\n{body}\n{END_MARKER}", newline)


def find_body_region(body: str, first_line: int = 1, path: str = "<card>") -> tuple[int, int] | None:
    """(start, end) offsets of the managed region in ``body`` (end excludes the end marker's line
    ending), None when there are no markers. Duplicate or unbalanced markers raise InputError;
    ``first_line`` is the card line the body starts on (for the message)."""
    lines = split_lines(body)
    markers = find_markers([ln.content for ln in lines])
    if not markers:
        return None
    problem = marker_problem(markers, first_line)
    if problem:
        if all(m.alone for m in markers):
            problem = f"kldcard markers must appear once each, start before end ({problem})"
        raise InputError(f"{path}: {problem}; kldcard replaces only one well-formed pair")
    start, end = lines[markers[0].index], lines[markers[1].index]
    return start.start, end.start + len(end.content)


def splice_body(body: str, section: str, newline: str, path: str = "<card>", first_line: int = 1) -> str:
    """``body`` with the managed region replaced or inserted (see the module docstring)."""
    region = region_text(section, newline)
    span = find_body_region(body, first_line, path)
    if span is not None:
        return body[: span[0]] + region + body[span[1] :]
    lines = split_lines(body)
    headings = []
    for i, ln in _unfenced_lines(lines):
        m = _HEADING_RE.match(ln.content)
        if m:
            title = (m.group(2) or "").strip().lower()
            headings.append((i, len(m.group(1)), title))
    evaluation = next((h for h in headings if h[1] == 2 and title_is(h[2], "evaluation")), None)
    nl = newline
    if evaluation is not None:
        # End of the Evaluation section: the next heading of level <= 2, or the end of the card.
        nxt = next((h for h in headings if h[0] > evaluation[0] and h[1] <= 2), None)
        return _insert_before(body, lines, nxt[0] if nxt else None, region + nl, nl)
    before = next((h for h in headings if h[1] == 2 and any(title_is(h[2], t) for t in INSERT_BEFORE)), None)
    block = EVALUATION_HEADING + nl + nl + region + nl
    return _insert_before(body, lines, before[0] if before else None, block, nl)


def title_is(title: str, name: str) -> bool:
    """Heading ``title`` names section ``name`` (ignoring case, '[optional]' and trailing colons)."""
    title = re.sub(r"\[optional\]", "", title, flags=re.I).strip().rstrip(":").strip()
    return title == name


def _insert_before(body: str, lines: list[Line], index: int | None, block: str, nl: str) -> str:
    """Insert ``block`` (ending with a line ending) before line ``index`` (None: at the end), keeping
    one blank line on either side without touching the user's existing lines."""
    if index is None:
        head, tail = body, ""
    else:
        head, tail = body[: lines[index].start], body[lines[index].start :]
    prefix = ""
    if head and not head.endswith(("\n", "\r")):
        prefix = nl
    if head.strip() and not _ends_with_blank_line(head + prefix):
        prefix += nl
    suffix = nl if tail else ""
    return head + prefix + block + suffix + tail


def _ends_with_blank_line(text: str) -> bool:
    return bool(re.search(r"(?:\r\n|\r|\n)[ \t]*(?:\r\n|\r|\n)\Z", text))


# ---------------------------------------------------------------------------------------------
# Front matter
# ---------------------------------------------------------------------------------------------


@dataclass
class _Edit:
    start: int
    end: int
    text: str


def _compose(yaml_text: str, path: str) -> yaml.Node | None:
    try:
        return compose(yaml_text)
    except yaml.YAMLError as exc:
        raise InputError(f"{path}: malformed YAML front matter: {getattr(exc, 'problem', None) or exc}") from None


def _line_start(text: str, i: int) -> int:
    return max(text.rfind("\n", 0, i), text.rfind("\r", 0, i)) + 1


def _range_end(text: str, end_index: int, floor: int) -> int:
    """End of a node's line range: the start of the line holding ``end_index`` when only indentation
    precedes it there, else the start of the following line; trailing blank and comment-only lines
    are left outside (they belong to what follows)."""
    ls = _line_start(text, end_index)
    if text[ls:end_index].strip():
        m = re.compile(r"\r\n|\r|\n").search(text, end_index)
        end = m.end() if m else len(text)
    else:
        end = ls
    lines = split_lines(text[floor:end], floor)
    while lines and (not lines[-1].content.strip() or lines[-1].content.lstrip().startswith("#")):
        lines.pop()
    return lines[-1].end if lines else floor


def _key_ranges(text: str, mapping: yaml.MappingNode) -> dict[str, tuple[int, int, yaml.Node]]:
    """Top-level key -> (start, end, value node) line ranges in ``text``."""
    out: dict[str, tuple[int, int, yaml.Node]] = {}
    items = mapping.value
    for n, (k, v) in enumerate(items):
        start = _line_start(text, k.start_mark.index)
        nxt = _line_start(text, items[n + 1][0].start_mark.index) if n + 1 < len(items) else len(text)
        end = _range_end(text, min(v.end_mark.index, nxt), start) if n + 1 == len(items) else _trim(text, start, nxt)
        if isinstance(k, yaml.ScalarNode):
            out[k.value] = (start, end, v)
    return out


def _trim(text: str, start: int, end: int) -> int:
    lines = split_lines(text[start:end], start)
    while lines and (not lines[-1].content.strip() or lines[-1].content.lstrip().startswith("#")):
        lines.pop()
    return lines[-1].end if lines else start


def _ends_line(text: str, newline: str) -> str:
    return "" if not text or text.endswith(("\n", "\r")) else newline


def splice_model_index(
    yaml_text: str, node: yaml.Node, data: Any, results: list[dict[str, Any]], newline: str, path: str
) -> list[_Edit]:
    """Edits replacing the KLD results inside an existing block-style ``model-index``."""
    where = f"{path}: model-index"
    if not isinstance(node, yaml.SequenceNode) or node.flow_style or not node.value:
        raise InputError(
            f"{where} is not a block-style list; kldcard edits block-style model-index only "
            f"(write it as '- name: ...' lines, or delete it and rerun)"
        )
    if len(node.value) != 1:
        raise InputError(f"{where} has {len(node.value)} entries; the Hub collapses them into one, keep exactly one")
    entry = node.value[0]
    if not isinstance(entry, yaml.MappingNode) or entry.flow_style:
        raise InputError(f"{where}[0] is not a block-style mapping (name:, results:)")
    results_node = next((v for k, v in entry.value if isinstance(k, yaml.ScalarNode) and k.value == "results"), None)
    key_col = entry.value[0][0].start_mark.column if entry.value else entry.start_mark.column
    if results_node is None:
        # No results key: append one at the end of the entry, items in PyYAML's indentless style.
        end = _range_end(yaml_text, entry.end_mark.index, _line_start(yaml_text, entry.start_mark.index))
        block = _indent(dump_yaml({"results": results}), key_col)
        return [_Edit(end, end, _ends_line(yaml_text[:end], newline) + _with_newline(block, newline))]
    if not isinstance(results_node, yaml.SequenceNode) or results_node.flow_style or not results_node.value:
        raise InputError(f"{where}[0].results is not a block-style list; write it as '- task: ...' items")
    existing = data[0]["results"]
    spans = []
    for n, item in enumerate(results_node.value):
        dash = yaml_text.rfind("-", 0, item.start_mark.index)
        start = _line_start(yaml_text, dash)
        if n + 1 < len(results_node.value):
            nxt_item = results_node.value[n + 1]
            nxt = _line_start(yaml_text, yaml_text.rfind("-", 0, nxt_item.start_mark.index))
            end = _trim(yaml_text, start, nxt)
        else:
            end = _range_end(yaml_text, item.end_mark.index, start)
        spans.append((start, end, dash - _line_start(yaml_text, dash)))
    dash_col = spans[0][2]
    block = _with_newline(_indent(dump_yaml(results), dash_col), newline)
    kld = [n for n, r in enumerate(existing) if is_kld_result(r)]
    if not kld:
        end = spans[-1][1]
        return [_Edit(end, end, _ends_line(yaml_text[:end], newline) + block)]
    edits = []
    for rank, n in enumerate(kld):
        start, end, _ = spans[n]
        edits.append(_Edit(start, end, block if rank == 0 else ""))
    return edits


def splice_front_matter(
    text: str,
    *,
    kld_yaml: str,
    results: list[dict[str, Any]] | None,
    model_name: str,
    ensure: dict[str, str] | None = None,
    path: str = "<card>",
) -> str:
    """``text`` with the ``kld_evaluation`` key, the model-index KLD results and any absent
    ``ensure`` keys (e.g. ``base_model``) written; front matter is created when there is none.
    ``results`` None leaves model-index as it is (or absent)."""
    newline = detect_newline(text)
    ensure = ensure or {}
    new_index = dump_yaml({MODEL_INDEX_KEY: [{"name": model_name, "results": results}]}) if results is not None else ""
    m = YAML_BLOCK.search(text)
    if m is None:
        head = dump_yaml(ensure) if ensure else ""
        block = "---\n" + head + kld_yaml + new_index + "---\n"
        sep = "\n" if text.strip() and not text.startswith(("\n", "\r")) else ""
        return _with_newline(block + sep, newline) + text
    yaml_text, base = m.group(2), m.start(2)
    root = _compose(yaml_text, path)
    edits: list[_Edit] = []
    appended = ""
    if root is None:
        keys: dict[str, tuple[int, int, yaml.Node]] = {}
        col = 0
    elif not isinstance(root, yaml.MappingNode) or root.flow_style:
        raise InputError(f"{path}: front matter must be a block-style YAML mapping (key: value lines)")
    else:
        keys = _key_ranges(yaml_text, root)
        col = root.value[0][0].start_mark.column if root.value else 0
    for key, value in ensure.items():
        if key not in keys:
            appended += dump_yaml({key: value})
    if "kld_evaluation" in keys:
        start, end, _ = keys["kld_evaluation"]
        edits.append(_Edit(start, end, _with_newline(_indent(kld_yaml, col), newline)))
    else:
        appended += kld_yaml
    if results is None:
        pass
    elif MODEL_INDEX_KEY in keys:
        data = load(yaml_text)[MODEL_INDEX_KEY]
        edits += splice_model_index(yaml_text, keys[MODEL_INDEX_KEY][2], data, results, newline, path)
    else:
        appended += new_index
    if appended:
        block = _with_newline(_indent(appended, col), newline).rstrip("\r\n")
        lead = _ends_line(yaml_text, newline) if yaml_text.strip() else ""
        edits.append(_Edit(len(yaml_text), len(yaml_text), lead + block))
    # Apply from the end so earlier offsets stay valid; at equal offsets the later edit goes first,
    # which keeps the edits in list order in the result.
    for _, e in sorted(enumerate(edits), key=lambda ie: (ie[1].start, ie[1].end, ie[0]), reverse=True):
        yaml_text = yaml_text[: e.start] + e.text + yaml_text[e.end :]
    # The YAML text inside the block never ends with a line ending (the closing '---' line's own
    # break belongs to the block delimiter), so a block spliced in at the end must not add one.
    yaml_text = yaml_text.rstrip("\r\n")
    return text[:base] + yaml_text + text[m.end(2) :]


def splice_block(text: str, kld_yaml: str, path: str = "<card>") -> str:
    """``text`` with only its ``kld_evaluation`` key written (replaced, or appended to the front
    matter, which is created when absent); every other byte stays (``kldcard lint --fix --scaffold``)."""
    return splice_front_matter(text, kld_yaml=kld_yaml, results=None, model_name="", path=path)
