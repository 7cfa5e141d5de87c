"""KLD numbers listed one after another (issue 28, claim detection): after a KLD number of a sentence, the numbers
that continue its list, each with a short label of its own, are KLD numbers too, also where the list wraps to the
next line (R3): "... KLD 0.283772 for IQ3_XXS, 0.049294 for Q4_K_XL, and 0.019007 for Q6_K_XL", "shifts: Q3_K_M
+0.0015, IQ3_XS +0.0033, MIXED+fc +0.0038", "(8-bit 0.0028, UD-6bit 0.0037, UD-4bit 0.0227)". A list step is a
comma (or "、", "，") with at most a label on either side: no other metric (nor one right after the number), no clause break (";", ":"), no
paragraph break, at most MAX_STEP characters. Samples in tests/test_lint_claim_detection.py."""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from typing import Any

MAX_STEP = 32
AFTER = 20  # characters after a listed number in which another metric's name makes it that metric's
STEP = re.compile(r"^[^;:\n]*?[,，、]\s*(?:and\s+|or\s+|y\s+|et\s+|e\s+|und\s+)?[^;:,，、]*$|^[^;:,，、]*[,，、][^;:]*\n[^;:,，、]*$")


def listed(sentence: str, start: int, candidates: list[Any], kept_numbers: list[Any], other: re.Pattern[str]) -> list[Any]:
    """``kept_numbers`` and the ``candidates`` that continue a list from one of them (in order)."""
    kept = {n.offset for n in kept_numbers}
    previous = None
    for n in candidates:
        if previous is not None and previous.offset in kept and n.offset not in kept:
            gap = sentence[previous.offset + len(previous.text) - start : n.offset - start]
            end = n.offset + len(n.text) - start
            after = sentence[end : end + AFTER]  # "+3.1 pt top-1 agreement": the number is the other metric's
            if len(gap) <= MAX_STEP and STEP.match(gap) and not other.search(gap) and not other.search(after) and "\n\n" not in gap:
                kept.add(n.offset)
        previous = n
    return [n for n in candidates if n.offset in kept]
