"""MaxText's logit check (AI-Hypercomputer/maxtext, ``tests/utils/forward_pass_logit_checker.py``,
code index id 55917781937): after a checkpoint conversion it compares the converted model's logits
with golden (Hugging Face) logits and prints

- "Average KL divergence per token (D_KL(P_golden || Q_model)): 0.000409" (``.6f`` in older
  versions, ``.2e`` in newer ones),
- "Max KL divergence for a single token in the set: 0.003497",
- and, when the check fails, an assertion with the maximum (older versions log "max KL divergence = ..."),

between its top-token tables. Documented defaults (``check_kl_divergence`` in that file): the
direction is D_KL(P_golden ‖ Q_model), forward, in nats (``F.kl_div`` with the golden probabilities
as target); the vocabulary is the full one, cut to the smaller of the two models' vocabularies
(``token_size = min(...)``); every position of every golden prompt is scored (the logits are
reshaped to ``b * s`` rows); the average is the mean per token (``reduction="batchmean"``) and the
maximum is over the same tokens. The golden prompts vary by model, so the text is not inferred.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.tools.grammar import NUMBER, PASTE_PREFIX, Grammar

I = re.IGNORECASE | re.ASCII

AVERAGE = re.compile(
    PASTE_PREFIX + r"Average KL divergence per token\s*\(D_KL\(P_golden\s*\|\|\s*Q_model\)\)\s*:\s*" + NUMBER, I
)
MAXIMUM = re.compile(PASTE_PREFIX + r"Max KL divergence for a single token in the set\s*:\s*" + NUMBER, I)
# Its failure and log lines, as pasted into MaxText PRs (holdout4 maxtext_pr2958 / maxtext_pr1695 renderings): the
# assertion "KL divergence values exceed the specified threshold of 0.002. Max divergence: 0.00201..." and an
# older version's log line "... INFO - KL divergence = [[0.0064 0.0045 ...]], max KL divergence = 0.0111...".
# The number read is the maximum; the threshold before it is the check's bound, not a measurement.
ASSERTION = re.compile(
    PASTE_PREFIX + r"(?:\w*Error:\s*)?KL divergence values exceed the specified threshold of [\d.eE+-]+\.?\s*"
    r"Max divergence\s*:\s*" + NUMBER, I
)
LOGGED_MAX = re.compile(
    PASTE_PREFIX + r"[^\n]{0,160}?\bKL divergence = \[\[[^\]]{0,2000}\]\],\s*max KL divergence\s*=\s*" + NUMBER, I
)

GRAMMAR = Grammar(
    name="MaxText forward_pass_logit_checker",
    lines=(AVERAGE, MAXIMUM, ASSERTION, LOGGED_MAX),
    names=re.compile(r"\bforward_pass_logit_checker(?:\.py)?\b", I),
    printed=re.compile(r"D_KL\(P_golden\s*\|\|\s*Q_model\)|Max KL divergence for a single token in the set", I),
    defaults={
        6: "every position of every golden prompt",
        7: "forward D_KL(P_golden ‖ Q_model), fixed",
        8: "full vocabulary, cut to the smaller of the two models' vocabularies",
        9: "mean per token (batchmean) and the maximum over the same tokens",
    },
    values={
        6: {"scheme": "all"},
        7: {"direction": "forward", "unit": "nats"},
        8: {"scheme": "full"},
        9: {"statistic": "mean+max"},
    },
)
