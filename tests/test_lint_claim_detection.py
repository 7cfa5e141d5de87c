"""Which texts carry a KLD claim (issue 28, claim detection): metric keys printed beside a value
(kldcard.lint.read.metric_keys), tables whose KL term is in their heading or caption, approximate table
values, and KL terms of a measurement in a sentence that names a training or pruning step elsewhere.
Each case in the project's own words; the hard negatives beside it must stay silent."""

from __future__ import annotations

import pytest
from helpers_reading import card, claim_lines

from kldcard.card.document import parse_card
from kldcard.lint.claims import find_claims
from kldcard.lint.markdown import scan
from kldcard.lint.reader import read_card
from kldcard.lint.read.value_lists import value_lists


def claim_numbers(text: str) -> list[list[str]]:
    card = parse_card(text.encode(), "README.md")
    return [[n.text for n in c.numbers] for c in find_claims(scan(card.body, card.body_line))]


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Run summary\nkld_llama_q4 0.231 (one run)\nkld_llama_q8 0.004 (one run)\n", [["0.231"], ["0.004"]]),
        ("Sweep so far:\n  plain quant        top_p 80.1%  med_KLD 0.081\n", [["0.081"]]),
        ("The gate stays green: kld_mean 0.0121 / agree 0.97.\n", [["0.0121"]]),
        ("```\nmetric   abs        rel\nkl_div   0.20311    0.20311\ntop_1    0          0\n```\n", [["0.20311"]]),
    ],
)
def test_metric_keys_with_a_value_are_claims(text, numbers):
    assert claim_numbers(text) == numbers


@pytest.mark.parametrize(
    "text",
    [
        "Train with `--max_kl_div=2e-3` so the check fails early.\n",  # an option: a threshold the tool is given
        "config:\n  kld_weight: 0.1\n  kl_loss_scale: 0.5\n  target_kld: 0.02\n",  # training settings
        "Results are written to kld_results.csv 0.5 MB per run.\n",  # a file name
        "loss = F.kl_div(p, q, 0.5)\n",  # a call
    ],
)
def test_metric_key_lookalikes_are_not_claims(text):
    assert claim_numbers(text) == []


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        # the heading names KLD, the header row only the categories
        ("# Notes\n\n### KLD\n\n| Quant | Chat | Code |\n|---|---:|---:|\n| Q4 | 0.031 | 0.044 |\n| Q3 | 0.102 | 0.131 |\n", [5]),
        ("## Quality (KL to the BF16 model, lower is better)\n\n| | set A | set B |\n|---|---|---|\n| r2 | 0.412 | 0.803 |\n", [3]),
        # the header names only statistics; the text above says they are KLD
        (
            "Each row is the per-token KLD against the fp16 cache.\n\n### Model X\n\n"
            "| ctx | mode | median | mean | p99 |\n|---|---|---|---|---|\n| 4096 | k4 | 0.000002 | 0.000015 | 0.00021 |\n",
            [5],
        ),
    ],
)
def test_tables_whose_kl_term_is_in_the_heading_or_the_text_above_are_claims(text, lines):
    assert claim_lines(text) == lines


@pytest.mark.parametrize(
    "text",
    [
        "### KLD and PPL\n\n| Quant | PPL | size |\n|---|---|---|\n| Q4 | 6.12 | 4.1 |\n",  # the heading names another metric
        "### KLD\n\n| Quality | range |\n|---|---|\n| excellent | < 0.01 |\n| good | 0.01-0.05 |\n",  # a threshold scale
        "## Speed\n\nKLD is reported elsewhere.\n\n| ctx | median | mean |\n|---|---|---|\n| 4096 | 31.2 | 30.8 |\n"
        "\n## Training\n\n| step | mean | max |\n|---|---|---|\n| 10 | 0.51 | 0.93 |\n",  # other headings' tables
        "We tune the KL penalty beta.\n\n| run | mean | max |\n|---|---|---|\n| a | 0.51 | 0.93 |\n",  # a training KL
    ],
)
def test_tables_near_a_kl_word_that_are_not_kld_tables(text):
    assert claim_lines(text) == []


