"""Safe, mechanical card fixes as text edits (``kldcard lint --fix`` / ``--diff``).

Each fix replaces one span of the card's text and leaves every other byte alone (the splice
machinery's guarantee). A fix never invents a disclosure: it respells a number, copies what the
card's own ``kld_evaluation`` block says into ``model-index``, or respells / moves a section marker.

- :func:`exponent_fixes` — YAML 1.1 exponent values (``1e-3`` loads as a *string* in PyYAML):
  ``1e-3`` → ``1.0e-03``, the same float under YAML 1.1 and 1.2;
- :func:`model_index_fix` — the KLD results of ``model-index`` regenerated from the block
  (:mod:`kldcard.card.model_index`, what ``kldcard render`` writes), when the block validates;
- :func:`marker_fixes` — misspelled section markers (``<!-- kldcard: end -->``, ``kldcard:begin``)
  respelled, a marker sharing its line moved onto its own line, a marker repeated on consecutive
  lines dropped; applied only when the markers are balanced afterwards (:mod:`kldcard.card.regions`).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from collections.abc import Iterable
from dataclasses import dataclass

import yaml

from kldcard.card.document import YAML_BLOCK, detect_newline
from kldcard.card.regions import (
    END_MARKER,
    KLD_KEY,
    KLD_METRIC,
    MODEL_INDEX_KEY,
    START_MARKER,
    fenced,
    find_markers,
    marker_problem,
    near_miss_markers,
)
from kldcard.card.splice import splice_model_index, split_lines
from kldcard.card.yaml import compose, load, loads_as_yaml11_float
from kldcard.errors import InputError

_EXPONENT = re.compile(r"^([-+]?)(\d+\.?\d*|\.\d+)[eE]([-+]?)(\d+)$")
_NEWLINE = re.compile(r"\r\n|\r|\n")


@dataclass(frozen=True)
class Fix:
    kind: str  # "yaml11-exponent" | "model-index" | "section-marker"
    start: int  # offsets into the card text
    end: int
    replacement: str
    line: int  # 1-based first line
    description: str
    pointer: str = ""  # front-matter subtree it repairs ("" for body fixes)


def respell_exponent(text: str) -> str | None:
    """``1e-3`` → ``1.0e-03`` (same value; a float in YAML 1.1 and 1.2), None when not an exponent."""
    m = _EXPONENT.match(text)
    if not m:
        return None
    sign, mant, esign, digits = m.groups()
    mant = ("0" + mant) if mant.startswith(".") else mant
    mant = mant + "0" if mant.endswith(".") else mant if "." in mant else mant + ".0"
    out = f"{sign}{mant}e{esign or '+'}{int(digits):02d}"
    if not loads_as_yaml11_float(out) or float(out) != float(text):  # pragma: no cover - the regex guarantees both
        return None
    return out


def _line_of(text: str, offset: int) -> int:
    return len(_NEWLINE.findall(text, 0, offset)) + 1


def _walk(node: yaml.Node, pointer: str) -> Iterable[tuple[str, yaml.Node]]:
    yield pointer, node
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode):
                yield from _walk(v, f"{pointer}/{k.value.replace('~', '~0').replace('/', '~1')}")
    elif isinstance(node, yaml.SequenceNode):
        for i, v in enumerate(node.value):
            yield from _walk(v, f"{pointer}/{i}")


def _front_matter(text: str) -> tuple[str, int, yaml.Node | None] | None:
    m = YAML_BLOCK.search(text)
    if m is None:
        return None
    try:
        return m.group(2), m.start(2), compose(m.group(2))
    except yaml.YAMLError:
        return None


def exponent_fixes(text: str, pointers: set[str]) -> list[Fix]:
    """Respell the plain (unquoted) exponent scalars at ``pointers`` that YAML 1.1 loads as strings."""
    fm = _front_matter(text)
    if fm is None or fm[2] is None:
        return []
    _, base, root = fm
    out = []
    for pointer, node in _walk(root, ""):
        if pointer not in pointers or not isinstance(node, yaml.ScalarNode) or node.style is not None:
            continue
        if node.tag != "tag:yaml.org,2002:str":
            continue
        new = respell_exponent(node.value)
        if new is not None:
            start = base + node.start_mark.index
            out.append(Fix("yaml11-exponent", start, base + node.end_mark.index, new, _line_of(text, start), f"{node.value} -> {new} (a float in YAML 1.1 too)", pointer))
    return out


def exponent_pointers(text: str) -> set[str]:
    """Pointers of exponent scalars kldcard may respell: under kld_evaluation and KLD metric values."""
    fm = _front_matter(text)
    if fm is None or fm[2] is None:
        return set()
    data = load(fm[0]) or {}
    out = set()
    for pointer, node in _walk(fm[2], ""):
        if isinstance(node, yaml.ScalarNode) and _EXPONENT.match(node.value):
            parts = pointer.split("/")
            if parts[1:2] == [KLD_KEY]:
                out.add(pointer)
            elif parts[1:2] == [MODEL_INDEX_KEY] and parts[-1] == "value":
                metric = _get(data, parts[1:-1])
                if isinstance(metric, dict) and str(metric.get("type", "")).startswith(KLD_METRIC):
                    out.add(pointer)
    return out


def _get(data: object, parts: list[str]) -> object:
    for p in parts:
        if isinstance(data, dict):
            data = data.get(p)
        elif isinstance(data, list) and p.isdigit() and int(p) < len(data):
            data = data[int(p)]
        else:
            return None
    return data


def model_index_fix(text: str, path: str = "<card>") -> list[Fix]:
    """The model-index KLD results regenerated from the card's own, valid ``kld_evaluation`` block
    (nothing when the block is incomplete: a fix never invents a disclosure)."""
    fm = _front_matter(text)
    if fm is None or not isinstance(fm[2], yaml.MappingNode):
        return []
    yaml_text, base, root = fm
    data = load(yaml_text)
    if not isinstance(data, dict) or MODEL_INDEX_KEY not in data or not isinstance(data.get(KLD_KEY), dict):
        return []
    # Loaded here, not at the top: pydantic and the schema's models are half of a one-card lint's run,
    # and only a card whose model-index disagrees with its block gets this far.
    from pydantic import ValidationError

    from kldcard.card.model_index import model_index_results
    from kldcard.schema import KldEvaluation

    try:
        ev = KldEvaluation.model_validate(data[KLD_KEY], strict=True)
        node = next(v for k, v in root.value if isinstance(k, yaml.ScalarNode) and k.value == MODEL_INDEX_KEY)
        edits = splice_model_index(yaml_text, node, data[MODEL_INDEX_KEY], model_index_results(ev), detect_newline(text), path)
    except (ValidationError, InputError, KeyError, IndexError, TypeError, StopIteration):
        return []
    return [
        Fix("model-index", base + e.start, base + e.end, e.text, _line_of(text, base + e.start), "model-index KLD results regenerated from kld_evaluation", f"/{MODEL_INDEX_KEY}")
        for e in edits
    ]


def marker_fixes(text: str, body_start: int) -> list[Fix]:
    """Marker repairs in the body (which starts at offset ``body_start``), all or nothing."""
    lines = split_lines(text[body_start:], body_start)
    contents = [ln.content for ln in lines]
    code = fenced(contents)
    fixes: list[Fix] = []
    fixed = list(contents)
    seen: dict[str, int] = {}
    for i, ln in enumerate(lines):
        if code[i]:
            seen.clear()
            continue
        if not ln.content.strip():
            continue
        markers = find_markers([ln.content])
        miss = near_miss_markers([ln.content])
        if miss:
            kind = miss[0][1]
            new = ln.content[: len(ln.content) - len(ln.content.lstrip(" "))] + (START_MARKER if kind == "start" else END_MARKER)
            fixes.append(Fix("section-marker", ln.start, ln.start + len(ln.content), new, 0, f"misspelled marker respelled {new.strip()}"))
            fixed[i] = new
        elif markers and not markers[0].alone and len(markers) == 1:
            # `text <!-- kldcard:end -->`: the marker onto its own line, the text kept as it is
            mm = re.search(r"<!--[ \t]*kldcard:(?:start|end)\b.*?-->", ln.content)
            if mm is None or ln.content[mm.end() :].strip() and ln.content[: mm.start()].strip():
                continue
            nl = detect_newline(text)
            before, marker, after = ln.content[: mm.start()].rstrip(), mm.group(0), ln.content[mm.end() :].strip()
            new = f"{before}{nl}{marker}" if before else f"{marker}{nl}{after}"
            fixes.append(Fix("section-marker", ln.start, ln.start + len(ln.content), new, 0, "marker moved onto a line of its own"))
            fixed[i : i + 1] = [before, marker] if before else [marker, after]
        elif markers and markers[0].alone:
            kind = markers[0].kind
            prev = seen.get(kind)
            if prev is not None and all(not contents[j].strip() for j in range(prev + 1, i)):
                # the same marker twice in a row (blank lines between): drop the repeat and its blank lines
                start = lines[prev].end
                fixes.append(Fix("section-marker", start, ln.end, "", 0, f"repeated kldcard:{kind} marker removed"))
                fixed[i] = ""
            seen[kind] = i
            continue
        seen.clear()
    if not fixes or marker_problem(find_markers(fixed)) is not None:
        return []
    return [Fix(f.kind, f.start, f.end, f.replacement, _line_of(text, f.start), f.description) for f in fixes]


def apply_fixes(text: str, fixes: list[Fix]) -> str:
    """``text`` with ``fixes`` applied (from the end, so offsets stay valid); overlapping fixes
    are a programming error."""
    out = text
    last = len(text) + 1
    for f in sorted(fixes, key=lambda f: (f.start, f.end), reverse=True):
        if f.end > last:
            raise ValueError(f"overlapping fixes at offset {f.start}")
        out = out[: f.start] + f.replacement + out[f.end :]
        last = f.start
    return out
