"""Structured checker: validate ``kld_evaluation`` and turn every schema error into a Finding.

Every pydantic error becomes one finding (KLD1xx for the disclosure it belongs to, KLD0xx for
structure); the consistency rules (:mod:`kldcard.lint.consistency`) then run on the raw mapping, so
an incomplete block still gets its consistency findings.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ValidationError

from kldcard import schema
from kldcard.card.document import Card
from kldcard.lint.consistency import check_consistency
from kldcard.lint.placeholders import todo_pointers
from kldcard.lint.findings import Finding
from kldcard.lint.registry import RULES

BLOCK_KEY = "kld_evaluation"

_PATTERN_MEANING = {
    r"^[0-9a-f]{64}$": "a lower-case hex sha256 (64 characters)",
    r"^[0-9a-f]{40}$": "a pinned 40-hex commit, not a branch or tag name",
    r"^https?://": "an http(s) URL",
    r"^[A-Za-z0-9_.\-]+$": "a dtype label such as bf16, f16, q8_0 or q4_k_m",
}


def escape(part: object) -> str:
    """One RFC 6901 reference token."""
    return str(part).replace("~", "~0").replace("/", "~1")


def pointer_of(*parts: object) -> str:
    return "".join("/" + escape(p) for p in parts)


def finding(card: Card, code: str, message: str, pointer: str, enabled: set[str] | None) -> Finding | None:
    """A Finding for ``code`` located at ``pointer`` (or None when the rule is not enabled)."""
    if enabled is not None and code not in enabled:
        return None
    message = one_line(message)
    if pointer.startswith("#L"):  # a body finding: a line in the Markdown, no JSON pointer
        line, col, pointer = int(pointer[2:]), 1, ""
    else:
        line, col = card.locate(pointer) if pointer else (1, 1)
    return Finding(card.path, line, col, code, RULES[code].severity, message, pointer)


def unique_sorted(findings: Iterable[Finding]) -> list[Finding]:
    """Findings without exact duplicates, ordered by file, line, column, rule, pointer, message.

    (``Finding`` equality ignores message and pointer, so a set would merge two different findings
    of one rule at one place, e.g. two missing keys of the same mapping.)
    """
    by_key = {(f.file, f.line, f.column, f.rule_id, f.pointer, f.message): f for f in findings}
    return [by_key[k] for k in sorted(by_key)]


def one_line(text: str) -> str:
    """``text`` with line breaks and other control characters escaped (keys can contain anything)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _resolve_pointer(raw: dict[str, Any], pointer: str) -> Any:
    node: Any = {BLOCK_KEY: raw}
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def check_structured(card: Card, enabled: set[str] | None = None) -> tuple[list[Finding], Any]:
    """Findings for the card's front matter, and the block for the prose checker.

    The second value is the validated :class:`~kldcard.schema.KldEvaluation` when the block is
    complete, the raw mapping when it is present but invalid (or a draft with TODO placeholders:
    then only KLD013 is reported), and None when there is no block.
    """
    out: list[Finding | None] = []
    raw = card.metadata.get(BLOCK_KEY)
    block: Any = None
    if BLOCK_KEY in card.metadata:
        if not isinstance(raw, dict):
            kind = "empty" if raw is None else f"a {_yaml_type(raw)}"
            out.append(
                finding(
                    card,
                    "KLD001",
                    f"kld_evaluation is {kind}, not a mapping of the nine disclosures",
                    pointer_of(BLOCK_KEY),
                    enabled,
                )
            )
        elif todo_pointers(raw):  # a draft (kldcard lint --fix --scaffold): its placeholders, nothing else
            for p in todo_pointers(raw, pointer_of(BLOCK_KEY)):
                shown = one_line(str(_resolve_pointer(raw, p)))[:120]
                out.append(finding(card, "KLD013", f"kld_evaluation placeholder {p}: {shown}", p, enabled))
            return unique_sorted(f for f in out if f is not None), raw
        else:
            block = raw
            try:
                block = schema.KldEvaluation.model_validate(raw, strict=True)
            except ValidationError as exc:
                out.extend(finding(card, c, m, p, enabled) for c, m, p in _errors_to_findings(exc, raw))
            except RecursionError:
                out.append(
                    finding(card, "KLD007", "kld_evaluation nests too deeply to validate", pointer_of(BLOCK_KEY), enabled)
                )
    # a compact block's candidates state only runtime_changes: the checks see the full runtime
    out.extend(finding(card, c, m, p, enabled) for c, m, p in check_consistency(card, schema.expand_runtime_changes(raw)))
    return unique_sorted(f for f in out if f is not None), block


# --------------------------------------------------------------------------------------------
# pydantic errors -> (code, message, pointer)
# --------------------------------------------------------------------------------------------


def _errors_to_findings(exc: ValidationError, raw: dict[str, Any]) -> Iterable[tuple[str, str, str]]:
    seen_unions: set[str] = set()
    for err in exc.errors(include_url=False):
        path, union_depth = _data_path(tuple(err["loc"]), raw)
        if union_depth is not None:
            # A union (e.g. evaluation_text.source: dataset or URL) reports every branch's errors;
            # one finding per union says it better than one per branch.
            union_path = path[:union_depth]
            key = pointer_of(*union_path)
            if key in seen_unions:
                continue
            seen_unions.add(key)
            code = _code_for(union_path, "union")
            yield code, _union_message(code, union_path, raw), pointer_of(BLOCK_KEY, *union_path)
            continue
        code = _code_for(path, err["type"])
        yield code, _message(code, path, err), pointer_of(BLOCK_KEY, *path)


