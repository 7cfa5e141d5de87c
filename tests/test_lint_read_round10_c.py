"""Readings changed in issue 28's tenth tuning round (tune10-c): the options of a shell command written over several
lines (backslash continuations) are one statement with the script that measures; prompts or samples counted, then each
one's length ("16 prompts de 512 tokens") give the context length; a context in a sentence about memory is the
deployment's. Each form has a look-alike next to it."""

from __future__ import annotations

import pytest
from helpers_reading import reading

CLAIM = "Q4_K_M reaches a mean KLD of 0.0231 against BF16."


def test_a_sample_count_in_a_continued_measuring_command_is_read():
    text = (f"{CLAIM}\n\n```\npython tools/measure_logit_kl.py \\\n  --model ./q4 \\\n  --n-samples 16 \\\n"
            "  --dtype bfloat16\n```\n")
    assert reading(text, 6).status != "missing"


def test_a_sample_count_in_a_command_of_another_job_is_not():
    text = (f"{CLAIM}\n\n```\npython tools/make_plots.py \\\n  --input ./runs \\\n  --n-samples 16 \\\n"
            "  --dpi 200\n```\n")
    assert reading(text, 6).status == "missing"


@pytest.mark.parametrize(
    ("text", "n_ctx"),
    [
        ("El KLD medio frente al bf16 es 0,0231: 24 prompts de 1024 tokens, puntuados hasta el final.\n", 1024),
        ("Mean KLD vs BF16 is 0.0231, measured on 180 samples of 2048 tokens from our chat logs.\n", 2048),
    ],
)
def test_counted_prompts_or_samples_of_a_length_give_the_context(text, n_ctx):
    d = reading(text, 5)
    assert d.status != "missing" and d.value.get("n_ctx") == n_ctx, d


def test_prompts_counted_without_a_length_give_no_context():
    assert reading("Mean KLD vs BF16 is 0.0231 over 24 prompts from our chat logs.\n", 5).status == "missing"


def test_a_context_in_a_memory_row_is_the_deployments():
    text = ("| Métrica | Valor |\n|---|---|\n| Divergencia KL vs bf16 | 0,0231 |\n"
            "| Memoria a 8k de contexto (RTX 4090) | 2,1 GB |\n")
    assert reading(text, 5).status == "missing"


def test_a_context_in_a_measuring_row_stays():
    text = ("| Métrica | Valor |\n|---|---|\n| Divergencia KL vs bf16 | 0,0231 |\n"
            "| Evaluada a 8k de contexto | sí |\n")
    assert reading(text, 5).status != "missing"


def test_a_calibration_set_said_to_be_withheld_is_not_named():
    text = f"{CLAIM}\n\nThe imatrix data behind these GGUFs has not been released.\n"
    assert reading(text, 4).status == "missing"


def test_a_calibration_set_named_stays():
    text = f"{CLAIM}\n\nThe imatrix data behind these GGUFs is calibration_datav3.txt from the llama.cpp discussions.\n"
    assert reading(text, 4).status != "missing"


LEAD_IN = ("Over the held-out 20-prompt, 10-step run\n(`experiments/run_head.py`) the learned head falls short of the gate:\n\n"
           "| active rows | {col} | top-1 agreement |\n|---|---|---|\n| 30% | 0.139 | 78% |\n")


def test_a_counted_run_in_a_wrapped_lead_in_over_a_kl_table_is_a_described_text():
    assert reading(LEAD_IN.format(col="mean KL (nats)"), 3).status != "missing"


def test_the_same_lead_in_over_a_table_not_headed_by_the_kl_is_not():
    text = LEAD_IN.format(col="loss") + "\nThe int4 head reaches a mean KL of 0.139 against bf16.\n"
    assert reading(text, 3).status == "missing"


def test_a_file_pointed_to_with_see_is_where_results_are_kept():
    text = "Once the head was chunked: INT8 KL 0.0007 (0 flips), INT4 KL 0.0454 (3 flips); see `accuracy_int4_vs_bf16.txt`.\n"
    assert reading(text, 3).status == "missing"


def test_a_file_the_kl_was_measured_on_stays():
    text = "INT8 KL 0.0007 and INT4 KL 0.0454 against bf16, measured on `eval_prompts_v2.txt`.\n"
    assert reading(text, 3).status != "missing"