def test_a_column_of_approximate_values_is_measured_not_a_scale():
    text = "| Quant | bits | KLD vs FP16 |\n|---|---|---|\n| A | 8 | ~0.025 |\n| B | ~4 | **~0.060** |\n"
    assert claim_numbers(text) == [["0.025", "0.060"]]
    scale = "| Quality | KLD |\n|---|---|\n| great | < 0.01 |\n| fine | ~0.05 |\n| poor | 0.1-0.5 |\n"
    assert claim_numbers(scale) == []


def test_kld_of_a_pruned_model_is_a_claim_but_kl_as_a_pruning_criterion_is_not():
    # pruning is a way of making the candidate, like quantizing: its KLD against the unpruned model is measured
    assert claim_numbers("The 20%-pruned build, measured against the unpruned original: mean KLD 0.061, fine.\n") == [["0.061"]]
    criterion = "We prune the heads whose removal moves the output least (by KL divergence, threshold 0.05).\n"
    assert claim_numbers(criterion) == []


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("    # OUTCOME (mean KLD vs the Q8 file, lower is closer):\n    #   Q4_A  0.0121   <- kept\n    #   Q4_B  0.0170   (+40%)\n",
         [["0.0121", "0.0170"]]),
        ("Scores (KLD vs BF16):\n\nignored\n", []),  # no rows
        ("How to read KLD, as a rule of thumb:\n  great 0.01\n  fine 0.05\n", []),  # a rule of thumb
    ],
)
def test_value_lists_under_a_kld_caption(text, numbers):
    assert claim_numbers(text) == numbers


def test_a_value_list_row_holds_one_number():
    card = parse_card(b"KLD and speed per file:\n  fileA  0.012  41.0 t/s\n  fileB  0.020  44.3 t/s\n", "README.md")
    assert value_lists(scan(card.body, card.body_line), set()) == []


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("- **Ahead on KLD over the public web mix** against the matched UD control build: 0,0250 vs. 0,0270.\n",
         [["0,0250", "0,0270"]]),
    ],
)
def test_a_kld_clause_closed_by_a_colon_gives_its_value(text, numbers):
    assert claim_numbers(text) == numbers


@pytest.mark.parametrize(
    "text",
    [
        "We compared KLD, then looked at the perplexity of the whole held-out run: 6.21 vs. 6.19.\n",  # another metric
        "KLD was checked on 3 files; the speed of the long run: 41.5 vs. 44.2.\n",  # a sentence break
    ],
)
def test_a_colon_far_from_the_kl_term_does_not_attach_other_values(text):
    assert claim_numbers(text) == []


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Mean KLD on GSM8K: 0.012 nats, against the BF16 weights.\n", [["0.012"]]),
        ("The KL over the HellaSwag prompts came to 0.0042 per token.\n", [["0.0042"]]),
        ("KLD vs BF16 0.004, HellaSwag 0.81, ARC-Challenge 0.55.\n", [["0.004"]]),  # the suites' scores stay theirs
    ],
)
def test_a_task_suite_right_after_the_kl_term_is_its_text_not_a_metric(text, numbers):
    assert claim_numbers(text) == numbers


@pytest.mark.parametrize(
    "text",
    [
        "Mean KLD looked small; on GSM8K: 0.71 accuracy.\n",  # the suite opens a clause of its own
        "KL stayed flat during training and TruthfulQA rose to 0.62.\n",
    ],
)
def test_a_task_suite_score_after_a_kl_word_is_not_a_kld(text):
    assert claim_numbers(text) == []


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("Result: the held-out KL fell **~40–45%** in every run we tried.\n", [1]),
        ("The new kernel lowers held-out forward KLD relative to the old build by\n7.50% on replay.\n", [2]),
        ("The small preset cuts the q4 mean KLD by a third at equal size.\n", [1]),
        ("Keeping every expert resident cuts KLD 4× at the price of memory.\n", [1]),
        ("Rotation cuts mean KLD by approximately 30% versus BF16.\n", [1]),  # an approximate amount
        ("Mean KLD drops by approx. 30% with the imatrix.\n", [1]),  # the abbreviation ends no sentence
        ("KL reduction of roughly 2x over the baseline.\n", [1]),
        ("Even the strongest setting lowers KL drift by only 1.2% against the frozen base.\n", [1]),  # a small amount
    ],
)
def test_relative_changes_written_with_a_verb_are_claims(text, lines):
    assert claim_lines(text) == lines


