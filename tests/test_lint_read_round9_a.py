"""Claim finding and hard negatives of issue 28's ninth tuning round (tune9-a): section numbers, overflows, missed
targets, defaults, speed factors, trainer metric lists, code accumulators and unfenced code lines give no KLD claim;
a comparative "bigger loss" is a quality loss. Each case in the project's own words, with its positive next to it."""

from __future__ import annotations

import pytest
from helpers_reading import claim_lines


@pytest.mark.parametrize(
    "text",
    [
        "| Requirement | Value | Source |\n|---|---|---|\n| accuracy | attention KL 散度 < 0.02 | 设计书 4.1 节 |\n",  # a section number
        "The fused KL kernel overflows to `-3.40e38` on long batches.\n",  # an overflow, not a value
        "A build that passes the smoke test but misses KL 0.02 points to bad scales.\n",  # a target missed
        "Eval results:\n\n- Loss: 0.41\n- Rewards/chosen: 1.2\n- Logps/rejected: -210.5\n- Kl: 950.2\n",  # a trainer's metrics
    ],
)
def test_section_numbers_overflows_targets_and_trainer_lists_are_no_claim(text):
    assert not claim_lines(text)


@pytest.mark.parametrize(
    "text",
    [
        "| Setting | Mean KLD |\n|---|---|\n| int4 | 0.021 |\n",  # a table value stays
        "On section two of the prompts the mean KLD was 0.034.\n",  # a word, not a section number
        "Eval results:\n\n- Top-1 agreement: 0.93\n- Mean KL: 0.041\n",  # a list without rewards stays
        "The int4 build measures KL 0.008 against bf16, well inside the gate.\n",
    ],
)
def test_their_positives_stay(text):
    assert claim_lines(text)


def test_an_accumulator_set_to_zero_in_code_is_no_claim():
    assert not claim_lines("The script:\n\n    kl_sum = 0.0\n    for batch in loader:\n        kl_sum += kl(batch)\n")
    assert claim_lines("The pruned model's KL = 0.0 on every prompt, so the layers were dead.\n")


def test_a_default_is_a_setting_not_a_value():
    assert not claim_lines("The check fails when KLD is not below KLD_MAX (default 0.04).\n")
    assert claim_lines("With the default quant mix the KLD is 0.04 against bf16.\n")


def test_unfenced_json_numbers_belong_to_their_own_key():
    text = ('Result record:\n\n{\n "cell": "int4_pw",\n "kl_nats": 0.0311,\n "drift_per_epoch": [\n  0.4123,\n'
            '  0.5871\n ],\n "selectivity": 0.998\n}\n')
    assert claim_lines(text) == [5]


def test_unfenced_plot_code_keeps_only_its_kl_lines():
    text = ('budget = [0, 100, 200]\nkl = [0.051, 0.032, 0.027]\nfig, ax = plt.subplots(figsize=(6.4, 2.6))\n'
            'ax.set_ylim(0, 0.08)\n')
    assert claim_lines(text) == [2]


def test_a_speed_factor_is_no_kld_number():
    assert not claim_lines("Q6_K keeps the KLD low, but the path is 2.1× slower on this card.\n")
    assert claim_lines("Q6_K keeps the KLD at 0.004, but the path is 2.1× slower on this card.\n")


def test_a_bigger_loss_is_a_quality_loss():
    assert claim_lines("Dropping the top 1% of channels (KLD 0.081) is a bigger loss than 4-bit weights.\n")
    assert not claim_lines("We add the KL term to the loss with weight 0.1 during fine-tuning.\n")
