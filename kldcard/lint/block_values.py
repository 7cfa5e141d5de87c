"""Reading a raw ``kld_evaluation`` block defensively, shared by the consistency checks.

The block may be incomplete or of the wrong shape: these helpers return None or an empty container for
what cannot be read, so each check simply skips it. A check yields ``(code, message, pointer)`` with an
RFC 6901 JSON pointer (:func:`ptr`).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

BLOCK_KEY = "kld_evaluation"
# float64 rounding on (near-)identical distributions can leave a mean a hair below zero; anything
# below this is a real sign error, not rounding.
NEGATIVE_TOLERANCE_NATS = 1e-12

Check = Iterator[tuple[str, str, str]]


def ptr(*parts: object) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def as_number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def is_impossible_divergence(number: float) -> bool:
    """A divergence mean that no correct computation yields: negative beyond rounding, or NaN (a 0·log 0
    taken as NaN, or an overflow upstream). +inf is possible (a candidate that gives a reference token
    probability 0, e.g. after top-k truncation) and is left to the truncation disclosure."""
    return number != number or number < -NEGATIVE_TOLERANCE_NATS


def as_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def as_dict(value: Any) -> dict[Any, Any]:
    return value if isinstance(value, dict) else {}


def as_list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def candidate_name(cand: dict[Any, Any], i: int) -> str:
    name = cand.get("name")
    return f"candidate {name!r}" if isinstance(name, str) else f"candidate #{i}"
