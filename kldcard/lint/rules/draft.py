"""KLD013: a draft block (``kldcard lint --fix --scaffold``) with TODO placeholders left in it.

Its own rule set (KLD0xx, card structure) kept apart from :mod:`kldcard.lint.rules.structured`,
which validates complete blocks; the placeholders themselves are :mod:`kldcard.lint.placeholders`.
"""

from __future__ import annotations

from kldcard.lint.rule import RuleSet

RULES = RuleSet()
rule = RULES.rule

PLACEHOLDER = rule(
    code="KLD013",
    name="block-placeholder",
    severity="error",
    summary="the kld_evaluation block still holds a TODO placeholder",
    what="Reports every value of the kld_evaluation block that is a `TODO` placeholder (a string starting "
    "with TODO), as `kldcard lint --fix --scaffold` writes where the card's text does not state a value. "
    "A block with placeholders is a draft: each placeholder is reported, and nothing else about the block "
    "(schema, consistency, prose against the block) until they are all filled.",
    why="A placeholder is a disclosure not yet made; reporting the schema errors it causes as well would bury "
    "the one thing to do (fill it) under findings that all say the same.",
    example="kld_evaluation:\n  reference:\n    model: Qwen/Qwen3-8B\n    revision: 'TODO: the 40-hex commit of the reference'\n",
    fix="kld_evaluation:\n  reference:\n    model: Qwen/Qwen3-8B\n    revision: b968826d9c46dd6066d109eabc6255188de91218\n",
)
