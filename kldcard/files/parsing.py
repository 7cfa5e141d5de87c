"""JSON and TOML inputs read within bounds: nesting, float64 range and integer length, each failure
one :class:`~kldcard.errors.InputError` line (exit 2)."""

from __future__ import annotations

import sys
from typing import Any

from kldcard.errors import InputError

# JSON and TOML inputs (baselines, configs, results) nest a few levels; the standard parsers recurse
# per level (RecursionError near 1,000) and read "1e400" as inf and a 5,000-digit integer as a
# ValueError of their own. All three are one InputError line here.
MAX_NESTING = 100


def _nesting(text: str, toml: bool) -> int:
    """The deepest bracket nesting of ``text`` outside strings (and, for TOML, comments)."""
    depth = deepest = i = 0
    n = len(text)
    while i < n:
        c = text[i]
        if c in "[{":
            depth += 1
            deepest = max(deepest, depth)
        elif c in "]}":
            depth -= 1
        elif c == '"' or (toml and c == "'"):
            quote = text[i:i + 3] if toml and text.startswith(c * 3, i) else c
            i += len(quote)
            while i < n and not text.startswith(quote, i):
                i += 2 if (text[i] == "\\" and c == '"') else 1
            i += len(quote) - 1
        elif toml and c == "#":
            while i < n and text[i] != "\n":
                i += 1
        i += 1
    return deepest


def _finite(spelling: str) -> float:
    value = float(spelling)
    if value in (float("inf"), float("-inf")) or value != value:
        raise ValueError(f"the number {spelling[:40]} is not finite in float64")
    return value


def _number_problem(exc: Exception) -> str:
    if isinstance(exc, RecursionError):
        return f"nests too deeply (over {MAX_NESTING} levels)"
    if "integer string conversion" in str(exc):  # Python's own limit, with advice meant for programmers
        return f"an integer has over {sys.get_int_max_str_digits():,} digits"
    return str(exc)[:200]


def loads_json(text: str, where: str) -> Any:
    """JSON within :data:`MAX_NESTING` levels and float64 range, or one InputError line."""
    import json

    if _nesting(text, toml=False) > MAX_NESTING:
        raise InputError(f"{where}: nests too deeply (over {MAX_NESTING} levels)")
    try:
        return json.loads(text, parse_float=_finite, parse_constant=_finite)
    except json.JSONDecodeError as exc:
        raise InputError(f"{where}: not valid JSON: {exc}") from None
    except (ValueError, RecursionError) as exc:  # 1e400, NaN, a 5,000-digit integer
        raise InputError(f"{where}: unusable JSON: {_number_problem(exc)}") from None


def loads_toml(text: str, where: str) -> dict[str, Any]:
    """TOML within :data:`MAX_NESTING` levels and float64 range, or one InputError line."""
    import tomllib

    if _nesting(text, toml=True) > MAX_NESTING:
        raise InputError(f"{where}: nests too deeply (over {MAX_NESTING} levels)")
    try:
        return tomllib.loads(text, parse_float=_finite)
    except tomllib.TOMLDecodeError as exc:
        raise InputError(f"{where}: invalid TOML: {exc}") from None
    except (ValueError, RecursionError) as exc:
        raise InputError(f"{where}: unusable TOML: {_number_problem(exc)}") from None
