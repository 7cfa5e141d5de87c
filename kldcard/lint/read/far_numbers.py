"""A KLD number further from its KL term than the usual 60 characters (issue 28, claim detection): the term opens
a clause that a colon closes, and the value comes right after the colon ("better on KLD over the public mix
against the same-size control: 0.0250 vs. 0.0270"). Up to REACH characters, with no number, no other metric
and no sentence break (";", "。") in between. Samples in tests/test_lint_claim_detection.py."""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.numbers import KLD_VALUE

REACH = 140
COLON_GAP = re.compile(r"^[^;。；:|=]{0,%d}:[\s*_`]*$" % REACH)


def colon_value(gap: str) -> bool:
    """Whether ``gap`` (between a KL term and a number) is a clause closed by a colon just before the number."""
    return bool(COLON_GAP.match(gap)) and not KLD_VALUE.search(gap)
