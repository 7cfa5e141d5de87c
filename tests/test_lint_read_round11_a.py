"""Issue 28's eleventh tuning round (tune11-a): KL numbers that are no measurements. A bound written with its
sign before a number in code marks, a code's fallback or lookup default, a file's size in kB, and
a KL value beside a training run's learning rate. Each case in the project's own words, with a measured
negative next to it."""

from __future__ import annotations

import pytest
from helpers_reading import claim_lines


@pytest.mark.parametrize(
    "text",
    [
        # a bound with its sign, the number in code or bold marks: an acceptance row of a plan
        "| Stage | Target |\n|---|---|\n| int8 | agreement >= `0.99`; mean token KL(BF16||INT8) <= `0.004` |\n",
        "Before we measure anything, the gate is: mean KL ≤ `0.02` nats.\n",
        # code's defaults: a lookup's fallback argument, a conditional expression's fallback
        "```python\nok = kl_mean <= limits.get(\"max_kl\", 0.2)\n```\n",
        "```python\nrow = dict(kl_prefix=float(kl[:n].mean()) if n > 0 else 0.0)\n```\n",
        # a listing of KLD log files with their sizes
        "Files:\n\nkld-q4.log\n\n2.31 kB\n\nKLD scores of the q4 model\n",
        # KL of an RL run beside its learning rate
        "With lr 3e-5 the policy fell apart after 150 steps: KL rose from ~0.04 to 3.\n",
    ],
)
def test_not_measured(text):
    assert claim_lines(text) == []


@pytest.mark.parametrize(
    "text",
    [
        # the measured value next to its bound is still a claim
        "| Stage | Target | Measured |\n|---|---|---|\n| int8 | mean KL <= `0.004` | mean KL `0.0021` |\n",
        "We measured a mean KL of **0.013** nats, under the 0.02 gate.\n",
        # a measured value printed in a code block (not a fallback after "else")
        "```\nMean    KLD:   0.017200 ±   0.000300\nSame top p: 97.100 ± 0.043 %\n```\n",
        # a KLD with no size unit after it
        "Files:\n\nkld-q4.log: mean KLD 0.031\n",
        # a learning rate nowhere near: an eval measurement
        "After quantization the mean KL to the bf16 model is 0.012 on wikitext.\n",
    ],
)
def test_still_measured(text):
    assert claim_lines(text) != []


def test_a_gate_met_by_a_verb_is_no_training_threshold():
    # "passed the ... threshold": a measurement checked against a gate, not a training setting
    text = "The int4 cache passed the preregistered quality threshold on every model: mean KL stayed below 0.004 against the bf16 cache.\n"
    assert claim_lines(text) == [1]
    # a training run's penalty and coefficient stay training words
    assert claim_lines("A run stops when its KL penalty passes the threshold of the schedule, then the KL coefficient is 0.05.\n") == []
