"""D7-D9 as cards write them beyond the main patterns (kldcard.lint.read.direction, .vocabulary, .aggregation,
.statistic_forms): both directions side by side, a record key's formula, an arrow between roles; the whole
vocabulary as "all vocabulary logits", "full-logit KL", a full N-entry vocabulary, a top-k qualifying the KL; the
statistic in Chinese and Japanese without word boundaries, in parentheses after a KL label, as a bare header cell or
right after a value, a percentile in markdown, a bootstrap with its interval, the acronym SEM. Each form next to a
look-alike that must not be read: a Jensen-Shannon divergence, an arrow without roles, stored logits, a decimal
before "-nat", another metric's top-k, Portuguese "sem"."""

from __future__ import annotations

import pytest
from helpers_reading import reading


# ---- D7: the direction -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "| Quant | PPL | KL(qโo) | KL(oโq) |\n|---|---|---|---|\n| Q4 | 6.1 | 0.0231 | 0.0240 |\n",  # a separator lost to encoding
        "Variant   Prefill KL   Decode BF16->var   Decode var->BF16\nQ4        0.0231       0.0199             0.0210\n",
    ],
)
def test_both_directions_side_by_side_are_read(text):
    d = reading(text, 7)
    assert d.status == "stated" and d.value["direction"] == "both", d


def test_a_record_keys_formula_gives_the_direction():
    d = reading("The run printed mean_kld(f32 kernel || fp64 oracle) = 3.7e-10 for the kernel.\n", 7)
    assert d.status == "stated", d


def test_a_jensen_shannon_divergence_gives_no_direction():
    text = "| Metric | eager | fused |\n|---|---|---|\n| Mean KL | 0.0121 | 0.0119 |\n| Mean JSD | 0.0031 | 0.0030 |\n"
    assert reading(text, 7).status == "missing"
    assert reading(text.replace("Mean JSD", "Mean Jensen-Shannon"), 7).status == "missing"


def test_a_named_direction_beside_it_still_counts():
    text = "| Metric (forward KL) | eager | fused |\n|---|---|---|\n| Mean KL | 0.0121 | 0.0119 |\n| Mean JSD | 0.0031 | 0.0030 |\n"
    assert reading(text, 7).status != "missing"


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


@pytest.mark.parametrize(
    "text",
    [
        "| Check | Value |\n|---|---|\n| KL(ref \\|\\| port) | 2.1e-07 |\n",  # Markdown's escaped bars inside a cell
        "The mean KL is 0.0123, where\n\n$$\nD_{\\mathrm{KL}}(P\\|Q) = \\sum_i P(i) \\log(P(i)/Q(i))\n$$\n",  # LaTeX's double bar
        # a settings column named "Policy" beside the formula's own header cell
        "| Policy | Mean KL(BF16 ref || cand) | Rows |\n|---|---|---|\n| keep-8 | 0.0123 | 512 |\n",
    ],
)
def test_a_kl_formula_escaped_or_beside_a_policy_column(text):
    assert reading(text, 7).status != "missing"


def test_a_kl_formula_in_a_policy_cell_is_still_trainings():
    text = "| Run | KL(pi || pi_ref) under the policy loss |\n|---|---|\n| r1 | 0.0123 |\n"
    assert reading(text, 7).status == "missing"


def test_a_written_out_sum_with_a_conditioned_argument_gives_the_direction():
    text = "KL_t = sum_v p_ref(v|x_t) × log(p_ref(v|x_t) / p_q(v|x_t))\nThe mean KL is 0.0123.\n"
    assert reading(text, 7).status != "missing"


def test_a_sum_without_a_log_gives_no_direction():
    text = "Overlap_t = sum_v p_ref(v|x_t) × min(1, p_q(v|x_t))\nThe mean KL is 0.0123.\n"
    assert reading(text, 7).status == "missing"


# ---- D8: the vocabulary ------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "The KL uses all vocabulary logits in FP64; the new route gives a KL of 0.0042.\n",
        "| Route | Full-logit KL vs FP32 reference |\n|---|---|\n| native | 0.0042 |\n",
    ],
)
def test_the_whole_vocabulary_as_all_logits(text):
    d = reading(text, 8)
    assert d.status == "stated" and d.value["scheme"] == "full", d


def test_full_logits_stored_for_another_use_are_not_the_kls_vocabulary():
    text = "Q4_K_M reaches a KLD of 0.0231.\n\nEach full-vocabulary logit row was identical bit for bit across the two packs.\n"
    assert reading(text, 8).status == "missing"


def test_the_kls_support_over_a_models_top_k_beside_an_agreement():
    text = "| layer | top-1 agreement · KL over the original's top-64 |\n|---|---|\n| 12 | 97.1% · 0.0123 |\n"
    d = reading(text, 8)
    assert d.status == "stated" and d.value == {"scheme": "top-k", "k": 64}, d


def test_a_top_k_agreement_is_no_vocabulary():
    assert reading("The 4-bit build reaches a KLD of 0.0123 with a top-5 agreement of 93%.\n", 8).status == "missing"


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


