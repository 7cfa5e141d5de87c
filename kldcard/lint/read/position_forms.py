"""D6 forms bound to the KL term by their structure (not a word anywhere in the text):

- a sample count written "n=256" in a sentence that names the KL ("KLD@n=256", "(gfx1100, kv-q8, n=256):
  ... −38% KLD"): the number of scored samples or windows.

(A count column beside a KL column is :data:`kldcard.lint.read.position_counts.COLUMN`.)

:func:`vetoed` drops a sample count in a sentence without a KL term ("n=3 seeds" of a training run).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.terms import KL_MENTION

I = re.IGNORECASE

KL = re.compile(KL_MENTION, I)
SAMPLE_N = re.compile(r"(?<![\w.])n\s*=\s*(\d{2,7})\b(?![.,]\d)(?!\s*(?:seeds?|runs?|repeats?|trials?|layers?|bits?|experts?|heads?)\b)", I)
PATTERNS = [SAMPLE_N]


def vetoed(sentence: str, m: re.Match[str]) -> bool:
    return not KL.search(sentence)


def read(span: str) -> dict[str, int]:
    m = SAMPLE_N.search(span)
    return {"count": int(m.group(1))} if m else {}
