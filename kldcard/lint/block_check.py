"""Accept a valid ``kld_evaluation`` block without pydantic.

Importing pydantic and building the schema's models is about half of a one-card ``kldcard lint`` run,
and a published card's block is almost always valid. So the linter first asks this module, which
walks the block against the generated JSON Schema (``schemas/kld-evaluation.schema.json``, itself
generated from :mod:`kldcard.schema` and drift-checked) and applies the cross-field rules of
:mod:`kldcard.schema_rules` wherever the schema refers to their model. Only a block this module does
not accept goes to pydantic, whose errors become the findings.

The contract is one-sided and conservative: :func:`accepts` returning True must imply that pydantic's
strict validation succeeds (a property test checks it on mutated blocks); anything it is unsure of
(a keyword it does not know, a key that is not a string, an integer too large for 64 bits, a newline
where a pattern's ``$`` would differ between Python's and pydantic's regex engines) makes it decline,
and pydantic decides.
"""

from __future__ import annotations

import json
import math
import re
from functools import cache
from typing import Any

from kldcard.resources import schema_dir
from kldcard.schema_rules import CROSS_FIELD, expand_runtime_changes

SCHEMA_FILE = "kld-evaluation.schema.json"
# Keywords that only annotate (they never reject a value).
ANNOTATIONS = frozenset({"title", "description", "default", "examples", "$schema", "$id", "$defs"})
KNOWN = ANNOTATIONS | {
    "type", "properties", "required", "additionalProperties", "items", "anyOf", "$ref", "enum", "const",
    "pattern", "minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum", "minItems", "maxItems", "minLength",
}
INT64 = 2**63
DEPTH = 64  # deeper than any valid block; deeper input is pydantic's to refuse


class Declined(Exception):
    """The value is not one this validator accepts (pydantic will say why, or accept it)."""


@cache
def _schema() -> dict[str, Any]:
    schema = json.loads((schema_dir() / SCHEMA_FILE).read_text(encoding="utf-8"))
    unknown = _unknown_keywords(schema)
    if unknown:  # a new kind of constraint in the models: teach this module before trusting it
        raise RuntimeError(f"{SCHEMA_FILE} uses keywords block_check does not know: {sorted(unknown)}")
    return schema


def _unknown_keywords(node: Any) -> set[str]:
    out: set[str] = set()
    if isinstance(node, dict):
        for key, value in node.items():
            if key not in KNOWN:
                out.add(key)
            if key in ("properties", "$defs"):
                for sub in value.values():
                    out |= _unknown_keywords(sub)
            elif key not in ("default", "examples", "enum", "const"):
                out |= _unknown_keywords(value)
    elif isinstance(node, list):
        for item in node:
            out |= _unknown_keywords(item)
    return out


def accepts(raw: Any) -> bool:
    """True when ``raw`` (the block as YAML read it) is a valid ``kld_evaluation`` block; False when
    this validator declines to say so (then validate with :class:`kldcard.schema.KldEvaluation`)."""
    schema = _schema()
    try:
        _check(expand_runtime_changes(raw), schema, schema["$defs"], 0)
    except (Declined, RecursionError):
        return False
    return True


def _check(value: Any, node: dict[str, Any], defs: dict[str, Any], depth: int) -> None:
    if depth > DEPTH:
        raise Declined
    if "$ref" in node:
        name = node["$ref"].removeprefix("#/$defs/")
        _check(value, defs[name], defs, depth + 1)
        rule = CROSS_FIELD.get(name)
        if rule is not None and rule(value) is not None:
            raise Declined
    if "anyOf" in node:
        for branch in node["anyOf"]:
            try:
                _check(value, branch, defs, depth + 1)
                break
            except Declined:
                continue
        else:
            raise Declined
    if "type" in node:
        _type(value, node["type"])
    if "const" in node and not _same(value, node["const"]):
        raise Declined
    if "enum" in node and not any(_same(value, option) for option in node["enum"]):
        raise Declined
    if isinstance(value, str):
        _string(value, node)
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        _number(value, node)
    elif isinstance(value, list):
        _array(value, node, defs, depth)
    elif isinstance(value, dict):
        _object(value, node, defs, depth)


def _same(value: Any, option: Any) -> bool:
    """JSON equality with types kept apart (True is not 1, 1.0 is not 1)."""
    return type(value) is type(option) and value == option


def _type(value: Any, kind: str | list[str]) -> None:
    kinds = [kind] if isinstance(kind, str) else kind
    for k in kinds:
        if k == "null" and value is None:
            return
        if k == "boolean" and isinstance(value, bool):
            return
        if k == "string" and type(value) is str:
            return
        if k == "integer" and type(value) is int:
            if abs(value) >= INT64:
                raise Declined
            return
        if k == "number" and type(value) in (int, float):
            if type(value) is int and abs(value) >= INT64:
                raise Declined
            return
        if k == "array" and type(value) is list:
            return
        if k == "object" and type(value) is dict:
            return
    raise Declined


def _string(value: str, node: dict[str, Any]) -> None:
    if len(value) < node.get("minLength", 0):
        raise Declined
    pattern = node.get("pattern")
    if pattern is not None and ("\n" in value or "\r" in value or re.search(pattern, value) is None):
        raise Declined


def _number(value: float, node: dict[str, Any]) -> None:
    if isinstance(value, float) and math.isnan(value) and any(
        k in node for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
    ):
        raise Declined
    if "minimum" in node and not value >= node["minimum"]:
        raise Declined
    if "maximum" in node and not value <= node["maximum"]:
        raise Declined
    if "exclusiveMinimum" in node and not value > node["exclusiveMinimum"]:
        raise Declined
    if "exclusiveMaximum" in node and not value < node["exclusiveMaximum"]:
        raise Declined


def _array(value: list[Any], node: dict[str, Any], defs: dict[str, Any], depth: int) -> None:
    if len(value) < node.get("minItems", 0) or len(value) > node.get("maxItems", math.inf):
        raise Declined
    if "items" in node:
        for item in value:
            _check(item, node["items"], defs, depth + 1)


def _object(value: dict[Any, Any], node: dict[str, Any], defs: dict[str, Any], depth: int) -> None:
    if any(type(k) is not str for k in value):
        raise Declined
    props = node.get("properties", {})
    if any(k not in value for k in node.get("required", ())):
        raise Declined
    extra = node.get("additionalProperties", True)
    for key, item in value.items():
        if key in props:
            _check(item, props[key], defs, depth + 1)
        elif extra is False:
            raise Declined
        elif isinstance(extra, dict):
            _check(item, extra, defs, depth + 1)