def _data_path(loc: tuple[Any, ...], raw: Any) -> tuple[list[Any], int | None]:
    """The loc as a path into the data, with the union-branch tags pydantic inserts removed.

    Returns the path and, when a tag was removed, the length of the path up to the union, so that
    all branches of one union collapse into one finding.
    """
    path: list[Any] = []
    node = raw
    union_depth: int | None = None
    for part in loc:
        if isinstance(node, dict) and part in node:
            node = node[part]
            path.append(part)
        elif isinstance(node, list) and isinstance(part, int) and 0 <= part < len(node):
            node = node[part]
            path.append(part)
        elif isinstance(part, str) and _is_tag(part):
            if union_depth is None:
                union_depth = len(path)
        else:
            path.append(part)
            node = None
    return path, union_depth


_MODEL_NAMES = {
    name for name, obj in vars(schema).items() if isinstance(obj, type) and issubclass(obj, BaseModel)
}


def _is_tag(part: str) -> bool:
    return part in _MODEL_NAMES or "[" in part


def _code_for(path: list[Any], err_type: str) -> str:
    if err_type == "extra_forbidden":
        return "KLD002"
    if path[:1] == ["schema_version"]:
        return "KLD003"
    n = schema.disclosure_for_loc(tuple(path))
    if n is not None:
        return f"KLD{100 + n}"
    if len(path) == 3 and path[0] == "candidates" and path[2] == "results" and err_type == "missing":
        return "KLD006"
    return "KLD007"


def _dotted(path: list[Any]) -> str:
    out = BLOCK_KEY
    for p in path:
        out += f"[{p}]" if isinstance(p, int) else f".{p}"
    return out


def _message(code: str, path: list[Any], err: dict[str, Any]) -> str:
    typ = err["type"]
    where = _dotted(path[:-1]) if path else BLOCK_KEY
    field = path[-1] if path else BLOCK_KEY
    value = err.get("input")
    if typ == "missing":
        detail = f"`{field}` is missing from {where}"
    elif typ == "extra_forbidden":
        parent = _model_for(path[:-1])
        known = list(parent.model_fields) if parent else []
        close = difflib.get_close_matches(str(field), known, n=1)
        hint = f"; did you mean `{close[0]}`?" if close else (f"; known keys: {', '.join(known)}" if known else "")
        return f"unknown key `{field}` in {where}{hint}"
    elif typ == "value_error":
        detail = f"{_dotted(path)}: {str(err['msg']).removeprefix('Value error, ')}"
    elif typ == "string_pattern_mismatch":
        pattern = (err.get("ctx") or {}).get("pattern", "")
        meaning = _PATTERN_MEANING.get(pattern, f"a string matching {pattern}")
        detail = f"{_dotted(path)} must be {meaning}, got {_short(value)}"
    elif typ in ("float_type", "int_type", "float_parsing", "int_parsing") and isinstance(value, str) and _numeric(value):
        detail = (
            f"{_dotted(path)} is the string {_short(value)} (YAML 1.1 reads `1e-3` as text); "
            "write a plain decimal (0.001) or a dotted, signed exponent (1.0e-03)"
        )
    elif typ == "literal_error" and code == "KLD003":
        return f"schema_version {_short(value)} is not supported by this kldcard (supported: {schema.SCHEMA_VERSION})"
    else:
        msg = str(err["msg"])
        detail = f"{_dotted(path)}: {msg[0].lower() + msg[1:] if msg else typ}, got {_short(value)}"
    if code.startswith("KLD1"):
        title = schema.DISCLOSURES[int(code[3:]) - 100][0]
        return f"{title} incomplete: {detail}"
    return detail


def _union_message(code: str, path: list[Any], raw: Any) -> str:
    model = _model_for(path[:-1])
    field = model.model_fields.get(str(path[-1])) if model and path else None
    options = ""
    if field is not None:
        ann = field.annotation
        names = [getattr(a, "__name__", str(a)) for a in getattr(ann, "__args__", ())]
        options = " or ".join(names)
    value = _get(raw, path)
    what = f"{_dotted(path)} matches none of its forms ({options})" if options else f"{_dotted(path)} is invalid"
    if isinstance(value, dict):
        what += f"; it has keys {', '.join(map(str, value)) or '(none)'}"
    else:
        what += f", got {_short(value)}"
    if code.startswith("KLD1"):
        return f"{schema.DISCLOSURES[int(code[3:]) - 100][0]} incomplete: {what}"
    return what


def _model_for(path: list[Any]) -> type[BaseModel] | None:
    """The pydantic model class that describes the mapping at ``path`` (None when unknown)."""
    model: Any = schema.KldEvaluation
    for part in path:
        if isinstance(part, int):
            continue
        if model is None or not hasattr(model, "model_fields") or part not in model.model_fields:
            return None
        model = _inner_model(model.model_fields[part].annotation)
    return model if isinstance(model, type) and issubclass(model, BaseModel) else None


def _inner_model(ann: Any) -> Any:
    if isinstance(ann, type) and issubclass(ann, BaseModel):
        return ann
    for arg in getattr(ann, "__args__", ()):
        found = _inner_model(arg)
        if found is not None:
            return found
    return None


def _get(raw: Any, path: list[Any]) -> Any:
    for p in path:
        if isinstance(raw, dict):
            raw = raw.get(p)
        elif isinstance(raw, list) and isinstance(p, int) and 0 <= p < len(raw):
            raw = raw[p]
        else:
            return None
    return raw


def _numeric(text: str) -> bool:
    return re.fullmatch(r"\s*[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?\s*", text) is not None


def _short(value: Any) -> str:
    if isinstance(value, (dict, list)):
        return f"a {_yaml_type(value)}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _yaml_type(value: Any) -> str:
    return {
        dict: "mapping",
        list: "list",
        str: "string",
        bool: "boolean",
        int: "integer",
        float: "number",
    }.get(type(value), type(value).__name__)
