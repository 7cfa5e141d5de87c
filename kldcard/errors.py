"""Typed errors. Each carries data and renders as one line that names the fix.

The CLI maps every :class:`KldcardError` to ``kldcard: error: <message>`` and its ``exit_code``
(2 for unusable input or usage); a traceback is shown only with ``--debug``.
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, the Unicode line and paragraph separators, and the bidirectional
# overrides: none of them may reach a terminal or a CI log from a card, a path or a key (a newline
# in a front-matter key would start a "::error" workflow command line in a GitHub Actions log).
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` with every control character spelled as its Python escape (``\\n``, ``\\x1b``,
    ``\\u2028``): what text reporters and error lines show of names and values they did not write."""
    return _CONTROL.sub(lambda m: m.group().encode("unicode_escape").decode("ascii"), text)


_RAW_IN_JSON = re.compile("[\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]")


def json_printable(text: str) -> str:
    """JSON text (from ``json.dumps(..., ensure_ascii=False)``, which escapes only C0 controls) with
    DEL, C1, the line separators and bidi overrides written as ``\\uXXXX`` escapes: the same data
    for a JSON reader, no raw control character for a terminal or log."""
    return _RAW_IN_JSON.sub(lambda m: f"\\u{ord(m.group()):04x}", text)


class KldcardError(Exception):
    """Base class. ``exit_code`` is what the CLI exits with."""

    exit_code = 2

    def __str__(self) -> str:  # one line, always, with no control character from the input it names
        return printable(" ".join(super().__str__().split()))


class InputError(KldcardError):
    """Input that cannot be used: missing, unreadable, malformed, or of the wrong shape."""


class UsageError(KldcardError):
    """A command line or configuration that cannot be acted on."""


class MissingExtra(KldcardError, ImportError):
    """An optional part of kldcard is not installed; the message names the extra that brings it.
    Also an ImportError, so ``except ImportError`` around an optional import keeps working."""

    def __init__(self, feature: str, extra: str, missing: str | None = None):
        self.feature, self.extra, self.missing = feature, extra, missing
        what = f" (cannot import {missing})" if missing else ""
        super().__init__(f"{feature} is not installed{what}; install it with: pip install 'kldcard[{extra}]'")


class EngineNotInstalled(MissingExtra):
    """An optional engine is missing; the message names the extra to install."""

    def __init__(self, engine: str, extra: str, missing: str | None = None):
        self.engine = engine
        super().__init__(f"engine {engine!r}", extra, missing)


class TokenMismatch(KldcardError):
    """Two token-id sequences differ; ``position`` is the first differing index."""

    def __init__(self, position: int, a: object, b: object, detail: str = ""):
        self.position, self.a, self.b = position, a, b
        extra = f": {detail}" if detail else ""
        super().__init__(f"token ids differ at position {position}: {a!r} vs {b!r}{extra}")


class CaptureMismatch(KldcardError):
    """Two captures cannot be compared (tokens, positions or vocabulary differ)."""


class CorruptCapture(KldcardError):
    """A capture on disk fails its size or checksum verification."""


class NonFiniteLogits(InputError):
    """NaN or +inf logits (or a row with no finite logit); ``positions`` lists where."""

    def __init__(self, side: str, positions: list[int], total: int | None = None):
        self.side, self.positions = side, list(positions)
        total = len(self.positions) if total is None else total
        shown = ", ".join(str(p) for p in self.positions[:10]) + (", ..." if total > 10 else "")
        super().__init__(
            f"{side} capture has NaN or +inf logits (or no finite logit) at {total} position(s): {shown}; "
            "-inf (masked) logits are allowed, NaN/+inf are not"
        )
