"""D6 forms bound to the KL term by their structure (not a word anywhere in the text):

- a sample count written "n=256" in a sentence that names the KL ("KLD@n=256", "(gfx1100, kv-q8, n=256):
  ... −38% KLD"): the number of scored samples or windows;
- a table whose header puts a count column (positions, tokens, chunks, windows, samples) beside a KL
  column ("| positions | KLD mean (nats) | KLD max |"): each row's count is the positions scored.

:func:`vetoed` drops a sample count in a sentence without a KL term ("n=3 seeds" of a training run).
"""

from __future__ import annotations

import re

I = re.IGNORECASE

KL = re.compile(r"(?<![A-Za-z])(?:KLD?|D_?KL)(?![A-Za-z])|KL[- ]?div|Kullback|divergen|ダイバージェンス|散度", I)
SAMPLE_N = re.compile(r"(?<![\w.])n\s*=\s*(\d{2,7})\b(?![.,]\d)(?!\s*(?:seeds?|runs?|repeats?|trials?|layers?|bits?|experts?|heads?)\b)", I)
COUNT_COLUMN = r"\**(?:positions?|(?:scored\s+)?tokens(?:\s+scored)?|chunks|windows|samples|n)\**(?:\s*\([^)|\n]{0,20}\))?"
COLUMN = re.compile(
    r"^\|(?=[^\n]*(?:KLD?\b|KL[- ]?div))(?:[^|\n]*\|)*?[ \t]*" + COUNT_COLUMN + r"[ \t]*\|[^\n]*$",
    I | re.MULTILINE,
)
PATTERNS = [SAMPLE_N, COLUMN]


def vetoed(sentence: str, m: re.Match[str]) -> bool:
    return m.re is SAMPLE_N and not KL.search(sentence)


def read(span: str) -> dict[str, int]:
    m = SAMPLE_N.search(span)
    return {"count": int(m.group(1))} if m else {}
