"""Printed output of a training or RL run (issue 28, claim detection): a fenced block that prints a reward,
a policy objective or an advantage as its own labelled line ("expected reward: 1.25", "RLHF objective: 1.23")
prints its "KL divergence: 0.105" as a term of that objective (a KL penalty), not as a measurement of a port
or a quant. Only such labelled lines of the same fence count, not the words anywhere in the text. A table that
holds a reward among its row labels or header cells is such a run's table of metrics (:func:`training_table`).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.markdown import Doc, Table

TRAINING_LINE = re.compile(r"^[\s#>*-]*[\w ]{0,30}?\b(?:rewards?|objective|advantages?|polic(?:y|ies))\b[\w ]{0,20}[:=]\s*-?\d", re.I)
REACH = 20  # lines either way inside the fence


def training_fence(doc: Doc, i: int) -> bool:
    """Whether the fenced block holding line ``i`` prints a reward, objective or policy line."""
    for step in (-1, 1):
        j = i
        while 0 <= j < len(doc.lines) and doc.code[j] and abs(j - i) <= REACH:
            if TRAINING_LINE.match(doc.lines[j]):
                return True
            j += step
    return False


# A table of a training run's own metrics names a reward among its row labels or header cells ("Final Reward",
# "Avg reward", "| Metric | SFT Stage | GRPO Stage |" then "| Avg reward | — | 0.698 |"): its "KL divergence" row is
# the KL term of that run (policy against its reference), as a reward line makes it in printed output above.
TRAINING_LABEL = re.compile(r"^[\s*_`]*(?:[\w-]+ ){0,3}(?:rewards?|advantages?)(?: [\w()-]+){0,3}[\s*_`]*$", re.I)


def training_table(t: Table) -> bool:
    """Whether a header cell or a row label of ``t`` is a reward or an advantage (TRAINING_LABEL)."""
    cells = [text for _, text in t.cells[t.header]] + [t.cells[r][0][1] for r in t.rows if t.cells[r]]
    return any(TRAINING_LABEL.match(text) for text in cells)


# A list of a preference or RL run's evaluation metrics, as trainer-written cards print them ("- Rewards/chosen:
# 1.5421", "- Logps/rejected: -233.77", "- Kl: 1080.32"): its KL item is that run's policy-vs-reference term, as a
# reward line makes it in printed output above. Only the same run of list items counts.
TRAINING_ITEM = re.compile(r"^\s*[-*+]\s+[\w ]{0,30}?\b(?:rewards?|logps|advantages?)\b[\w/ ]{0,20}[:=]\s*-?\d", re.I)
LIST_LINE = re.compile(r"^\s*[-*+]\s")


def training_list(doc: Doc, i: int) -> bool:
    """Whether line ``i`` is an item of a list that holds a reward or log-probability line (TRAINING_ITEM)."""
    if not LIST_LINE.match(doc.lines[i]):
        return False
    for step in (-1, 1):
        j = i
        while 0 <= j < len(doc.lines) and LIST_LINE.match(doc.lines[j]) and abs(j - i) <= REACH:
            if TRAINING_ITEM.match(doc.lines[j]):
                return True
            j += step
    return False
