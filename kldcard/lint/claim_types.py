"""What a KLD claim is: a number the card presents as a KL divergence and the claim (table, pasted
tool output, sentence) that holds such numbers. Found by :mod:`kldcard.lint.claims` and its readers
(:mod:`kldcard.lint.claim_tables`, :mod:`kldcard.lint.claim_tool_output`); read by evidence and the reader."""

from __future__ import annotations

from dataclasses import dataclass, field

from kldcard.lint.claims_patterns import BOUND_BEFORE, NUMBER
from kldcard.lint.read.numbers import decimals_half_ulp, parse_number


@dataclass(frozen=True)
class KldNumber:
    """A number the card presents as a KL divergence value (nats unless the card says otherwise)."""

    text: str
    value: float
    offset: int  # body offset

    @property
    def decimals_half_ulp(self) -> float:
        """Half a unit in the last printed digit: the rounding the printed text allows."""
        return decimals_half_ulp(self.text)


@dataclass
class Claim:
    """One KLD claim: a table, a pasted tool-output block, or a line of prose."""

    kind: str  # "table" | "tool-output" | "sentence"
    offset: int  # body offset the claim is located at
    text: str  # the header row, first statistic line, or the sentence
    labelled: bool  # every number says which statistic it is (mean, median, p99, ...)
    numbers: list[KldNumber] = field(default_factory=list)
    # pasted output: "llama-perplexity", "llama-perplexity-chunks", "model_diff", "result-lines" or the
    # name of another tool whose grammar read the line (kldcard.lint.read.tools)
    tool: str | None = None


def numbers_in(text: str, base: int) -> list[KldNumber]:
    """The numbers of ``text``; not a bound ("KL < 0.01: excellent", "median KL < ~0.005": a threshold, R4)."""
    return [KldNumber(m.group(0), parse_number(m.group(0))[0], base + m.start()) for m in NUMBER.finditer(text)
            if not BOUND_BEFORE.search(text, max(0, m.start() - 8), m.start())]
