"""Tools that print or tabulate KLD, recognised by name or by their report's own heading, so that the
reading says which tool a card's numbers came from. The tools with a grammar (this package) infer
their documented defaults (kldcard.lint.tool_defaults) where their user documentation states them;
quant-fidelity-suite has a grammar for its receipt rows (quant_fidelity_suite.py) but no documented
defaults, and exllamav3 eval/qbench one built from its print format in the source (qbench.py), since no
published output of it was found. For the rest the reading only names the tool: no real output of theirs was
found to build a grammar on (TensorRT Model Optimizer's KL toolkit summary "KL DIVERGENCE RESULTS:" /
"  HUGGINGFACE VS CUDA: 0.123456", an lm-eval table with a KL metric). Probes tried (2026-12, code, issues and
pages corpora and the exact-string index): "KL DIVERGENCE RESULTS", "KL DIVERGENCE RESULTS:", "HUGGINGFACE VS",
"qbench", "exllamav3 qbench kld median p90", "TensorRT Model Optimizer KL divergence results",
"top1_agree", "median_kld", "|kl_divergence|", "mean tokenwise, nats", an lm-eval "|Tasks|Version|...|Metric|"
table with a KL metric; they found only other projects' KL printouts (statistics, topic models, an MLX
script, llama-perplexity log parsers) and the suite's own renderer. What those tools measured by default is
not inferred without their output and documentation.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.tools.heretic import GRAMMAR as HERETIC
from kldcard.lint.read.tools.llama_kl import GRAMMAR as LLAMA_KL
from kldcard.lint.read.tools.maxtext import GRAMMAR as MAXTEXT
from kldcard.lint.read.tools.mlx_quant_fidelity import HEADING as MLX_REPORT
from kldcard.lint.read.tools.qbench import GRAMMAR as QBENCH
from kldcard.lint.read.tools.quant_fidelity_suite import GRAMMAR as QFS

I = re.IGNORECASE | re.ASCII

# name -> what names it on a card (command, package, module or its report's heading)
NAMED: dict[str, re.Pattern[str]] = {
    "mlx-quant-fidelity": re.compile(r"\bmlx[-_]quant[-_]fidelity\b|^#+\s*KV-fidelity:", I | re.MULTILINE),
    MAXTEXT.name: re.compile(r"\bforward_pass_logit_checker\b|D_KL\(P_golden", I),
    QFS.name: QFS.names,
    QBENCH.name: QBENCH.names,
    "TensorRT Model Optimizer": re.compile(r"\bTensorRT[- ]Model[- ]Optimizer\b|\bnvidia-modelopt\b|\bmodelopt\.torch\b", I),
    HERETIC.name: re.compile(r"\bheretic-llm\b|\bp-e-w/heretic\b|\bmade (?:with|using) \[?heretic\b|\bheretic v\d", I),
    "lm-evaluation-harness": re.compile(r"\blm[-_]eval(?:uation[-_]harness)?\b", I),
    "MaxText": re.compile(r"\bMaxText\b", I),
    LLAMA_KL.name: LLAMA_KL.names,
}
# a tool's own report printed on the card: its numbers are that tool's, whatever else the card
# mentions ("llama.cpp's --kl-divergence-base" in a sentence does not make it llama-perplexity output)
REPORTS: dict[str, re.Pattern[str]] = {
    "mlx-quant-fidelity": MLX_REPORT,
    QFS.name: QFS.printed,  # its receipt's "KL(reference ‖ candidate), mean tokenwise" row
    QBENCH.name: QBENCH.printed,  # its "ppl .. kld .. median .. p90 .." model line, its confidence buckets
}
