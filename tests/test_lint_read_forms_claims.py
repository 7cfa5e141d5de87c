"""Which texts carry a measured KLD claim (kldcard.lint.claims): KL numbers that are no measurement give none —
section numbers, overflows, missed targets, defaults and a code's fallbacks, speed factors, a trainer's metric list,
code accumulators, unfenced code lines, tolerances, settings, definitions, bounds with their sign, file sizes, a
comparison word before a Chinese number, a timing in a log line, and a training run's learning rate, coefficient,
penalty or reward (in the card languages too). Relative changes with an amount, shares, factors, zero outcomes, a
comparative "bigger loss" and a gate met by a verb stay claims. Each case in the project's own words, with its
positive next to it."""

from __future__ import annotations

import pytest
from helpers_reading import claim_lines

from kldcard.lint.markdown import split_cells


# ---- section numbers, overflows, targets, defaults, code ---------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "| Requirement | Value | Source |\n|---|---|---|\n| accuracy | attention KL 散度 < 0.02 | 设计书 4.1 节 |\n",  # a section number
        "The fused KL kernel overflows to `-3.40e38` on long batches.\n",  # an overflow, not a value
        "A build that passes the smoke test but misses KL 0.02 points to bad scales.\n",  # a target missed
        "Eval results:\n\n- Loss: 0.41\n- Rewards/chosen: 1.2\n- Logps/rejected: -210.5\n- Kl: 950.2\n",  # a trainer's metrics
        "## 2.4 KL 散度的定义\n\n下面先给出公式。\n",  # a heading's number, the KL term after it
        "Side effects grow with the dose, and ρ(‖v‖, KL) = +0,91 over the sweep.\n",  # a correlation with KL
        "Across the runs, corr(KL, Δacc): 0.93.\n",
        "   print(f'KL divergence: Would be ~0.000002 (fine)')\n",  # a hypothetical value
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
        "## Results\n\n2.4 KL 散度的均值为 0.031。\n",  # a number under the heading, not on it
        "Side effects grow with the dose: KL 0.091 at the top dose (ρ = 0.91 with the dose).\n",  # KL beside a correlation
        "The int4 build would be fine: its KL divergence is 0.0021 against bf16.\n",  # a measured value beside a conditional
        "## 0.0038 mean KLD at Q4_K_M against bf16\n\nThe table below has the rest.\n",  # a value on a heading, under 1
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


# ---- relative changes, shares, factors, zero outcomes ------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "Against the bf16 weights, the mean KL divergence drops by 30% with the new scales.\n",
        "With GPTQ the next-token KLD falls by 20–25% on every prompt set.\n",
        "Most of the error came from the port (about 80% of an int4 KLD was the engine gap).\n",
        "On every model the new rounding cuts the KL divergence to the bf16 weights by a factor of 1/2 over RTN.\n",
        "The new rounding reduces the mean KLD against fp16 by 1/4 on all three sizes.\n",
        "The int4 down_proj is not lossless: it gives ~3.2x the KLD from BF16 of the Q8_0 file.\n",
        "The handoff run gives KL ~0.61x of the plain run's KL on the small model.\n",
        "After the refactor the KL divergence of the 7B is wrong: it always comes out as 0.\n",
        # a zero given to the KL and a second metric together ("both")
        "After the kernel patch, KLD and the max abs diff were both 0 on all 96 rows.\n",
        "修正後のカーネルでは、KLDと最大誤差はともに0だった。\n",
        "Rounding the scales back to the fp16 grid causes a 3.1x KLD increase on the 8B.\n",
        "- Keeping the embeddings at Q5_K is borderline: KLD 0.0712 (+4.1% above threshold).\n",
        "- Dropping the head to Q4_K raised KLD by 0.0121 (15% above the agreed threshold).\n",
    ],
)
def test_relative_changes_shares_factors_and_zero_outcomes_are_claims(text):
    assert claim_lines(text)


