"""Kinds of KLD claim the base patterns of kldcard.lint.claims_patterns miss (data; samples in
tests/test_lint_read_d789.py):

- KL terms written as a tool's or a script's identifiers: "KLD_95", "KLD_99.9" (a percentile), "mean_kld",
  "max_kl_div", "median_kld" (logs, JSON keys and table headers print metric names in snake case);
- relative measurements written with a percentage or a factor before the comparison word and the term, in
  English and the card languages ("22% lower KLD", "1.66× lower divergence", "a 6.7x worse divergence",
  "13% lower mean KL", "69 % menos KLD"): R4 of tests/data/real_cards/labels.yaml;
- (claims_patterns.AFTER_GAP) a number given in nats before the term: "0.021 nats of mean KL drift".

A bare "divergence" is a KL term only in a relative measurement here: alone it names too many other things.
"""

from __future__ import annotations

# regular-expression text, joined into claims_patterns.KLD_TERM / RELATIVE / AFTER_GAP
# (not a command-line option: "--max_kl_div=0.03" is a threshold the tool is given)
IDENTIFIERS = r"(?<!-)KLD_\d{2}(?:\.\d)?(?![\w.])|(?<![A-Za-z-])(?:mean|median|max|min|avg|p\d{2})_kl(?:d|_div(?:ergence)?)(?![A-Za-z_])"

COMPARATIVES = (
    "lower|higher|smaller|larger|less|more|worse|better",
    "menos|más|mayor|menor",  # es
    "moins|plus",  # fr
    "weniger|mehr|niedriger|höher",  # de
    "menor|maior",  # pt
)
RELATIVE_MORE = (
    r"(?<![\w.])~?\d+(?:\.\d+)?\s*(?:%|[x×])\**\s+(?:" + "|".join(COMPARATIVES) + r")\s+(?:de\s+)?(?:mean\s+|median\s+)?"
    r"(?:KLD|KL\b|KL[- ]div\w*|divergence\b)"
)
