"""Tools that print or tabulate KLD, recognised by name or by their report's own heading, so that the
reading says which tool a card's numbers came from. Only llama-perplexity and exllamav3 model_diff
have documented defaults the linter infers (kldcard.lint.tool_defaults); for these the reading only
names the tool (what it measured by default is not inferred without its documentation).
"""

from __future__ import annotations

import re

I = re.IGNORECASE | re.ASCII

# name -> what names it on a card (command, package, module or its report's heading)
NAMED: dict[str, re.Pattern[str]] = {
    "mlx-quant-fidelity": re.compile(r"\bmlx[-_]quant[-_]fidelity\b|^#+\s*KV-fidelity:", I | re.MULTILINE),
    "quant-fidelity-suite": re.compile(r"\bquant[-_]fidelity[-_]suite\b", I),
    "exllamav3 qbench": re.compile(r"\beval/qbench(?:\.py)?\b|\bqbench\.py\b", I),
    "TensorRT Model Optimizer": re.compile(r"\bTensorRT[- ]Model[- ]Optimizer\b|\bnvidia-modelopt\b|\bmodelopt\.torch\b", I),
    "heretic": re.compile(r"\bheretic-llm\b|\bp-e-w/heretic\b|\bmade with heretic\b|\bheretic v\d", I),
    "lm-evaluation-harness": re.compile(r"\blm[-_]eval(?:uation[-_]harness)?\b", I),
    "MaxText": re.compile(r"\bMaxText\b", I),
    "llama_kl.py": re.compile(r"\bllama_kl\.py\b", I),
}
# a tool's own report printed on the card: its numbers are that tool's, whatever else the card
# mentions ("llama.cpp's --kl-divergence-base" in a sentence does not make it llama-perplexity output)
REPORTS: dict[str, re.Pattern[str]] = {
    "mlx-quant-fidelity": re.compile(r"^#+\s*KV-fidelity:", re.MULTILINE),
}