@pytest.mark.parametrize(
    "text",
    [
        "The mean KL divergence drops quickly once the scales are fitted.\n",  # no amount
        "A rerun of the same command should land within 3% of this KLD mean.\n",  # a tolerance
        "Set the KL budget to 1/3 of the default before the second stage.\n",  # a setting, not a change
        "The run takes 3.2x the time of the Q8_0 file.\n",  # a factor of no KL
        "The KL divergence of a model with itself comes out as 0 when the weights are equal.\n",  # a definition
        "KL and the total variation are both 0 when the two models are the same.\n",  # a definition
        "Stop the run when the KL penalty rises above threshold 0.02 for a 3x longer stretch.\n",  # a training setting
        "A 2x KLD increase over the baseline is the threshold for a rollback.\n",  # a rule, its threshold unnumbered
    ],
)
def test_amountless_tolerances_settings_and_definitions_are_no_claim(text):
    assert not claim_lines(text)


@pytest.mark.parametrize(
    "text",
    [
        "새 양자화에서 파일 크기는 `6%` 늘었지만 최대 KLD는 `48%` 줄었다.\n",  # the verb after the amount (Korean)
        "新しいスケールでは平均KLDが35%減少した。\n",  # (Japanese)
        "换用新的缩放后，KL 散度降低了 40%。\n",  # the verb before the amount (Chinese)
    ],
)
def test_a_relative_change_with_the_verb_where_the_language_puts_it(text):
    assert claim_lines(text)


@pytest.mark.parametrize(
    "text",
    [
        "새 양자화에서 파일 크기는 `6%` 늘었고 KLD 설명은 아래에 있다.\n",  # the change is the file size's
        "KLD는 측정하지 않았고 속도는 20% 증가했다.\n",  # the verb's amount is the speed's, across a clause
        "换用新的缩放后，推理速度提高了 40%，KL 散度见下表。\n",
    ],
)
def test_a_change_of_another_quantity_in_those_languages_is_no_claim(text):
    assert not claim_lines(text)


def test_a_chinese_comparison_word_before_the_number_is_a_bound():
    assert not claim_lines('    else bad "KLD 变差超过 0.0005"; fi\n')
    assert not claim_lines("验收：量化后 KLD 低于 0.01 即可。\n")


def test_a_chinese_measurement_next_to_a_comparison_stays_a_claim():
    assert claim_lines("开启融合后平均 KLD 为 0.0031，比关闭时高 0.0002。\n")


# ---- bounds, fallbacks, file sizes, a training run's settings ----------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        # a bound with its sign, the number in code or bold marks: an acceptance row of a plan
        "| Stage | Target |\n|---|---|\n| int8 | agreement >= `0.99`; mean token KL(BF16||INT8) <= `0.004` |\n",
        "Before we measure anything, the gate is: mean KL ≤ `0.02` nats.\n",
        # code's defaults: a lookup's fallback argument, a conditional expression's fallback
        "```python\nok = kl_mean <= limits.get(\"max_kl\", 0.2)\n```\n",
        "```python\nrow = dict(kl_prefix=float(kl[:n].mean()) if n > 0 else 0.0)\n```\n",
        # a listing of KLD log files with their sizes
        "Files:\n\nkld-q4.log\n\n2.31 kB\n\nKLD scores of the q4 model\n",
        # KL of an RL run beside its learning rate
        "With lr 3e-5 the policy fell apart after 150 steps: KL rose from ~0.04 to 3.\n",
    ],
)
def test_not_measured(text):
    assert claim_lines(text) == []


@pytest.mark.parametrize(
    "text",
    [
        # the measured value next to its bound is still a claim
        "| Stage | Target | Measured |\n|---|---|---|\n| int8 | mean KL <= `0.004` | mean KL `0.0021` |\n",
        "We measured a mean KL of **0.013** nats, under the 0.02 gate.\n",
        # a measured value printed in a code block (not a fallback after "else")
        "```\nMean    KLD:   0.017200 ±   0.000300\nSame top p: 97.100 ± 0.043 %\n```\n",
        # a KLD with no size unit after it
        "Files:\n\nkld-q4.log: mean KLD 0.031\n",
        # a learning rate nowhere near: an eval measurement
        "After quantization the mean KL to the bf16 model is 0.012 on wikitext.\n",
    ],
)
def test_still_measured(text):
    assert claim_lines(text) != []


