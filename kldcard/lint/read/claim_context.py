"""Whether a sentence's KL term is a training term (issue 28, claim detection): a sentence that names a training
setting (claims_patterns.TRAINING_CONTEXT: a penalty, a loss, an objective, a threshold...) gives no KLD claim,
unless its KL term is qualified as measured on held-out data ("held-out KL fell ~90%", "validation KLD 0.031",
"eval KL"): a divergence measured on held-out text is an evaluation of the model, whatever it was trained with.
A measured value "against a 0.03 threshold" is still a measurement (read.claim_terms.GATE). Samples in
tests/test_lint_claim_detection.py."""

from __future__ import annotations

import re

from kldcard.lint.claims_patterns import TRAINING_CONTEXT
from kldcard.lint.read import claim_terms

EVALUATED = re.compile(
    r"\b(?:held[- ]?out|validation|eval(?:uation)?)[\s-]+(?:set\s+|text\s+)?(?:forward\s+|reverse\s+)?(?:mean\s+)?"
    r"(?:KLD|KL[- ]?div\w*|KL)\b",
    re.IGNORECASE | re.ASCII,
)


def training_sentence(sentence: str) -> bool:
    """Whether ``sentence`` speaks of KL as a training setting, not as a measurement."""
    return bool(TRAINING_CONTEXT.search(claim_terms.without_gates(sentence))) and not EVALUATED.search(sentence)
