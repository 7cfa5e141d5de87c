"""Statement kinds of D2, D5, D6, D8 and D9 read by their structure (issue 28, fifth tuning round): a token count
in parentheses, windows by length with the windows named, a count in a KL table's row or under a lead-in, a
deployment's context, a ggml device, a device count after a serving verb, an architecture's vocabulary size, a
statistic word before the KL term with modifiers between, and statistic words that belong to another metric."""

from __future__ import annotations

import re

import pytest
from helpers_reading import reading

from kldcard.lint.read import position_counts

CLAIM = "Q4_K_M reaches a KLD of 0.0231"


# ---- D6 / D5: "(N tokens)" is how many tokens were scored, not a window's length ----------------------------------
@pytest.mark.parametrize(
    ("text", "count"),
    [
        (f"{CLAIM} against BF16 on chat text (3,150 tokens).\n", 3150),
        (f"{CLAIM} against BF16 (1800 tokens evaluated with the cache off).\n", 1800),
    ],
)
def test_a_token_count_in_parentheses_is_the_positions_not_the_context(text, count):
    d6 = reading(text, 6)
    assert (d6.status, d6.value.get("count")) == ("incomplete", count)
    assert reading(text, 5).status == "missing"


def test_a_calibration_sets_size_in_parentheses_is_no_count():
    text = f"{CLAIM} against BF16.\n\n- Calibration: imatrix from calib.txt (300k tokens); none of it is in the evaluation text.\n"
    assert reading(text, 6).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        "La KLD media frente a BF16 es 0,0231; la evaluación puntuó 12.400 filas de WikiText.\n",
        "A KLD média contra BF16 é 0,0231, medida em 40 janelas.\n",
    ],
)
def test_rows_and_windows_counted_in_the_card_languages(text):
    assert reading(text, 6).status != "missing"


def test_windows_by_length_with_the_windows_named_are_positions():
    d = reading(f"{CLAIM} over 24 prompts x 2048 tokens.\n", 6)
    assert d.status != "missing", d


def test_a_count_in_a_kl_tables_row_is_read_and_not_in_a_speed_tables():
    kl = "| arm | mean KL | top-1 |\n|---|---|---|\n| quant vs base (12,400 tokens) | 0.0231 | 0.97 |\n"
    assert reading(kl, 6).value.get("count") == 12400
    speed = "| arm | tok/s |\n|---|---|\n| batch one (12,400 tokens) | 55 |\n"
    m = position_counts.PARENTHESISED.search(speed)
    assert m is not None and not position_counts.kl_context(speed, m)


def test_a_lead_in_over_a_kl_printout_binds_its_count():
    text = "Run B, 16 prompts x 512 tokens:\n\n```\nname   avg_kl_div\nq4     0.0231\n```\n"
    m = position_counts.WINDOWS_BY_LENGTH.search(text)
    assert m is not None and position_counts.kl_context(text, m)
    other = "Run B, 16 prompts x 512 tokens:\n\n```\nname   tok_s\nq4     55.1\n```\n"
    m = position_counts.WINDOWS_BY_LENGTH.search(other)
    assert m is not None and not position_counts.kl_context(other, m)


def test_time_to_first_token_is_no_scheme():
    text = f"{CLAIM} against BF16.\n\n| metric | BF16 | Q4_K_M |\n|---|---|---|\n| Time to first token (ms) | 700 | 560 |\n"
    assert reading(text, 6).status == "missing"


# ---- D5: a window length without its unit; a deployment's context ---------------------------------------------
def test_chunks_of_a_length_without_the_unit_are_the_context():
    d = reading(f"{CLAIM} against BF16 over the text in chunks of 1024, scored once.\n", 5)
    assert d.status != "missing" and d.value.get("n_ctx") == 1024, d


@pytest.mark.parametrize(
    "text",
    [
        f"Start it with:\n\n```sh\nllama-server -m model.gguf -c 16384\n```\n\n{CLAIM} against BF16.\n",
        f"```sh\nvllm serve org/model --max-model-len 8192\n```\n\n{CLAIM} against BF16.\n",
        f"| setup | tok/s |\n|---|---|\n| 8192-token context | 55 |\n\n{CLAIM} against BF16.\n",
    ],
)
def test_a_deployments_context_is_not_the_measurements(text):
    assert reading(text, 5).status == "missing"


