"""mlx-quant-fidelity (``pip install mlx-quant-fidelity``; PyPI page of 0.1.0): scores a quantized
MLX KV cache against full precision and prints a Markdown report headed
"# KV-fidelity: `<model>` @ 8-bit (group 64)", whose table has one row per statistic ("| KL mean |
0.0002 nats |", "KL median", "KL p99", "KL max", then flip rate and perplexity Δ) and a line that
states the protocol ("Measured on **wikitext-2-raw/test**, 51100 positions across 100 chunks of
length 512"). The rows are a pipe table (the claim finder reads them as one transposed claim; each
row's label names its statistic); the heading says the card prints this tool's report.

Its defaults are not documented anywhere this project could read (the report states its own
protocol, which the reader reads as stated), so nothing is inferred: the reading names the tool.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.tools.grammar import Grammar

I = re.IGNORECASE | re.ASCII

HEADING = re.compile(r"^#+\s*KV-fidelity:", re.MULTILINE)
# a statistic row of the report's table
ROW = re.compile(r"^\|\s*KL (?P<stat>mean|median|p\d{2}(?:\.\d)?|max)\s*\|\s*(?P<kld>-?\d+\.\d+)\s*nats\s*\|", I)

GRAMMAR = Grammar(
    name="mlx-quant-fidelity",
    names=re.compile(r"\bmlx[-_]quant[-_]fidelity\b", I),
    printed=HEADING,
)
