"""Look-alikes of round 24's reading rules, found by a review of the round (each rule's own form is tested beside it
in tests/test_lint_read_forms_*.py): a number, a length, a file, a fraction or a pair that the new patterns matched and
that is something else. Each case here was read wrongly by the round's first version."""

from __future__ import annotations

import pytest
from helpers_reading import reading

CLAIM = "Q4_K_M reaches a mean KLD of 0.0231 against BF16"


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM}, measured at a 4096-token sequence length.\n",  # a setting, not a text (eval_text_forms.SIZED)
        f"{CLAIM}, computed over all tokens of `tokenizer.json`.\n",  # a tokenizer's file (FROM_FILE)
        f"{CLAIM}; the prompts from `chat_template.jinja` wrap every request.\n",  # a template
        f"{CLAIM}.\n\n- 文本：未公开\n",  # a field that withholds the text (TEXT_FIELD)
        f"{CLAIM}.\n\n- Dataset de evaluación: no publicado\n",
        f"{CLAIM}.\n\n- 提示词：使用默认聊天模板\n",  # a prompt format, the default
        f"{CLAIM}.\n\nGSM8K, problems 1-200: 81.5% accuracy after quantization.\n",  # a suite's score (ITEMS_PICKED)
        "Prefill uses the original 664-token prompt.\n\n| Quant | pp512 t/s | Mean KLD |\n|---|---|---|\n| Q4_K_M | 1510 | 0.0231 |\n",
    ],
)
def test_these_are_not_the_kls_text(text):
    d = reading(text, 3)
    assert d.status == "missing", d


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM}, and top-1 agreement holds in 7/8 languages.\n",  # a count of languages (TOP1_FRACTION)
        f"{CLAIM}; the argmax matches on 15/16 layers.\n",
        f"{CLAIM}, with top-1 agreement for the 4/8-bit mix.\n",
        f"{CLAIM}; el argmax coincide en 7/8 idiomas.\n",
    ],
)
def test_a_fraction_of_something_else_counts_no_positions(text):
    d = reading(text, 6)
    assert d.status == "missing", d


def test_a_model_name_glued_to_a_japanese_unit_is_no_count():
    d = reading(f"{CLAIM}. Llama3プロンプトテンプレートで測定した。\n", 3)
    assert not any("3プロンプト" in e.text for e in d.evidence), d  # (COUNTED_JA: the count after no letter)


def test_a_top1_fraction_of_tokens_still_counts_them():
    d = reading(f"{CLAIM}, with top-1 agreement on 127/128 top tokens.\n", 6)
    assert d.status != "missing" and d.value.get("count") == 128, d


@pytest.mark.parametrize(
    "text",
    [
        "Distillation minimises the KL between the teacher and the student.\n\nThe 3-bit export reaches a mean KLD of 0.021.\n",
        "The 3-bit export has the same tokenizer as the teacher; its mean KLD is 0.021.\n",
        "Same teacher-student recipe as v1; the 3-bit export reaches a mean KLD of 0.021.\n",
    ],
)
def test_a_training_objective_or_another_shared_thing_names_no_reference(text):
    d = reading(text, 1)
    assert d.status == "missing", d


def test_a_baseline_that_is_a_mixed_precision_is_still_the_reference():
    d = reading("**Baseline:** 4/8-bit mixed MLX export\n\nThe 3-bit export reaches a mean KLD of 0.021 against it.\n", 1)
    assert d.status != "missing", d


@pytest.mark.parametrize(
    "text",
    [
        "## Draft model\n\n- draft_ctx: 2048\n\n## Results\n\nThe 3-bit export reaches a mean KLD of 0.021 against BF16.\n",
        "- serve_ctx = 65536\n\nThe 3-bit export reaches a mean KLD of 0.021 against BF16.\n",
        "- serve_n_ctx = 65536\n\nThe 3-bit export reaches a mean KLD of 0.021 against BF16.\n",  # a prefixed full key too
    ],
)
def test_another_runs_context_key_gives_no_length(text):
    d = reading(text, 5)
    assert d.status == "missing", d
