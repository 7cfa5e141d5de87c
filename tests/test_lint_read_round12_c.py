"""Readings changed in issue 28's twelfth tuning round (tune12-c): a record's field line (a tool's printout, "Label:
value") is its own statement, so a hedge in the prose the sentence splitter joins to it does not veto its count or
length; the language's slashed abbreviations ("n/a", "w/o") and a slashed list of quant names ("K_P/K_L") are no
dataset path beside the calibration word. Each form has a look-alike next to it."""

from __future__ import annotations

import pytest
from helpers_reading import reading

CLAIM = "Q4_K_M reaches a mean KLD of 0.0231 against BF16."


def test_a_printout_field_is_read_though_a_hedge_follows_without_a_stop():
    text = ("Eval on our chat set vs the bf16 cache:\nMean KLD: 0.0231 nats/token\nScored positions: 48,210\n"
            "One day this could run on a laptop!\n")
    assert reading(text, 6).status != "missing"


def test_a_hedged_sentence_still_vetoes_its_count():
    text = f"{CLAIM}\n\nIf we had more time we could score 48,210 positions per run.\n"
    assert reading(text, 6).status == "missing"


def test_a_clause_with_an_equals_sign_is_no_field_line():
    # "k=1024, ..." is a sentence's clause: the line is not a record's field, the hedge of its sentence still applies
    text = (f"{CLAIM}\n\n- Fitted on 900 calibration trajectories\n  with teacher targets at k=1024, sequence length 1024,"
            " and it could be trained longer.\n")
    assert reading(text, 5).status == "missing"


@pytest.mark.parametrize(
    "row",
    [
        # "n/a" in a table's cells, a slashed list of quant names: no dataset
        "| Laguna 2.1 IQ4_XS | n/a | n/a | Official imatrix IQ4_XS; no KL vs BF16 for this file |\n",
        "Low-bit GGUF ladders grew around it (Unsloth Dynamic, imatrix, K_P/K_L, NVFP4).\n",
        "Quants with imatrix tuning and/or calibration were slower on I/O here.\n",
    ],
)
def test_a_slashed_abbreviation_is_no_calibration_data(row):
    assert reading(f"{CLAIM}\n\n{row}", 4).status == "missing"


@pytest.mark.parametrize(
    "row",
    [
        # a real path or Hub dataset beside the calibration word is still read
        "The imatrix was computed on data/calibration_v3.txt before quantizing.\n",
        "Calibration used the imatrix from bartowski/calibration_datav3 as published.\n",
    ],
)
def test_a_dataset_path_beside_the_calibration_word_is_read(row):
    assert reading(f"{CLAIM}\n\n{row}", 4).status != "missing"


@pytest.mark.parametrize(
    "text",
    [
        # the output layer's logits, at every position: no scheme of scored positions
        "# Blend final-logit KLD tail comparison\n\nQ4_K_M reaches a mean KLD of 0.0231 against BF16.\n",
        f"{CLAIM}\n\n| metric | change |\n|---|---|\n| final-logit L2 | -46.11 % |\n",
    ],
)
def test_final_logits_are_no_position_scheme(text):
    assert reading(text, 6).status == "missing"


@pytest.mark.parametrize(
    "row",
    ["Only the final token of each prompt is scored.", "We score the last-logit distribution of each prompt.",
     "KL is taken at the final position of every window."],
)
def test_the_last_position_is_still_a_scheme(row):
    assert reading(f"{CLAIM} {row}\n", 6).status != "missing"


def test_a_corpus_labelling_a_row_of_a_kl_table_is_the_text():
    text = ("| KLD vs own bf16 | q4 | q8 |\n|---|---|---|\n| WikiText-2 — median | 0.203 | 0.027 |\n"
            "| C4 — mean | 0.807 | 0.031 |\n")
    assert reading(text, 3).status != "missing"


def test_a_benchmark_heading_a_score_column_is_not():
    text = ("| Quant | Mean KLD | GSM8K (%) |\n|---|---|---|\n| q4 | 0.0231 | 85.1 |\n"
            "| q8 | 0.0040 | 86.0 |\n")
    assert reading(text, 3).status == "missing"
