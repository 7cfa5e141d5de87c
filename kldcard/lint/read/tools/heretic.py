"""Heretic (p-e-w/heretic, ``pip install heretic-llm``): the abliteration tool that co-minimises
refusals and the KL divergence from the original model. What it prints:

- each trial's evaluation, "  * KL divergence: 0.1055" under "  * Obtaining first-token probability
  distributions..." (src/heretic/evaluator.py, ``get_score``; code index id 394771035);
- the Pareto-front menu, one line per trial: "[Trial  97] Refusals:  3/100, KL divergence: 0.1055" (as
  pasted in p-e-w/heretic PR 196; forks that keep the menu or the card table, e.g. Bruno, read as Heretic);
- the model card it writes on upload, a table row "| **KL divergence** | 0.0535 | 0 *(by
  definition)* |" under "## Performance" (src/heretic/utils.py ``get_readme_intro``; code index id
  53109616094). That row is a pipe table: the claim finder reads it as a table; here it only
  says that the card prints Heretic's own output.

Documented defaults (p-e-w/heretic: evaluator.py, code index id 394771035; config.py's
``good_evaluation_prompts`` default, code index id 53731021468, commit 0290bb5):
the KL divergence is ``F.kl_div(logprobs, base_logprobs, reduction="batchmean", log_target=True)``,
i.e. KL(P_original ‖ P_abliterated) in nats, over the full vocabulary of the first generated token's
distribution ("first-token probability distributions"), averaged over the evaluation prompts, which
are the first 100 of mlabonne/harmless_alpaca's test split (``split="test[:100]"``).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.tools.grammar import NUMBER, PASTE_PREFIX, Grammar

I = re.IGNORECASE | re.ASCII

# a trial's evaluation line, indented two spaces under "* Evaluating..." (Rich's [bold] markup is not
# printed on a terminal); a top-level "* KL divergence: 0.16" bullet is a card's own list, not this
TRIAL = re.compile(PASTE_PREFIX + r"[ \t]{2,}\*[ \t]+KL divergence:[ \t]*" + NUMBER, I)
# a line of the trial-selection menu (the selected one starts with "»", the prompt with "?")
MENU = re.compile(
    PASTE_PREFIX + r"[ \t»>*-]*\[Trial\s+\d+\]\s+Refusals:\s*\d+\s*/\s*\d+\s*,\s*KL divergence:\s*" + NUMBER, I
)
# the row of the model card Heretic writes: the original model's KL divergence is "0 *(by definition)*"
CARD_ROW = re.compile(r"^\|\s*\*\*KL divergence\*\*\s*\|\s*" + NUMBER + r"\s*\|\s*0 \*\(by definition\)\*\s*\|", I)

GRAMMAR = Grammar(
    name="heretic",
    lines=(TRIAL, MENU),
    # the sentence Heretic writes into a card, its package, its command: not a link to its repository, which
    # cards also give for tools "built on heretic" (forks with other defaults)
    names=re.compile(
        r"\bmade using \[?Heretic\b|\bpip install (?:-U )?heretic-llm\b|^[ \t$>]*heretic (?:--model )?[\w.-]+/[\w.-]+",
        I | re.MULTILINE,
    ),
    printed=re.compile(
        r"\[Trial\s+\d+\]\s+Refusals:|\|\s*0 \*\(by definition\)\*\s*\||Obtaining first-token probability distributions", I
    ),
    defaults={
        3: "mlabonne/harmless_alpaca, split test[:100] (Heretic's good_evaluation_prompts default)",
        6: "the first generated token of each of the 100 evaluation prompts (one position per prompt)",
        7: "forward KL(P_original ‖ P_abliterated), fixed (F.kl_div with the original as target)",
        8: "full vocabulary of the first-token distribution",
        9: "mean over the prompts (batchmean); no uncertainty printed",
    },
    values={
        3: {"name": "harmless_alpaca test[:100]", "source": "mlabonne/harmless_alpaca"},
        6: {"scheme": "first-token", "count": 100},
        7: {"direction": "forward", "unit": "nats"},
        8: {"scheme": "full"},
        9: {"statistic": "mean"},
    },
)
