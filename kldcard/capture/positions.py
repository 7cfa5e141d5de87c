"""Which token positions a capture stores (disclosure 6: sampled positions).

Position ``i`` is the distribution computed after feeding tokens ``0..i`` of its context window;
it predicts token ``i + 1``. Every scheme therefore keeps only positions whose next token is in
the text (``i <= n_tokens - 2``), and with context windows (``n_ctx``) only positions whose next
token is in the same window — the prediction a model can actually be scored on.

Schemes (the ``--positions`` spellings):

- ``all`` — every position.
- ``every:N`` / ``every:N@OFFSET`` — ``OFFSET, OFFSET+N, ...`` (``N`` defaults to 32, offset 0).
- ``list:1,5,9`` — an explicit list (strictly increasing after sorting; duplicates rejected).
- ``second-half`` — llama.cpp's ``llama-perplexity`` scheme: context windows of ``n_ctx`` tokens
  that do not overlap, only whole windows, and in each the positions ``n_ctx/2 .. n_ctx-2``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from kldcard.errors import UsageError

SCHEMES = ("all", "every-n", "explicit", "second-half")


@dataclass(frozen=True)
class PositionScheme:
    kind: str  # one of SCHEMES
    every_n: int | None = None
    offset: int = 0
    explicit: tuple[int, ...] = ()

    def describe(self) -> str:
        if self.kind == "every-n":
            return f"every {self.every_n} tokens from offset {self.offset}"
        if self.kind == "explicit":
            return f"{len(self.explicit)} explicit positions"
        if self.kind == "second-half":
            return "second half of each non-overlapping context window"
        return "all positions"

    def meta(self) -> dict[str, Any]:
        """The ``positions`` block of a capture manifest."""
        out: dict[str, Any] = {"scheme": self.kind}
        if self.kind == "every-n":
            out.update(every_n=self.every_n, offset=self.offset)
        if self.kind == "explicit":
            out["explicit"] = list(self.explicit)
        return out


def parse_positions(spec: str) -> PositionScheme:
    """Parse ``all``, ``every:32``, ``every:32@5``, ``list:1,5,9`` or ``second-half``."""
    s = spec.strip().lower()
    if s == "all":
        return PositionScheme("all")
    if s in ("second-half", "second_half", "llama-perplexity"):
        return PositionScheme("second-half")
    if s.startswith("every"):
        rest = s[len("every") :].lstrip(":=")
        n_str, _, off_str = rest.partition("@")
        try:
            n = int(n_str) if n_str else 32
            off = int(off_str) if off_str else 0
        except ValueError:
            raise UsageError(f"bad positions {spec!r}: expected every:N or every:N@OFFSET") from None
        if n < 1 or off < 0:
            raise UsageError(f"bad positions {spec!r}: N must be >= 1 and OFFSET >= 0")
        return PositionScheme("every-n", every_n=n, offset=off)
    if s.startswith("list:"):
        try:
            vals = [int(v) for v in s[5:].split(",") if v.strip()]
        except ValueError:
            raise UsageError(f"bad positions {spec!r}: expected list:1,5,9") from None
        if not vals or min(vals) < 0 or len(set(vals)) != len(vals):
            raise UsageError(f"bad positions {spec!r}: need distinct non-negative integers")
        return PositionScheme("explicit", explicit=tuple(sorted(vals)))
    raise UsageError(f"bad positions {spec!r}: use all, every:N[@OFFSET], list:I,J,... or second-half")


@dataclass(frozen=True)
class Windows:
    """Non-overlapping context windows ``[starts[k], starts[k] + lengths[k])`` over the tokens."""

    n_ctx: int
    starts: tuple[int, ...]
    lengths: tuple[int, ...]

    @property
    def n_windows(self) -> int:
        return len(self.starts)


def make_windows(n_tokens: int, n_ctx: int | None, scheme: PositionScheme) -> Windows:
    """Split the tokens into context windows. ``n_ctx=None`` means one window over the whole text.
    ``second-half`` uses only whole windows (as llama-perplexity does)."""
    if n_tokens < 2:
        raise UsageError(f"the text has {n_tokens} token(s); at least 2 are needed")
    if scheme.kind == "second-half":
        if not n_ctx:
            raise UsageError("--positions second-half needs --n-ctx (the window length)")
        if n_ctx < 4:
            raise UsageError("--n-ctx must be at least 4 for second-half positions")
        n_full = n_tokens // n_ctx
        if n_full == 0:
            raise UsageError(f"second-half needs at least one whole window: {n_tokens} tokens < n_ctx {n_ctx}")
        return Windows(n_ctx, tuple(k * n_ctx for k in range(n_full)), (n_ctx,) * n_full)
    if not n_ctx or n_ctx >= n_tokens:
        return Windows(n_tokens, (0,), (n_tokens,))
    if n_ctx < 2:
        raise UsageError("--n-ctx must be at least 2")
    starts = tuple(range(0, n_tokens, n_ctx))
    return Windows(n_ctx, starts, tuple(min(n_ctx, n_tokens - s) for s in starts))


def select_positions(scheme: PositionScheme, windows: Windows) -> np.ndarray:
    """The sorted int64 positions to capture (global token indices)."""
    scorable = np.concatenate(
        [np.arange(s, s + n - 1, dtype=np.int64) for s, n in zip(windows.starts, windows.lengths)]
    )
    if scheme.kind == "all":
        return scorable
    if scheme.kind == "every-n":
        assert scheme.every_n is not None
        return scorable[(scorable >= scheme.offset) & ((scorable - scheme.offset) % scheme.every_n == 0)]
    if scheme.kind == "second-half":
        half = windows.n_ctx // 2
        return np.concatenate(
            [np.arange(s + half, s + n - 1, dtype=np.int64) for s, n in zip(windows.starts, windows.lengths)]
        )
    wanted = np.asarray(scheme.explicit, dtype=np.int64)
    bad = wanted[~np.isin(wanted, scorable)]
    if bad.size:
        raise UsageError(
            f"explicit position {int(bad[0])} cannot be scored: positions must be < n_tokens - 1 "
            f"and not the last token of a context window"
        )
    return wanted