def test_a_gate_met_by_a_verb_is_no_training_threshold():
    # "passed the ... threshold": a measurement checked against a gate, not a training setting
    text = "The int4 cache passed the preregistered quality threshold on every model: mean KL stayed below 0.004 against the bf16 cache.\n"
    assert claim_lines(text) == [1]
    # a training run's penalty and coefficient stay training words
    assert claim_lines("A run stops when its KL penalty passes the threshold of the schedule, then the KL coefficient is 0.05.\n") == []


@pytest.mark.parametrize(
    "text",
    [
        # an accumulator declared the way Rust, JavaScript and C declare it: code that computes KL
        "```rust\nfn kl(p: &[f32], q: &[f32]) -> f32 {\n    let mut kl = 0.0;\n    kl\n}\n```\n",
        "```c\n    float kl_sum = 0.0f;\n```\n",
        # a timing beside a KL line of a log
        'CAPTURED = (\n    "0.00.512.101 I kl_divergence: 0.21 seconds per pass - ETA 0.40 minutes\\n"\n)\n',
        "```\nkl_divergence: 0.21 seconds per pass - ETA 0.40 minutes\n```\n",
        # a value that ends a log line is not the next line's KL statistic
        "```\nMean PPL(Q)-PPL(base)   :  -0.000120 ±   0.002100\n```\n",
        # a literal passed to a call in pasted code is an argument, not a measured KL
        "    if n == 0:\n        return KLStats(0.0, 0.0, [])\n",
        "    p99 = float(torch.quantile(kl, 0.99))\n",
    ],
)
def test_code_and_logs_not_claims(text):
    assert claim_lines(text) == []


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        # the statistic on its own line is still read, and a value glued before the term on one line
        ("```\nMean PPL(Q)-PPL(base)   :  -0.000120 ±   0.002100\nMean    KLD:   0.013000 ±   0.000800\n```\n", [3]),
        ("We got **0.0021** mean KLD on the chat set.\n", [1]),
        ("```\nkl_divergence: 0.0123 after 2 chunks\n```\n", [2]),
        # a parenthesis that is no call (a space before it, or closed before the value) keeps the value a claim
        ("    Mean KLD (chat, wikitext): 0.0184\n", [1]),
    ],
)
def test_code_and_logs_claims(text, lines):
    assert claim_lines(text) == lines


@pytest.mark.parametrize(
    "text",
    [
        # a training run's coefficient, penalty or reward named in the card's language: the KL value is the run's setting
        "Hệ số KL là yếu tố chính: KL = 0,05 cho điểm 0,412, còn KL = 0 đạt 0,598.\n",
        "加上 KL 惩罚以后，KL 稳定在 0.12 左右，策略不再崩溃。\n",
        "Con el coeficiente KL en 0,2 la recompensa sube a 0,71.\n",
    ],
)
def test_training_words_not_claims(text):
    assert claim_lines(text) == []


@pytest.mark.parametrize(
    "text",
    [
        # a correlation coefficient beside a measured KLD is no training setting
        "量化后平均 KLD 为 0.0213，与 PPL 的相关系数很高。\n",
        "La KLD media fue 0,0213 y el coeficiente de correlación con la PPL es alto.\n",
    ],
)
def test_training_words_claims(text):
    assert claim_lines(text) == [1]


# ---- a KL against a textbook distribution (round 19, lane d) ------------------------------------------------------
# A divergence whose second argument is a textbook distribution compares a model's internal weights with that
# distribution, as "均匀分布" does in words (holdout8/c neg_zh_qtdog, holdout14/c zh_kernel_equivalence); written as
# "KL(attn||uniform)" in a table header (holdout16/c neg_de_lstm), with its bars escaped in the Markdown cell, which
# a pipe table keeps inside the cell (GFM) rather than splitting it.
@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("| Head | Entropy | KL(w\\|\\|uniform) |\n|---|---|---|\n| h0 | 0.41 | 1.37 |\n| h1 | 0.77 | 0.52 |\n", []),
        ("| Run | KL(gate ‖ Gaussian) |\n|---|---|\n| a | 0.083 |\n", []),
        # two models' outputs in the same escaped form stay a claim, and a uniform-bit quant is no distribution
        ("| Run | KL(fp16 \\|\\| int4) |\n|---|---|\n| a | 0.0083 |\n", [1]),
        ("| Quant | KL vs BF16 |\n|---|---|\n| uniform 4-bit | 0.0763 |\n", [1]),
    ],
)
def test_kl_against_textbook_distribution(text, lines):
    assert claim_lines(text) == lines


