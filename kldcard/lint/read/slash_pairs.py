"""Labels and numbers written as two parallel slash lists, "KL median / p95 / p99 / max 0.0075 / 0.47 /
1.62 / 10.58": the n-th number is the n-th label's. A general record layout (key/value rows that pack several
statistics into one row), as the quant-fidelity-suite receipt prints its tail (tests/data/tool_samples). Read
on pasted tool output only, where the line is the tool's record. The numbers are read.numbers.SLASH_LIST, the one
grammar of values joined by slashes (prose reads it too: "mean KLD 0.164/0.172")."""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.numbers import KLD_VALUE, SLASH_LIST

# the numbers, slash-separated, ending the line; the labels before them
_ROW = re.compile(r"^(?P<labels>.*?\S)\s+(?P<numbers>" + SLASH_LIST.pattern + r")\s*$")


def paired_label(line: str, at: int) -> str | None:
    """The label paired with the number at column ``at`` of ``line``, or None when the line is not two
    parallel slash lists of the same length."""
    m = _ROW.match(line)
    if m is None or not m.start("numbers") <= at < m.end("numbers"):
        return None
    starts = [m.start("numbers") + n.start() for n in KLD_VALUE.finditer(m.group("numbers"))]
    labels = m.group("labels").split("/")
    if len(labels) != len(starts) or at not in starts:
        return None
    # the first label carries the row's words before it ("KL median"): keep only its last word
    label = labels[starts.index(at)].strip()
    return label.split()[-1] if label else None
