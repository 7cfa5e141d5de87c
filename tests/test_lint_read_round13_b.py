"""Issue 28's thirteenth tuning round (tune13-b): D4 and D5 precision. A calibration still needed ("these figures need a
calibration corpus before ...") is a plan, not a calibration used. A training run's numbers ("1,200 steps of 256-token
chunks", "fine-tuned on 2048-token sequences") give the length the model was trained on, not the one its KL was
measured at; with a measurement in the same sentence the length is still read. Each case in the project's own words,
with a negative next to it."""

from __future__ import annotations

import pytest
from helpers_reading import reading

CLAIM = "Mean KL to the base model: 0.042 nats.\n\n"


@pytest.mark.parametrize(
    "sentence",
    [
        "- **Brief run.** 900 steps of single 256-token chunks (~230k tokens).\n",
        "The adapter was fine-tuned on 2048-token sequences from our chat logs.\n",
    ],
)
def test_a_training_runs_length_is_no_context_length(sentence):
    assert reading(CLAIM + sentence, 5).status == "missing"


@pytest.mark.parametrize(
    "sentence",
    [
        "The KL was measured on 2048-token sequences from our chat logs.\n",
        "We trained the adapter, then scored the KL over 256-token chunks of held-out text.\n",
    ],
)
def test_a_measurements_length_is_still_read(sentence):
    assert reading(CLAIM + sentence, 5).status != "missing"


# ---- D4: a calibration still needed is a plan, not a calibration used --------------------------------------------
@pytest.mark.parametrize(
    "sentence",
    [
        "These figures need a domain-matched, multi-source calibration corpus before we publish them.\n",
        "On the 70B model the steering scale needs a calibration corpus of its own.\n",
    ],
)
def test_a_calibration_still_needed_is_no_calibration(sentence):
    assert reading(CLAIM + sentence, 4).status == "missing"


@pytest.mark.parametrize(
    "sentence",
    [
        "The quants used a domain-matched calibration corpus of 300 chat samples.\n",
        "GPTQ required 256 calibration samples, drawn from C4.\n",
    ],
)
def test_a_calibration_used_is_still_read(sentence):
    assert reading(CLAIM + sentence, 4).status != "missing"