@pytest.mark.parametrize(
    "text",
    [
        "The KL penalty increased by 5% after warm-up.\n",  # a training setting
        "We expect the KL to fall as training goes on.\n",  # no amount
        "The KL penalty rose by almost 30% per epoch.\n",  # approximate, and still a training setting
        "We cut latency by about 30% and KLD stayed flat.\n",  # the amount is the latency's
        "The KL penalty lowers reward by only 2% per epoch.\n",
    ],
)
def test_changes_of_a_training_kl_or_without_an_amount_are_not_claims(text):
    assert claim_lines(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "Con la rotación, la KLD media baja un 31 %.\n",  # es: the term, the verb, "un", the amount
        "El nuevo kernel reduce la KLD media en un 12%.\n",  # es: the verb, its object, "en un"
        "Com o patch, a KLD média caiu 30%.\n",  # pt
        "O patch reduz a KLD em 18%.\n",
        "Avec la rotation, la divergence KL moyenne diminue de 30\u202f%.\n",  # fr: a narrow no-break space before %
        "Avec la rotation, la KLD diminue d’environ 30 %.\n",  # a typographic apostrophe
        "Le nouveau noyau réduit la KLD de 9 %.\n",
        "Mit Rotation sinkt die mittlere KLD um 12 %.\n",  # de
        "Mit Rotation sinkt die mittlere KLD um ca. 30 % gegenüber BF16.\n",  # "ca." ends no sentence
        "Con la rotación, la KLD media baja aprox. 20 %.\n",
        "Die Rotation senkt die KL-Divergenz um 40 %.\n",
        "После правки среднее KL снизилось на 30%.\n",  # ru
        "Квантование по группам снижает KL на 25%.\n",
        "回転によりKLダイバージェンスが30%減少した。\n",  # ja: the term with its own word, then the particle
        "新方法的KL散度降幅最高达70%。\n",  # zh: a noun of the change's size
    ],
)
def test_relative_changes_in_the_card_languages_are_claims(text):
    assert claim_lines(text) == [1]


@pytest.mark.parametrize(
    "text",
    [
        "La penalización KL baja un 30% tras el calentamiento.\n",  # a training setting
        "Queremos que la KLD baje un 30%.\n",  # a wish: no verb of a measured change
        "Die KLD sinkt, der Durchsatz steigt um 12 %.\n",  # the amount belongs to another quantity's verb
        "Durante el entrenamiento la KL baja un 30% en los primeros pasos.\n",  # a training curve
        "Beim Training steigt die KL um 30 % pro Epoche.\n",
        "El kernel fusionado reduce la latencia del KL en un 30%.\n",  # the verb's object is a latency
        "La KLD se mantiene baja en el 99% de los tokens.\n",  # "baja", the adjective; a share of the tokens
        "La KLD sube en el 5% de los tokens.\n",  # a share, not a change
    ],
)
def test_training_wishes_and_other_quantities_changes_in_the_card_languages_are_not_claims(text):
    assert claim_lines(text) == []


def test_a_policy_of_a_system_part_is_no_rl_policy():
    text = ("Quality: gate policy (b) is passed, as judged by the arbiter\n"
            "(`results/kld-1`: canon KLD 0.0362 vs shipped-path 0.0563).\n")
    assert claim_lines(text) == [2]
    assert claim_lines(text.replace("gate policy", "the policy")) == []  # the model RL trains: a training KL
    assert claim_lines("With the new eviction policy the mean KLD is 0.012.\n") == [1]
    # a policy RL trains, named by what it decides
    assert claim_lines("The KL between the routing policy and its initialization is 0.04 nats.\n") == []


