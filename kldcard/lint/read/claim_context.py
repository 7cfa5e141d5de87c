"""Whether a sentence's KL term is a training term (issue 28, claim detection): a sentence that names a training
setting (claims_patterns.TRAINING_CONTEXT: a penalty, a loss, an objective, a threshold...) gives no KLD claim,
unless its KL term is qualified as measured on held-out data ("held-out KL fell ~90%", "validation KLD 0.031",
"eval KL"): a divergence measured on held-out text is an evaluation of the model, whatever it was trained with; nor
when it is an RL run's train-inference mismatch (MISMATCH: "gen_kl_error", "mismatch_kl").
A loss of quality ("little loss of capability", "no quality loss",
# "already a bigger loss than 4-bit quantization") is no training loss.
A measured value "against a 0.03 threshold" is still a measurement (read.claim_terms.GATE). Samples in
tests/test_lint_claim_detection.py."""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.claims_patterns import TRAINING_CONTEXT
from kldcard.lint.read import claim_terms
from kldcard.lint.read.terms import KL_WORD

EVALUATED = re.compile(
    r"\b(?:held[- ]?out|validation|eval(?:uation)?)[\s-]+(?:set\s+|text\s+)?(?:forward\s+|reverse\s+)?(?:mean\s+)?"
    + KL_WORD,
    re.IGNORECASE | re.ASCII,
)


# "loss" as a quantizer says it: a loss of quality, not a training loss ("little loss of capability", "no quality loss",
# "already a bigger loss than 4-bit quantization")
QUALITY_LOSS = re.compile(
    r"\b(?:quality|accuracy|capability|precision|information|fidelity|little|no|minimal|small|negligible|minor|"
    r"significant|some|any|without|measurable|visible|task|benchmark|performance|bigger|larger|greater|worse)\s+loss\b"
    r"|\bloss\s+(?:of|in)\s+(?:\w+\s+)?(?:quality|accuracy|capabilit\w*|precision|information|fidelity|intelligence)\b",
    re.IGNORECASE | re.ASCII,
)


# The KL between the engine that generated an RL rollout and the trainer's forward pass on the same weights (a
# train-inference mismatch) compares two runtimes of one model, a port's measurement, whatever RL words stand around
# it: the metric keys of several trainers (NeMo-RL "train/gen_kl_error", prime-rl "mismatch_kl", miles
# "train_rollout_kl", verl "rollout_corr/kl" and its estimators "rollout_corr/k3_kl") and "KL mismatch" in prose, and
# the keys' words written out ("generation KL", "rollout KL": NeMo-RL's gen_kl in Megatron's prose; "training
# inference KL", "train-inference KL": the mismatch named by its two sides). Not the policy's KL to its reference model.
MISMATCH = re.compile(
    r"(?<![A-Za-z0-9])(?:gen|rollout|mismatch)(?:_[A-Za-z0-9]+)?(?:/[A-Za-z0-9]+)?[_/]kld?(?![A-Za-z])|\bmismatch[ _-]KL\b|\bKL[ _-]mismatch\b"
    r"|\b(?:generation|rollout)[ -]KL\b|\b(?:train(?:ing)?[ -]+inference|inference[ -]+train(?:ing)?)[ -]+KL\b",
    re.IGNORECASE | re.ASCII,
)


def training_sentence(sentence: str) -> bool:
    """Whether ``sentence`` speaks of KL as a training setting, not as a measurement."""
    text = QUALITY_LOSS.sub(lambda m: " " * len(m.group(0)), claim_terms.without_gates(sentence))
    return bool(TRAINING_CONTEXT.search(text)) and not EVALUATED.search(sentence) and not MISMATCH.search(sentence)

