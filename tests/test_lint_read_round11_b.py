"""Readings changed in issue 28's eleventh tuning round (tune11-b) for D3 and D6: a stride laid over the text is a
scheme of the positions scored (unless the sentence is about a perplexity run and names no KL); a count of cases or
samples joined to its unit describes the evaluation text; a count of predictions in the Romance card languages is
a count of scored positions. Each case in the project's own words, a negative next to it."""

from __future__ import annotations

import pytest
from helpers_reading import reading


# ---- D6: a stride ------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "Mean KLD against the BF16 model is 0.0121, on wikitext-2 test, context 2048, stride 512.\n",
        "We score KLD with `python score_kld.py --model q4 --reference bf16 --context-length 2048 --stride 512`: 0.0093 mean.\n",
    ],
)
def test_a_stride_is_a_scheme_of_positions(text):
    assert reading(text, 6).status != "missing"


def test_a_stride_of_a_perplexity_run_without_kl_is_not_read():
    text = (
        "Perplexity came out at 6.12 with `our-perplexity --context 4096 --stride 2048` over 40,000 tokens.\n\n"
        "Mean KLD against the BF16 model is 0.0121.\n"
    )
    assert reading(text, 6).status == "missing"


def test_a_stride_word_alone_is_not_read():
    text = "Mean KLD against the BF16 model is 0.0121; the kernel uses a strided layout.\n"
    assert reading(text, 6).status == "missing"


# ---- D3: a count of cases or samples joined to its unit ----------------------------------------------------------
@pytest.mark.parametrize("unit", ["48-case check", "16-sample parity set"])
def test_a_joined_count_of_cases_or_samples_describes_the_text(unit):
    text = f"On the old {unit} the split kernel gave mean KL 0.0021 against the reference.\n"
    assert reading(text, 3).status != "missing"


def test_a_joined_count_of_something_else_is_no_text():
    text = "On the old 48-layer model the split kernel gave mean KL 0.0021 against the reference.\n"
    assert reading(text, 3).status == "missing"


# ---- D6: a count of predictions in the Romance card languages ----------------------------------------------------
@pytest.mark.parametrize(
    "sentence",
    ["Cambiaron 31 de las 1.204 predicciones del conjunto.", "Com três janelas por artigo, são 12.288 previsões por modelo."],
)
def test_a_count_of_predictions_in_spanish_or_portuguese_is_a_count_of_positions(sentence):
    text = f"El KL medio frente a FP32 es 0,0124.\n\n{sentence}\n"
    assert reading(text, 6).status != "missing"


def test_a_prediction_word_without_a_count_is_not_read():
    text = "El KL medio frente a FP32 es 0,0124.\n\nLas predicciones cambiaron poco.\n"
    assert reading(text, 6).status == "missing"


# ---- D4: a fraction, a unit ratio or a report's file is no calibration data ----------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "| Quant | Calibration | Matrix bits/weight | Mean KL |\n|---|---|---|---|\n| IQ3 | four-format | 3.1 | 0.021 |\n",
        "| Quant (imatrix PTQ) | Passed | Mean KLD | Notes |\n|---|---|---|---|\n| IQ2_XS (imatrix PTQ) | 20/24 | 0.051 | `runs/LADDER.md` |\n",
    ],
)
def test_a_fraction_unit_ratio_or_report_file_names_no_calibration_data(text):
    assert reading(text, 4).status == "missing"


def test_a_calibration_file_still_names_the_data():
    text = "| Quant (imatrix from `calib/chat_mix.txt`) | Mean KLD |\n|---|---|\n| IQ2_XS | 0.051 |\n"
    assert reading(text, 4).status != "missing"


# ---- D6: evaluated tokens in Spanish and Portuguese ----------------------------------------------------------------
@pytest.mark.parametrize("sentence", ["La prueba se basa en 64 tokens evaluados.", "Foram 1.536 tokens avaliados no total."])
def test_a_count_of_evaluated_tokens_in_spanish_or_portuguese_is_a_count_of_positions(sentence):
    text = f"El KL medio frente a BF16 es 0,0031 nats. {sentence}\n"
    assert reading(text, 6).status != "missing"


def test_evaluated_tokens_without_a_count_are_not_read():
    text = "El KL medio frente a BF16 es 0,0031 nats. Los tokens evaluados vienen de wikitext.\n"
    assert reading(text, 6).status == "missing"