def test_a_hyphenated_qualifier_may_stand_between_a_value_and_its_kl_term():
    assert claim_numbers("The FP8 head costs +0.0005 mean weight-only KL.\n") == [["0.0005"]]
    assert claim_numbers("It reaches 0.021 per-token KL on the held-out set.\n") == [["0.021"]]
    # a unit or a count in the compound is another quantity's: "4.5 bits-per-weight", "1.2 million-token"
    assert claim_numbers("At 4.5 bits-per-weight KL is 0.021 vs BF16.\n") == [["0.021"]]
    assert claim_numbers("We ran a 1.2 million-token KL evaluation.\n") == []


def test_an_integer_times_a_negative_power_of_ten_is_a_kld_value():
    assert claim_numbers("The two engines agree to a mean KLD of 3×10⁻⁶; that is rounding.\n") == [["3×10⁻⁶"]]
    assert claim_numbers("The KLD table covers 3×10⁵ tokens.\n") == []  # a count, not a divergence


def test_a_section_number_is_not_a_kld_value():
    assert claim_numbers("Accept only if the mean KLD falls (see §5.5 for the limits).\n") == []


def test_a_kld_number_up_to_sixty_characters_after_its_term_is_attached():
    text = "KLD against BF16 is the one of the earlier q6 checkpoint, 0.0231 (top-1 0.951).\n"
    assert claim_numbers(text) == [["0.0231"]]


def test_a_row_naming_kld_in_a_metric_column_is_a_kld_row():
    text = ("| Source | Setting | Metric | f16 | q8 |\n|---|---|---|---|---|\n"
            "| note A | 7B, 512 ctx | mean KLD | 0.000201 | 0.001790 |\n| note B | 7B | PPL | 6.21 | 6.23 |\n")
    assert claim_lines(text) == [3] and claim_numbers(text) == [["0.000201", "0.001790"]]


def test_a_held_out_kl_is_measured_even_in_a_sentence_about_training():
    assert claim_lines("- **The distillation objective paid off**: held-out KL fell **~70%** in every run.\n") == [1]
    assert claim_lines("The KL objective fell by 70% during training.\n") == []  # the training term itself


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("```\nAssertionError: KL divergence values exceed the specified threshold of 0.001. Max divergence: 0.0013\n```\n", "0.0013"),
        ("```\n[ts] {x.py:1} INFO - KL divergence = [[0.0041 0.0022]], max KL divergence = 0.0041\n```\n", "0.0041"),
    ],
)
def test_maxtext_logit_check_failure_lines_carry_the_maximum(text, value):
    assert claim_numbers(text) == [[value]]  # the maximum; not the threshold the check was given


def test_numbers_continuing_a_kld_list_are_kld_numbers_also_across_a_wrap():
    text = "The quoted mean KLD is 0.2101 for IQ3_S,\n0.0411 for Q4_K, and 0.0152 for Q6_K.\n"
    assert claim_lines(text) == [1, 2] and claim_numbers(text) == [["0.2101"], ["0.0411", "0.0152"]]
    other = "The mean KLD is 0.2101 for IQ3_S, with\n+2.5 pt top-1 agreement.\n"  # the next number is another metric's
    assert claim_numbers(other) == [["0.2101"]]


def test_a_loss_of_quality_is_not_a_training_loss():
    assert claim_numbers("- **KL divergence of 0.0612** means little loss of capability after the edit.\n") == [["0.0612"]]
    assert claim_numbers("We add the KL loss with weight 0.1 to the objective.\n") == []


def test_key_value_result_lines_of_one_fence_are_one_claim():
    text = "Probe results:\n\n```text\nGroup: a\nKLD=0.0811\nPPL=6.1%\n\nGroup: b\nKLD=0.0702\n```\n"
    assert claim_lines(text) == [5] and claim_numbers(text) == [["0.0811", "0.0702"]]
    assert claim_numbers("```\nscore = evaluate(kld=0.5, top_k=3)\n```\n") == []  # a call's keyword argument


@pytest.mark.parametrize(
    "text",
    [
        "| Setting | CC | NSS | KLD (lower is better) |\n|---|---|---|---|\n| ours | 0.61 | 1.52 | 0.8636 |\n",  # saliency maps
        "| Model | Frechet Audio Distance | KLD |\n|---|---|---|\n| small | 1.71 | 1.44 |\n",  # generated audio
    ],
)
def test_kld_beside_another_fields_metrics_is_not_a_model_kld_claim(text):
    assert claim_numbers(text) == []