# ---- D2 ------------------------------------------------------------------------------------------------------
def test_a_device_count_after_a_serving_verb_is_the_deployment():
    text = f"A 2-bit build, served on **2× RTX PRO 6000** for long context.\n\n{CLAIM} against BF16.\n"
    assert reading(text, 2).status == "missing"


@pytest.mark.parametrize("device", ["Vulkan0", "CUDA0", "ROCm1", "CPU_REPACK"])
def test_a_ggml_device_names_llama_cpp_without_a_version(device):
    d = reading(f"| backend | mean KLD |\n|---|---|\n| {device} | 0.0012 |\n", 2)
    assert (d.status, d.value.get("engine")) == ("incomplete", "llama.cpp")


# ---- D8 ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM} against BF16.\n\n## Model\n\n- Vocab: 151,936 tokens, max context: 131,072 tokens\n",
        f"{CLAIM} against BF16.\n\nThe encoder (`hidden_size = 1024`, `num_hidden_layers = 28`, `vocab_size = 50368`).\n",
        f"{CLAIM} against BF16.\n\nThe long window means a long report needs no truncation.\n",
    ],
)
def test_a_models_vocabulary_size_or_an_inputs_truncation_is_no_vocabulary_statement(text):
    assert reading(text, 8).status == "missing"


def test_the_full_vocabulary_with_its_size_abbreviated():
    assert reading(f"{CLAIM} against BF16 over the full 152k vocabulary.\n", 8).value == {"scheme": "full"}


def test_a_vocabulary_size_of_the_comparison_and_no_vocabulary_truncation_stay_full():
    assert reading(f"{CLAIM} against BF16, summed over vocab 151,936.\n", 8).status != "missing"
    assert reading(f"{CLAIM} against BF16, no truncation of the logits.\n", 8).value == {"scheme": "full"}


# ---- D9 ------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "statistic"),
    [
        ("The FP8 head gives a mean weight-only KL of 0.0231 against BF16.\n", "mean"),
        ("Max per-position KLD against BF16 is 0.31.\n", "max"),
        ("4B の FP8 の最大KLDは 0.025 だった。\n", "max"),
    ],
)
def test_a_statistic_before_the_kl_term_with_modifiers_between(text, statistic):
    d = reading(text, 9)
    assert d.status == "stated" and d.value.get("statistic") == statistic, d


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM} against BF16.\n\nNo tensor is above twice its median reconstruction error.\n",
        f"{CLAIM} against BF16.\n\nBits per weight is the average over the whole model.\n",
        f"{CLAIM} against BF16.\n\nThe MMLU score uses 1000 random samples, 95% CI.\n",
    ],
)
def test_a_statistic_word_of_another_metric_is_not_the_klds(text):
    assert reading(text, 9).status == "missing"


def test_statistic_words_with_a_kl_term_are_still_read():
    assert reading("The median KL against BF16 is 0.0231.\n", 9).value.get("statistic") == "median"
    assert re.search("bootstrap", "KLD 0.0231 with a paired bootstrap interval")  # the sentence names the KL
    d = reading(f"{CLAIM} against BF16; the KL interval is a paired window bootstrap.\n", 9)
    assert d.status != "missing", d


@pytest.mark.parametrize(
    "text",
    [
        "Refusals: 7%, original: 95%\nKL divergence: 0.4410\n",  # a percentage on the line before is no percentile
        "Q4_K_M reaches a KLD of 0.0231 against BF16, but a KLD of 0.0231 does not\nmean much on a flat distribution.\n",
    ],
)
def test_a_percentage_on_another_line_or_the_verb_mean_is_no_statistic_label(text):
    assert reading(text, 9).status == "missing"


def test_a_percentile_label_and_a_mean_label_on_the_line_are_read():
    assert reading("Refusals: 7%\n99% KLD: 0.4410\n", 9).value.get("statistic") == "p99"
    assert reading("The mean KLD against BF16 is 0.0231.\n", 9).value.get("statistic") == "mean"


@pytest.mark.parametrize("device", ["Apple M6", "M7 Max"])
def test_apple_silicon_of_later_generations_is_hardware(device):
    d = reading(f"{CLAIM} against BF16, measured on an {device} with 128 GB.\n", 2)
    assert d.status != "missing" and d.value.get("device"), d
