"""Readings changed in issue 28's twelfth tuning round (tune12-b) for D1, D2, D7, D8 and D9: a model page's generation
snippet names no measurement engine; an arrow is a KL direction only between roles; "the KL from X" is a comparison of
the KL whatever comes before it; torchtitan's forward passes name the engine; "sem" is Portuguese, not SEM; a vocabulary
size as a compound modifier; a top-k written as a qualifier after the KL. Each case in the project's own words, a
negative next to it."""

from __future__ import annotations

import pytest
from helpers_reading import reading


# ---- D2: mlx_lm's generation programs ----------------------------------------------------------------------------
def test_a_model_page_generation_snippet_names_no_engine():
    text = (
        "# tiny-MLX\n\nA 4-bit MLX conversion of acme/tiny.\n\nMean KL against the original model: 0.031 nats.\n\n"
        "- Local Apps Settings\n- LM Studio\n- MLX LM\n"
        "How to use acme/tiny-MLX with MLX LM:\nGenerate or start a chat session\n"
        "# Install MLX LM uv tool install mlx-lm # Generate some text mlx_lm.generate --model \"acme/tiny-MLX\" --prompt \"Hi\"\n"
    )
    assert reading(text, 2).status == "missing"


def test_a_measuring_mlx_lm_program_still_names_mlx():
    text = "We measured the KL with `mlx_lm.kld --baseline-model ./bf16`: mean KL 0.031 nats.\n"
    assert reading(text, 2).status != "missing"


# ---- D2: a forward pass in torchtitan ----------------------------------------------------------------------------
def test_forward_passes_in_torchtitan_name_the_engine():
    text = (
        "I converted the checkpoint and ran forward passes in torchtitan against the HF model.\n\n"
        "The average KL divergence came out at 0.00012.\n"
    )
    assert reading(text, 2).status == "incomplete"


def test_torchtitan_in_a_background_sentence_is_not_the_engine():
    text = (
        "This repository is a fork of torchtitan.\n\n"
        "The average KL divergence came out at 0.00012.\n"
    )
    assert reading(text, 2).status == "missing"


# ---- D7: arrows ----------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        # mode 0 to mode m: a step of the work, no role on either side
        "| mode | top1 agreement | mean KL(0->m) |\n|---|---|---|\n| 1 | 99.1% | 0.0021 |\n",
        # two conversions side by side, not two directions of KL
        "| permuted | kl_div (hf->tt) | kl_div (tt->hf) |\n|---|---|---|\n| yes | 0.0001 | 0.0002 |\n",
        # a role to itself: a row's label
        "| stream → head | KL |\n|---|---:|\n| BF16 → BF16 | 0 |\n| int4 → BF16 | 0.550 |\n",
    ],
)
def test_an_arrow_without_roles_is_no_direction(text):
    assert reading(text, 7).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        "| mode | mean KL(base→quant) |\n|---|---|\n| 1 | 0.0021 |\n",
        "| model | KL (q→o) | KL (o→q) |\n|---|---|---|\n| int4 | 0.0021 | 0.0024 |\n",
    ],
)
def test_an_arrow_between_roles_is_a_direction(text):
    assert reading(text, 7).status != "missing"


# ---- D1: the KL's own preposition after a speed word --------------------------------------------------------------
def test_the_kl_from_a_reference_after_a_speed_figure():
    text = "- Int8 matmuls (stage 4): one step ran 1.4x faster, and the KL from bf16 was 0.0051 nats.\n"
    assert reading(text, 1).status != "missing"


def test_a_speed_comparison_names_no_reference():
    text = "- Int8 matmuls (stage 4): one step ran 1.4x faster than bf16, and the KL was 0.0051 nats.\n"
    assert reading(text, 1).status == "missing"


# ---- D9: "sem" in Portuguese ---------------------------------------------------------------------------------------
def test_portuguese_sem_is_not_a_standard_error():
    text = "Rodando em uma placa, sem fatiamento algum, a KL chegou a 0,023.\n"
    assert reading(text, 9).status == "missing"


def test_the_acronym_sem_is_a_standard_error():
    text = "The KL came out at 0.023 ± 0.001 (SEM over 40 prompts).\n"
    assert reading(text, 9).status != "missing"


# ---- D8: a vocabulary size as a compound modifier -----------------------------------------------------------------
def test_a_full_n_entry_vocabulary():
    text = "32 teacher-forced rows, full 151936-entry vocabulary: mean KL 0.0042.\n"
    assert reading(text, 8).status != "missing"


def test_an_n_entry_table_is_no_vocabulary():
    text = "32 teacher-forced rows from a full 4096-entry lookup table: mean KL 0.0042.\n"
    assert reading(text, 8).status == "missing"


# ---- D8: a top-k as the KL's qualifier -----------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "The KL vs BF16 KV at 8192 ctx / top-500: 0.0121 (top-1 99%).\n",
        "The knee metric is KLD(bf16‖quant) from the patched\n`score --kl-ref` (top-64): the KLD was 0.021 at the knee.\n",
    ],
)
def test_a_top_k_qualifying_the_kl(text):
    assert reading(text, 8).status != "missing"


@pytest.mark.parametrize(
    "text",
    [
        # another metric's top-k beside the KL
        "Mean KLD 0.021 and top-10 agreement 91%.\n",
        "Mean KLD 0.021, top-10 93%.\n",
        # a training loss's support, not the measurement's
        "QAT ran 600 steps (the loss is the KL divergence from BF16, top-256 plus tail).\n\nThe mean KL of the release is 0.012.\n",
    ],
)
def test_a_top_k_of_another_metric_or_a_loss(text):
    assert reading(text, 8).status == "missing"
