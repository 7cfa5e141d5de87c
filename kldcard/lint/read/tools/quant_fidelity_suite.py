"""quant-fidelity-suite (malaiwah/quant-fidelity-suite): its discussion-post renderer (``render`` in the
suite's post script, code index ids 59116864225 and 59105347342, read for the print format only) writes a
receipt summary onto the measured model's Hub page as a two-column key/value table:

- "| **KL(reference ‖ candidate), mean tokenwise, nats** | **0.1023...** |" (the float as Python's
  ``repr`` prints it, all its digits),
- "| top-1 agreement | 0.9112... |" (an agreement rate, not a divergence),
- "| KL median / p95 / p99 / max | a / b / c / d |",
- then the reference root dataset, the panel (contexts, scored positions), "direction / vocabulary /
  accumulation", method, determinism and comparability class rows.

Hub pages reach the corpus flattened by the page store: each row one line, its cells joined by a space
("KL(reference ‖ candidate), mean tokenwise, nats 0.1023..."; real sample in tests/data/tool_samples). Those
flattened rows are this grammar's lines; the unflattened pipe table is a table the table reader reads
(the tool is named by NAMED in named.py either way).

The receipt states its own protocol (panel, direction, vocabulary) on the rows around the numbers, read as
stated; no user documentation of the suite's defaults was found, so nothing is inferred.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.tools.grammar import PASTE_PREFIX, Grammar

I = re.IGNORECASE | re.ASCII

# a float as Python's repr prints it: "0.10233258694757999", "1.2e-05", "0.0"
_NUM = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?(?![\w.])"
_KL = r"KL\(reference\s*(?:‖|\|\||\u2225)\s*candidate\)"
MEAN = re.compile(PASTE_PREFIX + _KL + r",\s*mean tokenwise,\s*nats\s+(?P<kld>" + _NUM + r")\s*$", I)
# the four tail statistics on one row, in the order of its label
TAIL = re.compile(
    PASTE_PREFIX + r"KL median\s*/\s*p95\s*/\s*p99\s*/\s*max\s+(?P<kld>" + _NUM + r"(?:\s*/\s*" + _NUM + r"){3})\s*$", I
)
# the row the renderer prints between those two: part of the receipt, no divergence on it
BETWEEN = re.compile(PASTE_PREFIX + r"top-1 agreement\s+" + _NUM + r"\s*$", I)

GRAMMAR = Grammar(
    name="quant-fidelity-suite",
    lines=(MEAN, TAIL),
    between=BETWEEN,
    names=re.compile(r"\bquant[-_]fidelity[-_]suite\b", I),
    printed=re.compile(_KL + r",\s*mean tokenwise", I),
)
