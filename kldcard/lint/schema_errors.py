"""A pydantic validation error of the ``kld_evaluation`` block as findings: (code, message, pointer).

Loaded only for a block that :mod:`kldcard.lint.block_check` does not accept: pydantic and the schema's
models cost about half of a one-card lint, and a valid block never needs them.
"""

from __future__ import annotations

import difflib
import re
from collections.abc import Iterable
from typing import Any

from pydantic import BaseModel, ValidationError

from kldcard import schema
from kldcard.lint.pointers import BLOCK_KEY, pointer_of, yaml_type

_PATTERN_MEANING = {
    r"^[0-9a-f]{64}$": "a lower-case hex sha256 (64 characters)",
    r"^[0-9a-f]{40}$": "a pinned 40-hex commit, not a branch or tag name",
    r"^https?://": "an http(s) URL",
    r"^[A-Za-z0-9_.\-]+$": "a dtype label such as bf16, f16, q8_0 or q4_k_m",
}


def validation_findings(raw: dict[str, Any]) -> list[tuple[str, str, str]]:
    """(code, message, pointer) of every way ``raw`` fails :class:`~kldcard.schema.KldEvaluation`
    (empty when it validates)."""
    try:
        schema.KldEvaluation.model_validate(raw, strict=True)
    except ValidationError as exc:
        return list(_errors_to_findings(exc, raw))
    except RecursionError:
        return [("KLD007", "kld_evaluation nests too deeply to validate", pointer_of(BLOCK_KEY))]
    return []


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
        return f"a {yaml_type(value)}"
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."
