"""KLD320 for free-form cards: an interval that treats tokens as independent over chunked text.

Kept apart from the disclosure evidence (``evidence.py``): it is a finding about the uncertainty
model a card states, not a missing disclosure. A card qualifies when its prose gives an i.i.d.
interval (a "± SE" after a number, "standard error", "i.i.d.", a per-token bootstrap) and says the
text was scored in context windows (chunks of N tokens, ``-c N``, ``n_ctx``, the second half of each
chunk), unless it also names a block method (block / window / cluster bootstrap, effective sample
size), which accounts for the windows.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.scan import Text, finditer, search

__all__ = ["iid_interval_over_chunks", "iid_intervals_over_chunks"]

I = re.IGNORECASE
IID_INTERVAL = re.compile(
    r"±\s*[\d.]+(?:e-?\d+)?\s*\(?\s*(?:SE|SEM|std\.?\s*err\w*)\b|\bstandard error\b|\bi\.i\.d\.?|"
    r"\bper-token bootstrap\b|\bbootstrap(?:ped)? over (?:individual )?tokens\b",
    I,
)
CHUNKED = re.compile(
    r"\b\d{3,6}-token (?:chunks?|windows?|contexts?)\b|\bchunks? of \d{3,6}\b|\b\d+ chunks\b|"
    r"(?:^|\s)(?:-c|--ctx-size)\s+\d{3,6}\b|\bn_ctx\s*[=:]?\s*\d{3,6}\b|\bsecond half of each chunk\b",
    I,
)
BLOCK_METHOD = re.compile(
    r"\b(?:block|window|cluster|moving[- ]block|circular[- ]block)[- ]bootstrap\b|\beffective sample size\b|\bn_eff\b",
    I,
)


def iid_interval_over_chunks(body: str | Text) -> int | None:
    """Offset in the body of the first i.i.d. interval to flag, or None."""
    found = iid_intervals_over_chunks(body)
    return found[0] if found else None


def iid_intervals_over_chunks(body: str | Text) -> list[int]:
    """Offsets of every i.i.d. interval to flag (one finding per card, suppressed place by place)."""
    text = body if isinstance(body, Text) else Text(body)
    if search(BLOCK_METHOD, text) or not search(CHUNKED, text):
        return []
    return [m.start() for m in finditer(IID_INTERVAL, text)]
