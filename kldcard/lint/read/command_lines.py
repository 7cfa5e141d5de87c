"""A shell command written over several lines, each but the last ending in a backslash, is one statement.

The sentence splitter ends a "sentence" at each line of such a command, so a veto that reads the sentence of
``--n-samples 8`` sees only that line, not the ``measure_..._kl.py`` that names the measurement two lines above
it. :func:`span` gives the whole command around a match (the readers of D3, D4 and D6 use it).
"""

from __future__ import annotations


def _continued(text: str, line_end: int) -> bool:
    return text[:line_end].rstrip(" \t").endswith("\\")


def span(text: str, start: int, end: int | None = None) -> tuple[int, int]:
    """Start and end of the lines joined by backslashes that hold ``text[start:end]`` (a single line when the
    command is not continued)."""
    end = start if end is None else end
    lo = text.rfind("\n", 0, start) + 1
    while lo > 1 and _continued(text, lo - 1):
        lo = text.rfind("\n", 0, lo - 1) + 1
    hi = end
    while True:
        nl = text.find("\n", hi)
        if nl < 0:
            return lo, len(text)
        if not _continued(text, nl):
            return lo, nl
        hi = nl + 1