def test_a_full_n_entry_vocabulary():
    text = "32 teacher-forced rows, full 151936-entry vocabulary: mean KL 0.0042.\n"
    assert reading(text, 8).status != "missing"


def test_an_n_entry_table_is_no_vocabulary():
    text = "32 teacher-forced rows from a full 4096-entry lookup table: mean KL 0.0042.\n"
    assert reading(text, 8).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        "The KL vs BF16 KV at 8192 ctx / top-500: 0.0121 (top-1 99%).\n",
        "The knee metric is KLD(bf16‖quant) from the patched\n`score --kl-ref` (top-64): the KLD was 0.021 at the knee.\n",
        "We score KL(bf16 || quant) over the answer tokens, top-32.\nThe mean KLD is 0.0187.\n",  # a direction's bar is no cell border
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


@pytest.mark.parametrize(
    "formula",
    [
        "KL_t = sum_v p(v|x_t) * log(p(v|x_t) / q(v|x_t))",
        "D_{\\mathrm{KL}}(P\\|Q) = \\sum_{v \\in V} P(v) \\log \\frac{P(v)}{Q(v)}",
    ],
)
def test_a_kl_formula_summing_over_the_vocabulary(formula):
    assert reading(formula + "\nThe mean KL over the test set is 0.0213.\n", 8).status != "missing"


def test_another_quantitys_sum_over_the_vocabulary_is_no_kls():
    text = "Overlap = sum_v min(p(v), q(v)), averaged over positions.\n\nThe mean KL over the test set is 0.0213.\n"
    assert reading(text, 8).status == "missing"


def test_a_softmax_over_a_logits_shape_gives_the_vocabulary():
    text = "Each eval runs one fp32 log-softmax over `[256, 151936]` per prompt; mean KL 0.0213.\n"
    assert reading(text, 8).status != "missing"


def test_a_shape_far_from_logits_or_softmax_is_no_vocabulary():
    text = "The embedding table has shape `[256, 151936]`; mean KL 0.0213.\n"
    assert reading(text, 8).status == "missing"


# ---- D9: the statistic -------------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "statistic"),
    [
        ("在这组配置上，新方案的中位 KLD 更低（0.000412 对 0.000530）。\n", "median"),  # 中位 = 中位数, inside a run of CJK
        ("量化后模型的平均KL为 0.0213，比旧版低。\n", "mean"),
        ("新しい構成では KLD 中央値が 0.0184 まで下がった。\n", "median"),
    ],
)
def test_cjk_statistic_words_need_no_word_boundary(text, statistic):
    d = reading(text, 9)
    assert d.status == "stated" and d.value["statistic"] == statistic, d


def test_cjk_characters_that_only_contain_a_statistic_word_are_not_read():
    # 集中位于 (concentrated in) holds 中位 across two words; no statistic stands next to the KL term
    assert reading("误差集中位于尾部，量化后 KLD 为 0.0213。\n", 9).status == "missing"


@pytest.mark.parametrize(
    ("text", "statistic"),
    [
        ("    metric                 base        tuned\n    KL vs teacher (mean)   0.1013      0.0991\n", "mean"),
        ("Results on the held-out slice:\n\nKL (median) 0.0420 for the new codes.\n", "median"),
    ],
)
def test_a_statistic_in_parentheses_after_a_kl_label(text, statistic):
    d = reading(text, 9)
    assert d.status == "stated" and d.value["statistic"] == statistic, d


def test_parentheses_after_a_kl_label_without_a_statistic_are_not_one():
    assert reading("    metric                 base        tuned\n    KL vs teacher (nats)   0.1013      0.0991\n", 9).status == "missing"


def test_a_bare_statistic_header_cell_after_a_kl_column():
    text = "| setting | mismatch_kl | max |\n|---|---|---|\n| replay off | 0.194 | 0.490 |\n| replay on | 0.024 | 0.053 |\n"
    d = reading(text, 9)
    assert d.status == "stated" and d.value["statistic"] == "max", d


def test_a_statistic_header_cell_before_the_kl_column_is_another_metrics():
    text = "| setting | max | mismatch_kl |\n|---|---|---|\n| replay off | 12 s | 0.194 |\n"
    assert reading(text, 9).status == "missing"


def test_the_statistic_right_after_a_value_near_a_kl_term():
    text = "The gen KL error of the FP8 rollout was measured on\nthe 35B run: ~0.0031 mean / 0.0050 max over 120 steps.\n"
    d = reading(text, 9)
    assert d.status == "stated" and "mean" in d.value["statistic"], d


def test_a_value_and_a_statistic_word_far_from_any_kl_term_are_not_read():
    text = "The run finished with KLD 0.0213 on the test text.\n\n" + "Unrelated notes. " * 20 + "\nLatency: 41 mean over the day.\n"
    assert reading(text, 9).status == "missing"


@pytest.mark.parametrize("pct", ["`99.9%`", "**99%**", "`99%`"])
def test_a_percentile_in_markdown_before_the_kl_term(pct):
    text = f"On WikiText at 16k context the {pct} KLD was about 18.8 / 17.3 for the three KV settings.\n"
    assert reading(text, 9).status != "missing"


