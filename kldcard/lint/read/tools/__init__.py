"""What the tools that print KLD print, one small grammar per tool (STYLE 20): the lines that carry
its numbers, and the labels that name it unmistakably. Real samples of each (printed output kept as
printed) are under tests/data/tool_samples (index.yaml cites them), read by
tests/test_lint_read_tools.py. The claim finder (:mod:`kldcard.lint.claims`) reads their lines;
:mod:`kldcard.lint.tool_defaults` names the tool from them and infers its documented defaults.

llama_perplexity and exllamav3 have block structures of their own (read by the claim finder);
the others are a :class:`~kldcard.lint.read.tools.grammar.Grammar` each, listed in ``GRAMMARS``.
"""

from __future__ import annotations

import re

from kldcard.lint.read.tools import heretic, llama_kl, maxtext, mlx_quant_fidelity, qbench, quant_fidelity_suite
from kldcard.lint.read.tools.grammar import Grammar

GRAMMARS: tuple[Grammar, ...] = (
    heretic.GRAMMAR, maxtext.GRAMMAR, llama_kl.GRAMMAR, mlx_quant_fidelity.GRAMMAR, quant_fidelity_suite.GRAMMAR,
    qbench.GRAMMAR,
)
BY_NAME: dict[str, Grammar] = {g.name: g for g in GRAMMARS}
# (tool name, pattern) of every printed KLD line the claim finder reads
LINES: tuple[tuple[str, re.Pattern[str]], ...] = tuple((g.name, p) for g in GRAMMARS for p in g.lines)