# A pipe escaped in a cell ("KL(w \|\| uniform)") is the cell's text (GFM); after an escaped backslash ("\\|") it is a
# cell border again (review of round 19)
@pytest.mark.parametrize(("row", "cells"), [(r"| KL(p \|\| q) | 0.1 |", [r"KL(p \|\| q)", "0.1"]),
                                            (r"| a \\| b |", ["a \\\\", "b"]), ("| a | b |", ["a", "b"])])
def test_pipe_table_cells_keep_escaped_pipes(row, cells):
    assert [text for _, text in split_cells(row, 0)] == cells


# ---- lists titled as bounds (read.bound_lists) -------------------------------------------------------------------
# A list whose title names thresholds, limits or tolerances gives bounds, not measurements (R4): motivated by
# real-holdout-12 d/neg_kimi_linear_engine_quality_protocol_token_kl_limits_not_measurements (a lead-in sentence naming
# policy limits), real-holdout-12 f/neg_quantization_validator_max_kl_divergence_threshold_only (a code comment over a
# dict of defaults) and real-holdout-13 f/neg_akaszubski_dpo_quality_thresholds_kl_gate_rule_of_thumb (a section heading
# over a bare "Adjustments:" label); three authors, two splits.
@pytest.mark.parametrize(
    "text",
    [
        "## Release rules\n\nThe numbers below are the limits a build must keep:\n\n- Mean KL per token: at most `0.0002` nats.\n"
        "- Top-1 match: at least 0.998.\n",  # a lead-in sentence naming limits
        "```python\nclass Gate:\n    # Default tolerances, overridable per model\n    checks = {\n        \"max_kl\": 0.08,\n"
        "        \"min_top1\": 0.95,\n    }\n```\n",  # a comment over a dict of defaults
        "### Looser thresholds for small runs\n\n**Scope**: pilots only\n\n**Changes**:\n- KL divergence: 0.15-0.3\n"
        "- Pairs: 300-800\n",  # a heading over a bare label
        "Intro text.\n\nTolerances:\n\n- Mean KL divergence: no more than 0.1 nats\n",  # a one-word label opens it
        # stated_bounds' other words, one list since round 22: the card languages' and the acceptance band's
        "### 受け入れ基準の閾値\n\n- KL divergence: 0.05\n- Top-1: 0.99\n",
        "## 阈值\n\n- 平均 KL 散度: 0.01\n- Top-1 一致率: 0.98\n",
        "Umbrales de la compilación:\n\n- KL divergence media: 0.02\n",
        "### Acceptance band\n\n- Mean KL divergence: 0.05\n",
    ],
)
def test_lists_titled_as_bounds_are_no_claim(text):
    assert not claim_lines(text)


@pytest.mark.parametrize(
    "text",
    [
        "## Release check\n\nThe build was measured against bf16 on the chat set:\n\n- Mean KL per token: 0.0002 nats.\n"
        "- Top-1 match: 0.998.\n",  # a lead-in of a measurement
        "### Gates\n\n- KL: mean 0.00054 against the fp32 arm.\n",  # results reported under a heading of gates
        "The KLD stays clearly under the 0.06 threshold. Results of the run:\n\n- KLD mean: 0.0543\n",  # a sentence opens it
        "### Looser thresholds for small runs\n\nWe ran the pilot anyway and measured:\n\n- KL divergence: 0.021\n",  # lead not bare
        # a nearer list's own opener ends the walk up (review of round 20): a one-word label, an assignment's brace
        "## Thresholds\n\n- max KL: 0.1\n\nResults:\n\n- Mean KL divergence: 0.05\n",
        "## Default thresholds\n\n- max_kl: 0.1\n\nmeasured = {\n    \"mean_kl_divergence\": 0.05,\n}\n",
        # a key with words after it is no dict entry: the walk stops at it and does not reach the heading
        "### Limits\n\nNote: the run below is measured\n- Mean KL divergence: 0.05\n",
    ],
)
def test_lists_of_measurements_under_such_words_stay(text):
    assert claim_lines(text)