# ---- tune-p (issue 28, round 6): RL mismatch keys, wrapped comments, model versions, training tables, corner cells


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("| run | mismatch_kl | max |\n|---|---|---|\n| a | 0.031 | 0.09 |\n| b | 0.012 | 0.04 |\n", [1]),
        ("| Metric | old | new |\n|---|---:|---:|\n| Step 1 `k3_kl` | `2.1e-4` | `1.9e-4` |\n", [3]),
        ("The logged `train/gen_kl_error` stayed near 0.0031 over the run.\n", [1]),
        ("```\nstep 40  kl_mean=0.0042  entropy=1.9\n```\n", [2]),
    ],
)
def test_rl_metric_keys_with_a_kl_part_are_kl_terms(text, lines):
    assert claim_lines(text) == lines


@pytest.mark.parametrize(
    "text",
    [
        "```yaml\ninit_kl_coef: 0.2\nuse_kl_loss: true\nkl_ctrl: 0.05\nkl_estimator: 0.3\n```\n",  # trainer settings
        "| quant | size |\n|---|---|\n| IQ2_KL | 0.41 |\n| iq3_kl | 0.52 |\n",  # quant types, not keys
        "Outputs go to results/kl_out/ 0.5 MB per file.\n",  # a folder
        "The GRPO policy KL reached 0.0031 at step 50.\n",  # the policy's KL to its reference: a training term
    ],
)
def test_kl_keys_of_trainer_settings_and_names_are_not_claims(text):
    assert claim_numbers(text) == []


def test_a_train_inference_mismatch_kl_is_measured_in_a_sentence_about_rl():
    assert claim_lines("During GRPO training the `gen_kl_error` sat near 0.0031 on every step.\n") == [1]
    assert claim_lines("The KL mismatch of the fp8 rollouts is 0.004 during RL training.\n") == [1]
    # the mismatch named by its two sides, with an exact zero, beside on-policy words
    assert claim_lines("Both backends match bit for bit, so the training-inference KL = 0 and RL is truly on-policy.\n") == [1]
    assert claim_lines("Once aligned, the train inference KL sits at 0.0000 for the whole run.\n") == [1]


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        # a comment in a fence: the sentence runs from one "#" line into the next
        ("```nix\n# Checked on one card. KL vs FP16 at\n# 4096 ctx / top-512: 0.0123 (top-1 99%).\nfoo = 1;\n```\n", [3]),
        # the same unfenced: Markdown reads each "# " line as a heading
        ("# Checked on one card. KL vs FP16 at\n# 4096 ctx / top-512: 0.0123 (top-1 99%).\n", [2]),
        # a quoted documentation diff
        ("```diff\n+The logged `mismatch_kl` was measured\n+on two runs: ~0.0024 over 20 steps.\n```\n", [3]),
    ],
)
def test_a_kl_sentence_wrapped_across_comment_lines_is_read_whole(text, lines):
    assert claim_lines(text) == lines


def test_one_line_comments_and_blank_comment_lines_do_not_join():
    assert claim_lines("```py\n# the KL term is computed below\n#\n# 0.05 is the step size\nx = 1\n```\n") == []


def test_a_version_before_a_parameter_count_is_no_kld_value():
    assert claim_numbers("With the mlx-kld tool, Qwen 3.6 27B and Llama 3.1 8B-Instruct were benchmarked.\n") == []


def test_kl_in_a_table_of_training_rewards_is_a_training_term():
    training = "| Metric | Value |\n|---|---|\n| Final reward | 0.97 |\n| KL divergence | 0.19 |\n"
    assert claim_numbers(training) == []
    assert claim_numbers(training.replace("Final reward", "Top-1 match")) == [["0.19"]]


def test_a_relative_change_written_after_the_kl_term_is_a_claim():
    assert claim_lines("Then the tail KLD is 32% worse than q5_0's.\n") == [1]


