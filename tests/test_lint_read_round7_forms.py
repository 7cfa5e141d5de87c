"""Readings added in issue 28's seventh tuning round (tune-v): general grammar of how cards write the context
(a run name, "at N tokens", the bare Romance word, a code span), both KL directions side by side, a record key's
formula, the unit "seqs", and what a calibration word is not (a phrase's last word before a colon, a method)."""

from __future__ import annotations

import pytest
from helpers_reading import reading

CLAIM = "Q4_K_M reaches a KLD of 0.0231"


@pytest.mark.parametrize(
    ("text", "n_ctx"),
    [
        (f"{CLAIM}.\n\nLog: `/runs/kld/q4_vs_bf16_ctx2048_w1_0516.log`\n", 2048),  # a run name in a path
        (f"{CLAIM}; run `q4-c4096-s512`.\n", 4096),
        (f"{CLAIM} at 2048 tokens.\n", 2048),
        (f"{CLAIM} @ 1024 tokens.\n", 1024),
        ("La KL moyenne vaut 6,9e-5 à 2 048 jetons.\n", 2048),  # a space as the French thousands separator
        ("El KLD medio es 0.0231 (WikiText-2 raw, contexto 2048, 145 fragmentos).\n", 2048),
        ("La KLD médiane est 0,0231 avec un contexte 4096.\n", 4096),
        (f"{CLAIM} on WikiText at a `16k` context.\n", 16384),
        (f"{CLAIM} over 100 Simple English Wikipedia passages x 256 tokens.\n", 256),
    ],
)
def test_context_written_in_run_names_at_lengths_and_languages(text, n_ctx):
    d = reading(text, 5)
    assert d.status != "missing" and d.value["n_ctx"] == n_ctx, d


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM}.\n\nReplies were capped at 256 tokens.\n",  # a generation's cap
        f"{CLAIM}.\n\nDecode runs at 512 tokens/s.\n",  # a speed
        f"{CLAIM}, on 3x3090 GPUs (`c4090` node).\n",  # no multiple of 64
        f"{CLAIM}.\n\n**Rendimiento de servicio** (RTX PRO 6000, contexto 32.768 tokens, 128 prompts): 90 tok/s.\n",
    ],
)
def test_context_lookalikes_are_not_read(text):
    assert reading(text, 5).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        "| Quant | PPL | KL(qโo) | KL(oโq) |\n|---|---|---|---|\n| Q4 | 6.1 | 0.0231 | 0.0240 |\n",  # a separator lost to encoding
        "Variant   Prefill KL   Decode BF16->var   Decode var->BF16\nQ4        0.0231       0.0199             0.0210\n",
    ],
)
def test_both_directions_side_by_side_are_read(text):
    d = reading(text, 7)
    assert d.status == "stated" and d.value["direction"] == "both", d


def test_a_record_keys_formula_gives_the_direction():
    d = reading("The run printed mean_kld(f32 kernel || fp64 oracle) = 3.7e-10 for the kernel.\n", 7)
    assert d.status == "stated", d


def test_a_count_of_seqs_describes_the_text():
    d = reading(f"{CLAIM}, teacher-forced on 8 held-out seqs.\n", 3)
    assert d.status == "incomplete", d


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM}.\n\nArm chosen by calibration: **`alpha025`**.\n",  # the word ends a phrase: no field label
        f"{CLAIM}.\n\nAll the others are imatrix-calibrated K-quants.\n",  # a method, no data (CONVENTIONS.md)
    ],
)
def test_calibration_words_that_describe_no_data_are_not_read(text):
    assert reading(text, 4).status == "missing"


def test_a_calibration_field_label_is_still_read():
    assert reading(f"{CLAIM}.\n\n- **Calibration:** 200 chat samples\n", 4).status != "missing"


@pytest.mark.parametrize(
    "text",
    [
        "整模 16 个相同 teacher-forced 前缀中 top-1 有 14 个一致，平均 KL=0.03174。\n",  # a count of units in Chinese
        "KLD は 0.0231、8 件のプロンプトで測定した。\n",  # in Japanese
        "- 평가: KLUE-MRC 검증셋, KLD 0.0231\n",  # a Korean "validation set" in an evaluation field
    ],
)
def test_texts_described_in_the_card_languages_are_read(text):
    assert reading(text, 3).status != "missing"
