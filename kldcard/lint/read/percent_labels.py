"""Whether a percentage is a percentile's label (kldcard.lint.read.values.statistic). A percentage is a percentile
only as a label: before the KL it ranks ("99.9%   KLD:"), a percentile word ("99%-tile") or the tokens it counts
("99% of tokens"), before a colon ("99%: 0.41"), alone (a header cell "99%"), or a tail right after the KL term ("KLD
99.9%", "KL-99.9%"). A percentage anywhere else is a share, a change or a level ("top-1 agreement 92.9%", "34.4%
cache", "KLD 42% lower", "95% CI"), not the statistic of the number beside it. Plain grammar of how percentiles are
written, in the card languages.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

I = re.IGNORECASE | re.ASCII  # ASCII: a letter of another script is spelled out as any non-ASCII character

PERCENT = re.compile(r"(?<![\d.,])(\d{1,2}(?:[.,]\d+)?)\s*%")
PERCENTILE_WORD = r"percentil|perzentil|centile|quantil|分位|パーセンタイル|백분위|перцентил|квантил"
PERCENT_LABEL = re.compile(
    r"\s*-?(?:KL|tile|" + PERCENTILE_WORD + r")|\s*[:=]|"
    r"\s+(?:of|de|der|des|du)\s+(?:the\s+|l[oae]s\s+)?(?:tokens?|positions?|posiciones|Positionen)\b",
    I,
)
LABEL_BEFORE = re.compile(r"(?:KL\w*|" + PERCENTILE_WORD + r")\w*[\s(@_-]*$", I)
LABEL_TRIM = " \t*_`|()[]:,;"
TAIL_BEFORE = re.compile(r"(?:worst|cvar)[\s_-]*$", I)  # "worst-5%", "CVaR 1%": the tail's share (the "cvar" statistic)
LEVEL = re.compile(r"\d{1,2}(?:\.\d{1,2})?")  # a percentile's level: "99", "99.9", "0.1"; not a share "52.027"


def level(text: str) -> str | None:
    """The level of the first percentage in ``text`` written as a percentile's label ("99.9" of "99.9%   KLD:"),
    or None."""
    for m in PERCENT.finditer(text):
        value = m.group(1).replace(",", ".")  # "99,9 %": a decimal comma
        if not LEVEL.fullmatch(value) or float(value) == 0 or TAIL_BEFORE.search(text, 0, m.start()):
            continue
        if (PERCENT_LABEL.match(text, m.end()) or text.strip(LABEL_TRIM) == m.group(0)
                or (float(value) >= 90 and LABEL_BEFORE.search(text, 0, m.start()))):
            return value
    return None