def test_a_corner_cell_naming_kl_makes_the_body_kld():
    text = "| `val/kl`, block means | steps 1–4 | 5–8 |\n|---|---|---|\n| fp8 | 0.010 | 0.014 |\n| mx | 0.009 | 0.009 |\n"
    assert claim_numbers(text) == [["0.010", "0.014", "0.009", "0.009"]]
    assert claim_numbers(text.replace("5–8", "PPL")) == []  # another metric's column: not one quantity
    assert claim_numbers(text.replace("steps 1–4", "Mean").replace("5–8", "95% interval")) == []  # statistic columns


def test_lines_matching_rechecks_the_pattern_on_the_anchor_lines():
    from kldcard.lint.claims_patterns import KLD_TERM

    doc = scan("sklearn results:\nKLD 0.01\n", 1)
    assert doc.lines_with(KLD_TERM) == {0, 1}  # "sklearn" holds the anchor "kl", not a KL term
    assert doc.lines_matching(KLD_TERM) == {1}


# ---- round 17 (issue 28): grammar of the value and of the label, not of one author's phrasing
@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        # a whole number in a unit only information is measured in is a value, as a negative exponent makes one
        ("The AWQ build has the lowest teacher-forced KL of the three (41 mbits, against 390 mbits for NF4).\n", [["41", "390"]]),
        ("Mean KL to the bf16 run: 12 millinats per token.\n", [["12"]]),
        ("After the reload fix the KL is 0 nats on every prompt.\n", [["0"]]),
        # a parenthesised qualifier of a KL row label is the KL's truncation or text, no second metric
        ("| metric | FP8 | W4 |\n|---|---|---|\n| KL vs FP8 (top-20, chat / code) | — | 0.061 / 0.048 nats |\n", [["0.061", "0.048"]]),
        ("| Medida | Valor |\n|---|---|\n| Mismo token | 96,8% |\n| Divergencia (KL) | 0,0104 |\n", [["0,0104"]]),  # the term in parentheses
    ],
)
def test_a_kl_unit_or_a_qualified_label_makes_a_value(text, numbers):
    assert claim_numbers(text) == numbers


@pytest.mark.parametrize(
    "text",
    [
        "The 4 bits of Q4 keep KL small.\n",  # bits alone: a quantization's width
        "| metric | FP8 | W4 |\n|---|---|---|\n| Top-1 (vs KL) | — | 0.061 |\n",  # another metric outside the parenthesis
    ],
)
def test_a_width_in_bits_or_a_row_of_another_metric_is_no_kl_value(text):
    assert claim_numbers(text) == []


# ---- review of rounds 17-18: what the code-argument, "both 0" and unit forms must not take
@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Results:\n\n    mean KL: tensor(0.0678)\n", [["0.0678"]]),  # a framework prints a value in its wrapper
        ('Results:\n\n    log("mean KL", 0.0217)\n', [["0.0217"]]),  # a value logged after its quoted KL label
    ],
)
def test_a_printed_or_logged_kl_value_in_code_is_still_read(text, numbers):
    assert claim_numbers(text) == numbers


@pytest.mark.parametrize(
    "text",
    [
        "Note: KL divergence and JS divergence are both 0 by definition for identical distributions.\n",
        "KL and total variation are both zero exactly when p equals q.\n",
    ],
)
def test_both_zero_as_a_definition_is_no_claim(text):
    assert claim_numbers(text) == []


def test_thousandths_of_a_bit_are_read_in_bits_and_megabits_are_not():
    milli = read_card(card("The teacher-forced KL vs bf16 is 41 mbits per token.\n"))[0].numbers[0]
    assert (milli.value, milli.unit) == (0.041, "bits")
    mega = read_card(card("The KL divergence to the bf16 run is 0.5 Mbits per token.\n"))[0].numbers[0]
    assert (mega.value, mega.unit) == (0.5, None)


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ('```json\n{\n "metrics": {\n  "positions_scored": 35,\n  "mean_kld": 0.00522022214853118,\n  "top1": 100.0\n }\n}\n```\n',
         [["0.00522022214853118"]]),  # an eval record's field, its key a KL metric's
        ('```json\n{"kl_divergence": 0.004, "ppl": 6.21}\n```\n', [["0.004"]]),
    ],
)
def test_a_json_records_kl_metric_field_in_a_fence_is_a_claim(text, numbers):
    assert claim_numbers(text) == numbers


