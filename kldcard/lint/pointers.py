"""JSON pointers into a card's front matter, and the YAML names of Python types (for messages)."""

from __future__ import annotations

from typing import Any

BLOCK_KEY = "kld_evaluation"


def escape(part: object) -> str:
    """One RFC 6901 reference token."""
    return str(part).replace("~", "~0").replace("/", "~1")


def pointer_of(*parts: object) -> str:
    return "".join("/" + escape(p) for p in parts)


def yaml_type(value: Any) -> str:
    """What YAML calls the type of ``value`` ("mapping", "list", "string", ...)."""
    return {
        dict: "mapping",
        list: "list",
        str: "string",
        bool: "boolean",
        int: "integer",
        float: "number",
    }.get(type(value), type(value).__name__)
