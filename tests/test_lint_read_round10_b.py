"""Readings changed in issue 28's tenth tuning round (tune10-b) for D1, D2, D7, D8 and D9: Grace-Blackwell superchips
and a GPU compute stack with its version name the hardware and platform of a run; a speed, memory or support row
names hardware for that figure; a Jensen-Shannon divergence says nothing of a KL's direction; a decimal before
"-nat" is a measured KL, and the logits or distribution read whole state the vocabulary; a distillation's
"Teacher:" field and "agreed with X" name the reference, a baseline's own value record and a rival with its own
figure ("0.0168 ... vs FP8 0.0265") do not; a bootstrap
counts as an uncertainty model only with its interval. Each case in the project's own words, a negative next to it."""

from __future__ import annotations

import pytest
from helpers_reading import reading


# ---- D2 ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize("box", ["two GB200 nodes", "one GB300 tray"])
def test_a_grace_blackwell_superchip_names_the_hardware(box):
    text = f"We measured the mean KL of the rollout engine against the trainer on {box}: 0.0031.\n"
    assert reading(text, 2).status != "missing"


def test_a_word_that_only_looks_like_a_superchip_is_not_read():
    text = "We measured the mean KL of the rollout engine against the trainer on the GB2000 preset: 0.0031.\n"
    assert reading(text, 2).status == "missing"


@pytest.mark.parametrize("stack", ["ROCm 7.2.1", "HIP 6.4.43484", "CUDA 12.8"])
def test_a_compute_stack_with_its_version_names_the_platform(stack):
    text = f"## Results ({stack}, int8 activations)\n\nThe mean KL against the bf16 run is 0.0042.\n"
    assert reading(text, 2).status != "missing"


@pytest.mark.parametrize("stack", ["ROCm", "CUDA graphs", "HIP-ified"])
def test_a_compute_stack_without_a_version_is_not_read(stack):
    text = f"## Results ({stack} path, int8 activations)\n\nThe mean KL against the bf16 run is 0.0042.\n"
    assert reading(text, 2).status == "missing"


SPEED_ROWS = (
    "| Metric | Ours | Theirs |\n|---|---|---|\n| KL vs bf16 | 0.011 | 0.019 |\n"
    "| First token on RTX 4090 | 41 ms | 38 ms |\n| Memoria a 8k de contexto (RTX 4090) | 1,1 GB | 1,4 GB |\n"
    "| 16k context supported | yes (RTX 4090, L40) | yes |\n"
)


def test_hardware_in_a_speed_memory_or_support_row_is_not_the_runtime():
    assert reading(SPEED_ROWS, 2).status == "missing"


def test_hardware_in_a_row_of_its_own_is_still_the_runtime():
    text = "| Metric | Ours | Theirs |\n|---|---|---|\n| KL vs bf16 | 0.011 | 0.019 |\n| Measured on | RTX 4090 | RTX 4090 |\n"
    assert reading(text, 2).status != "missing"


# ---- D7 ---------------------------------------------------------------------------------------------------------
def test_a_jensen_shannon_divergence_gives_no_direction():
    text = "| Metric | eager | fused |\n|---|---|---|\n| Mean KL | 0.0121 | 0.0119 |\n| Mean JSD | 0.0031 | 0.0030 |\n"
    assert reading(text, 7).status == "missing"
    assert reading(text.replace("Mean JSD", "Mean Jensen-Shannon"), 7).status == "missing"


def test_a_named_direction_beside_it_still_counts():
    text = "| Metric (forward KL) | eager | fused |\n|---|---|---|\n| Mean KL | 0.0121 | 0.0119 |\n| Mean JSD | 0.0031 | 0.0030 |\n"
    assert reading(text, 7).status != "missing"


# ---- D8 ---------------------------------------------------------------------------------------------------------
def test_a_decimal_before_nat_is_a_measured_kl_not_a_window():
    text = "The cache bug showed up as a 3.41-nat jump: the same model scored KLD 3.41 against itself.\n"
    assert reading(text, 8).status == "missing"