@pytest.mark.parametrize(
    "text",
    [
        '```json\n{"kl_coef": 0.05, "target_kld": 0.1}\n```\n',  # settings
        '```python\nACC_THRESHOLDS = {MODEL: {"kl_div": 0.01, "gsm8k": 0.93}}\n```\n',  # a dict a line of code assigns
        '```json\n{"step": 10, "loss": 1.2, "mean_kl": 0.031, "reward": 0.5}\n```\n',  # a training run's log
    ],
)
def test_json_fields_of_settings_code_or_training_are_not_claims(text):
    assert claim_numbers(text) == []


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("The unseen set falls to 0.612, at ~1.24 nats/token KL drift from the base.\n", [["1.24"]]),
        ("The Q4 file shows 0.012 nats per token of KL divergence against BF16.\n", [["0.012"]]),
    ],
)
def test_a_value_in_nats_per_token_before_its_kl_term_is_attached(text, numbers):
    assert claim_numbers(text) == numbers


@pytest.mark.parametrize(
    "text",
    [
        "- **KL divergence**: stop if the cumulative KL goes above 0.15\n",  # a stopping rule's bound
        "Abort the sweep when mean KLD rises above 0.05.\n",
        "The combined flags missed the +5% KL line on one prompt.\n",  # a gate so named
    ],
)
def test_a_stopping_rules_bound_and_a_named_kl_line_are_not_claims(text):
    assert claim_numbers(text) == [] and claim_lines(text) == []


@pytest.mark.parametrize(
    "text",
    [
        "We stopped when the run ended; mean KLD was above 0.05 on 3 prompts.\n",  # the rule is another clause's
        "The change adds +19% KLD vs the baseline.\n",
    ],
)
def test_a_measurement_beside_a_stop_or_a_relative_kl_is_still_a_claim(text):
    assert claim_lines(text) == [1]


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("KLD measured on HellaSwag prompts: 0.012\n", [["0.012"]]),  # the suite anywhere in the KL term's clause
        ("KLD vs BF16 on 200 HellaSwag prompts: 0.012\n", [["0.012"]]),
        ("La KLD media en HellaSwag es 0,012.\n", [["0,012"]]),  # the card languages' prepositions
        ("Die mittlere KLD auf HellaSwag beträgt 0,012.\n", [["0,012"]]),
        ('```json\n{"quant": "Q4_K_M", "mean_kld": 0.0123, "ppl": 6.2}\n```\n', [["0.0123"]]),  # the key after other fields
    ],
)
def test_review_look_alikes_that_stay_claims(text, numbers):
    assert claim_numbers(text) == numbers


@pytest.mark.parametrize(
    "text",
    [
        '```python\nassert_close(metrics, {"mean_kld": 0.01})\n```\n',  # an expected value in a call
        '```yaml\ngate: {"mean_kld": 0.05}\n```\n',  # a setting
        "Mean KL vs BF16, with these sampling settings:\n- top_p: 0.95\n",  # not a KL label: a clause after a comma
        "Mean KL vs BF16, gates:\n- warn above: 0.05\n",
        "KL for each arm, see the table below for details:\n- step: 0.5\n",
        "KL to base:\n- VRAM: 5.1 GB\n- throughput: 41.2 tok/s\n",  # a value with another quantity's unit
    ],
)
def test_review_look_alikes_that_stay_silent(text):
    assert claim_numbers(text) == []


def test_a_failed_lead_in_is_read_once_not_once_per_split():
    """A lead-in whose phrases could split many ways ("to a to a ...") fails in one pass (possessive quantifiers):
    forty repetitions take no longer than ten, well within a factor of ten."""
    import time

    def seconds(n: int) -> float:  # the best of three, so that one pause of the machine does not decide
        text = "KL" + " to a" * n + " v1.2 per arm:\n- A: 0.031\n"
        best = float("inf")
        for _ in range(3):
            start = time.perf_counter()
            claim_numbers(text)
            best = min(best, time.perf_counter() - start)
        return best

    seconds(1)
    assert seconds(40) < 10 * seconds(10) + 0.05
