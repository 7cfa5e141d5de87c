"""Readings added in issue 28's ninth tuning round (tune9-b) for D2: a CUDA compute architecture names the GPU
of a run ("sm_60", "sm_75"), and a "fast path" is a code path, not a speed sentence that vetoes hardware. Each
case in the project's own words, a negative next to it."""

from __future__ import annotations

import pytest
from helpers_reading import reading


@pytest.mark.parametrize("arch", ["sm_60", "sm_75", "sm_86", "sm_120a"])
def test_a_cuda_architecture_names_the_hardware(arch):
    text = f"We measured the KL divergence on {arch} against the FP32 path: median KL 0.0049.\n"
    assert reading(text, 2).status != "missing"


@pytest.mark.parametrize("word", ["sm_4", "small_60", "sm_600x", "asm_75"])
def test_words_that_only_look_like_an_architecture_are_not_read(word):
    text = f"We measured the KL divergence in {word} against the FP32 path: median KL 0.0049.\n"
    assert reading(text, 2).status == "missing"


def test_a_fast_path_is_a_code_path_not_a_speed_sentence():
    text = ("## The sm_60 FP16 fast-path fix\n\nTaking sm_60 out of the fast path changes the output.\n\n"
            "Measured upstream: median KL divergence 0.004962 -> 0.000001.\n")
    assert reading(text, 2).status != "missing"


def test_hardware_in_a_speed_sentence_is_still_vetoed():
    text = ("## Notes\n\nDecode is faster on sm_60 than on the older card.\n\n"
            "Measured upstream: median KL divergence 0.004962 -> 0.000001.\n")
    assert reading(text, 2).status == "missing"


# ---- D9 ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("pct", ["`99.9%`", "**99%**", "`99%`"])
def test_a_percentile_in_markdown_before_the_kl_term(pct):
    text = f"On WikiText at 16k context the {pct} KLD was about 18.8 / 17.3 for the three KV settings.\n"
    assert reading(text, 9).status != "missing"


@pytest.mark.parametrize("pct", ["`+19%`", "`99`", "`0.99%`"])
def test_a_change_or_a_bare_number_in_markdown_is_no_percentile(pct):
    text = f"On WikiText at 16k context the {pct} KLD was about 18.8 / 17.3 for the three KV settings.\n"
    assert reading(text, 9).status == "missing"