def test_a_whole_number_before_nat_is_still_a_window():
    text = "Each position keeps log-probs above a 20-nat floor; the mean KLD is 0.0081 against bf16.\n"
    assert reading(text, 8).status != "missing"


@pytest.mark.parametrize(
    "sentence",
    [
        "The gate passed on 48 matched full-logit samples (mean KL 0.0019, max 0.0120).",
        "We take the KL over the full distribution at each step; the mean is 0.0019.",
    ],
)
def test_the_logits_or_distribution_read_whole_state_the_vocabulary(sentence):
    assert reading(sentence + "\n", 8).status != "missing"


@pytest.mark.parametrize(
    "text",
    [
        "Full logits, per-token KLD traces and hashes sit in the linked dataset.\n\nThe mean KLD was 0.0019 against bf16.\n",
        "Decoding keeps the full logits of each step in memory.\n\nThe mean KLD was 0.0019 against bf16.\n",
    ],
)
def test_a_stored_file_list_or_a_sentence_without_kl_is_no_vocabulary(text):
    assert reading(text, 8).status == "missing"


# ---- D1 ---------------------------------------------------------------------------------------------------------
def test_a_teacher_field_names_the_reference():
    text = "Setup:\n\n- Teacher: the frozen 1.5B checkpoint\n- Student: its 4-bit copy\n\nHeld-out KL after 300 steps: 0.0142.\n"
    assert reading(text, 1).status != "missing"


def test_a_teacher_word_without_a_field_is_not_read():
    text = "Setup:\n\n- Teacher forcing on every step\n- Student: its 4-bit copy\n\nHeld-out KL after 300 steps: 0.0142.\n"
    assert reading(text, 1).status == "missing"


def test_agreed_with_names_the_reference():
    text = "All eight greedy tokens agreed with native BF16, and the mean KL was 0.0091.\n"
    assert reading(text, 1).status != "missing"


def test_agreed_alone_names_nothing():
    text = "All eight greedy tokens agreed, and the mean KL was 0.0091.\n"
    assert reading(text, 1).status == "missing"


def test_a_baseline_field_holding_its_own_values_names_no_reference():
    text = "- Q5_K baseline: KL=0.0712, top-P=86.10%, size=512.3 MB\n- Q5_K tuned: KL=0.0655, top-P=87.02%\n"
    assert reading(text, 1).status == "missing"


def test_a_baseline_field_naming_a_model_still_counts():
    text = "- Baseline: Q8_0 of the same model\n- Q5_K tuned: KL=0.0655, top-P=87.02%\n"
    assert reading(text, 1).status != "missing"


def test_a_rival_with_its_own_figure_after_a_measured_one_is_no_reference():
    text = "The trial build reads KLD 0.0171 / top-1 95.2%, compared vs INT8 0.0249 on the same window.\n"
    assert reading(text, 1).status == "missing"


def test_a_reference_followed_by_its_value_still_counts():
    text = "bf16 : weights 3.8 GB | KL vs HF bf16 0.0004 | decode 19 tok/s\n"
    assert reading(text, 1).status != "missing"


# ---- D9 ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "sentence",
    [
        "The KLD is 0.0046 (bootstrap 95% CI 0.0044-0.0049).",
        "The KLD is 0.0046; the 95% bootstrap over prompts puts it within 0.0003.",
        "The KLD is 0.0046, with a paired bootstrap interval of 0.0044 to 0.0049.",
    ],
)
def test_a_bootstrap_with_its_interval_is_an_uncertainty_model(sentence):
    assert reading(sentence + "\n", 9).status != "missing"


@pytest.mark.parametrize(
    "sentence",
    [
        "The KLD column is 0.0046 after FP64 normalisation and a paired window bootstrap.",
        "Run `bootstrap.sh` first, then the KLD probe prints 0.0046.",
    ],
)
def test_a_bootstrap_only_described_is_no_statistic(sentence):
    assert reading(sentence + "\n", 9).status == "missing"