@pytest.mark.parametrize("pct", ["`+19%`", "`99`", "`0.99%`"])
def test_a_change_or_a_bare_number_in_markdown_is_no_percentile(pct):
    text = f"On WikiText at 16k context the {pct} KLD was about 18.8 / 17.3 for the three KV settings.\n"
    assert reading(text, 9).status == "missing"


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


def test_portuguese_sem_is_not_a_standard_error():
    text = "Rodando em uma placa, sem fatiamento algum, a KL chegou a 0,023.\n"
    assert reading(text, 9).status == "missing"


def test_the_acronym_sem_is_a_standard_error():
    text = "The KL came out at 0.023 ± 0.001 (SEM over 40 prompts).\n"
    assert reading(text, 9).status != "missing"


@pytest.mark.parametrize(
    "other",
    [
        "The serving screen logged TTFT P50 (ms) at 10.4 and TPOT P50 at 2.9.\n",  # a percentile of a latency
        "The bench records real distributions (mean, stddev, min, max, p50, p95) for every run.\n",
        "Kept-set sizes came to median 2 / p99 ~82 tokens per step.\n",
        "El error local de las capas baja en todas (mediana -8%, capa 0 -43%).\n",  # the median in Spanish, of a layer error
        "量化后分布基本没变。基准测了吞吐量和 p95 TTFT。\n",  # after a CJK full stop: another sentence
    ],
)
def test_a_bare_percentile_or_median_of_another_quantity_is_not_the_kls(other):
    text = "Against the FP32 reference the KL divergence stayed at 0.0012.\n\n" + other
    assert reading(text, 9).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        "Over the held-out slice the KLD came to 0.0213; its p99 was 0.41.\n",
        "La KL frente al original quedó en 0,021 (mediana de las sesiones).\n",
    ],
)
def test_a_percentile_or_median_in_a_sentence_with_the_kl_stays(text):
    assert reading(text, 9).status == "stated"


def test_a_statistic_word_labelling_another_value_does_not_label_the_kld():
    # "mean 3056" is the layer error's mean; the KLD beside it is a bare value
    text = "The earlier run (layer error mean 3056) measured KLD 0.028548 on the eval text.\n"
    assert reading(text, 9).status == "missing"
    text = "Step 3 on wikitext: KL(bf16||fp8)=0.0045, max|dlogit|=4.7, both gates failed.\n"
    assert reading(text, 9).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        "The earlier run measured a mean KLD of 0.028548 on the eval text.\n",
        "Step 3 on wikitext: KL mean/max 0.0045/0.12 over the slice.\n",
        "Step 3 on wikitext: KLD 0.0045 (max 0.12).\n",
    ],
)
def test_a_statistic_word_labelling_the_kld_itself_stays(text):
    assert reading(text, 9).status == "stated"


def test_a_percentile_after_a_cjk_full_stop_is_another_sentences():
    text = "有人给这个量化版接上了草稿头，单流解码快了 1.3 倍，令牌分布基本没变（KLD 为 0.0012）。基准还测了吞吐量和 p95 TTFT。\n"
    assert reading(text, 9).status == "missing"
    assert reading("换了草稿头后令牌分布没变，KLD 为 0.0012，p95 为 0.0040。\n", 9).status == "stated"


def test_an_identifier_naming_a_bound_or_a_hyphenated_unit_is_no_statistic():
    text = "The validator reloads the miner after the fix.\n\nIts KL check stayed at 0.0213 on the fixed prompts.\n\nMAX_KL_THRESHOLD is 0.5 here.\n"
    assert reading(text, 9).status == "missing"
    text = "The new mix reaches KLD 0.0213 on the same text.\n\nKeeping 20% of the tensors in bf16 costs ≈ 6.6 avg-bits, a worse deal.\n"
    assert reading(text, 9).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        "The validator logged max_kl_div 0.0213 on the fixed prompts.\n",
        "The gen KL error of the FP8 rollout was ~0.0031 mean-KL over 120 steps.\n",
    ],
)
def test_a_statistic_identifier_or_a_mean_kl_compound_stays(text):
    assert reading(text, 9).status == "stated"


@pytest.mark.parametrize("count", ["all 151,936 raw logits", "all 262144 logits", "all the 128 256 logits"])
def test_all_of_a_vocabulary_sized_count_of_logits_is_the_whole_vocabulary(count):
    text = f"For each position {count} are compared: mean KL 0.0042 against the BF16 run.\n"
    d = reading(text, 8)
    assert d.status == "stated" and d.value == {"scheme": "full"}, d


@pytest.mark.parametrize("count", ["all 32,768 tokens", "all 20 logits", "all 512 logits"])
def test_all_tokens_or_a_short_list_of_logits_is_no_vocabulary(count):
    text = f"For each position {count} are compared: mean KL 0.0042 against the BF16 run.\n"
    assert reading(text, 8).status == "missing"
