"""KLD212: a card that ranks KLD numbers which are not the same quantity (the rules of
:mod:`kldcard.lint.quantity`, the check in :mod:`kldcard.lint.ranking_check`)."""

from __future__ import annotations

from kldcard.lint.rule import RuleSet

RULES = RuleSet()

RANKS_INCOMPARABLE_NUMBERS = RULES.rule(
    code="KLD212",
    name="ranks-incomparable-numbers",
    severity="warning",
    summary="the card ranks KLD numbers that its own disclosures show are not the same quantity",
    what="Reads every KLD number of the card with its disclosures (the `kld_evaluation` block's candidates, "
    "or the prose reading of each claim, a table column's or row's own context, a number quoted from "
    "another party's page) and compares them under the same-quantity rules of `kldcard comparable` "
    "(docs/comparable.md). Flags a `comparison.ranking` whose candidates differ in a disclosure that must "
    "be equal, and a free-form card that ranks its numbers (best, rank, lower is better, beats, closest, "
    "...) while numbers of the same statistic differ in one (reference, text, context, positions, "
    "direction, truncation).",
    why="A KLD measured at 8192 tokens of context is not comparable with one at 512, nor a top-k KLD "
    "with a full-vocabulary one: ranking them orders the measurement setups, not the quantizations. "
    "Readers take a card's ranking at its word.",
    example="| model | KLD@ctx4096 | KLD@ctx512 |\n|---|---|---|\n| Q4_K_M | 0.0291 | 0.0342 |\n"
    "| Q5_K_M | 0.0112 | 0.0131 |\n\nLowest KLD wins: Q5_K_M is the best quant here.\n",
    fix="Rank within one setup only (one context column), or measure every number the same way; "
    "`kldcard comparable CARD` shows which disclosure differs.\n",
)
