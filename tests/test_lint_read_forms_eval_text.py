"""D3 as cards write the evaluation text beyond the main patterns (kldcard.lint.read.eval_text, .eval_text_forms),
round 24: each form next to a look-alike that must not be read."""

from __future__ import annotations

import pytest
from helpers_reading import reading

CLAIM_VS_BF16 = "Q4_K_M reaches a mean KLD of 0.0231 against BF16"


# ---- a text given by its length (eval_text_forms.SIZED) -----------------------------------------------------------
# The length joined to the text's noun tells the text apart without naming it (CONVENTIONS.md, round 21 q1): D3
# incomplete. Motivated by real-holdout-15/a snapdragon888_hmx ("2039-byte English fixture"), real-holdout-14/a
# gemma4_e4b_ternary ("3x2048-token probe"), real-holdout-14/c ja_glm53_flash_mlx ("256-token fixture" in Japanese),
# real-holdout-8/b tangllm_notes ("387-token chat2 sequence") and real-holdout-9/d axolotl_nvfp4 ("512-token eval
# slice"): five authors.
@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM_VS_BF16}, teacher-forced over a 700-token held-out probe.\n",
        f"{CLAIM_VS_BF16}; the run scores a checked-in 4096-byte French fixture.\n",
        f"{CLAIM_VS_BF16}, scored on one and the same 2x1024-token prompt.\n",
        f"{CLAIM_VS_BF16}. 全ての設定を同じ300-token fixtureで測定した。\n",
        f"{CLAIM_VS_BF16}, measured along the 90-token greedy continuation.\n",
    ],
)
def test_a_text_given_by_its_length_describes_the_text(text):
    d = reading(text, 3)
    assert d.status == "incomplete", d


@pytest.mark.parametrize(
    "text",
    [
        # a window or context length is a setting (D5/D6), not a text: these fail if SIZED's nouns grow to take
        # "windows" or "context" (checked by adding them)
        f"{CLAIM_VS_BF16}, measured over 1024-token windows.\n",
        f"{CLAIM_VS_BF16}, measured at a 4096-token context.\n",
        # a speed run's prompt, a calibration's
        f"{CLAIM_VS_BF16}.\n\nPrefill on a 2048-token prompt runs at 950 tok/s.\n",
        f"{CLAIM_VS_BF16}.\n\nThe imatrix was computed over a 512-token calibration sequence.\n",
        # a count inside a version or a name ("v2-token"): fails without SIZED's look-behind (checked by removing it)
        f"{CLAIM_VS_BF16}, measured with the tokenizer-v2-token prompt builder.\n",
    ],
)
def test_a_length_of_something_else_is_no_text(text):
    assert reading(text, 3).status == "missing"


# ---- a text drawn from a file by its path in backticks (eval_text_forms.FROM_FILE) ---------------------------------
# The units of the text, then "of" / "from", then the file: a text named without its source, whatever the file's
# extension. Motivated by real-holdout-15/b mescalito_weight_noise ("tokens of `docs/...md`") and real-holdout-11/c
# zh_xeonmax_rtx3090 ("语料取 `common/...cpp`"); real-holdout-15/d rlprobe writes it the same way ("responses ... taken
# from `....json`", its list item has no measuring word and stays unread): three authors.
@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM_VS_BF16}, scored over 3,000 tokens of `notes/field-diary.md`.\n",
        f"{CLAIM_VS_BF16}; the KL is measured on the prompts taken from `bench/hard_cases.yaml`.\n",
        f"{CLAIM_VS_BF16}。teacher-forced 对照，语料取 `src/parser.rs`。\n",
    ],
)
def test_a_text_drawn_from_a_file_names_the_text(text):
    d = reading(text, 3)
    assert d.status == "incomplete", d


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM_VS_BF16}.\n\nThe weights are read from `model.safetensors`.\n",  # not units of a text
        f"{CLAIM_VS_BF16}.\n\nThe imatrix used 50,000 tokens of `notes/field-diary.md`.\n",  # a calibration's text
        f"{CLAIM_VS_BF16}.\n\nServing speed: 41 tok/s on the prompts from `bench/speed.yaml`.\n",  # a speed run's
    ],
)
def test_a_file_of_something_else_is_no_text(text):
    assert reading(text, 3).status == "missing"


# ---- a task suite's items picked by number (eval_text_units.ITEMS_PICKED) -----------------------------------------
# A suite named with the numbers of the items run is the text scored, not a benchmark's score, even where its sentence
# has no KL term. Motivated by real-holdout-9/d ru_qwen3_17b_fp8_kv ("MATH-500, probs 60-69"), real-holdout-12/d
# mbpp_v02_development ("MBPP `validation`, task IDs 511-600") and real-holdout-15/c zh_xllm_int4_kv ("GSM8K idx 0–3"):
# three authors.
@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM_VS_BF16}.\n\nThe check decodes GSM8K, problems 12-19, greedy.\n",
        f"{CLAIM_VS_BF16}.\n\n- Set: HumanEval `test`, task IDs 40-79.\n",
        f"{CLAIM_VS_BF16}.\n\n以 MMLU idx 100–163 的题目做 teacher forcing。\n",
    ],
)
def test_a_suites_items_picked_by_number_name_the_text(text):
    d = reading(text, 3)
    assert d.status != "missing", d


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM_VS_BF16}.\n\nThe quant keeps GSM8K at 81.2% and HumanEval at 62.0%.\n",  # a score
        f"{CLAIM_VS_BF16}.\n\nGSM8K 12-19 points below the base in the worst case.\n",  # a range without item words
    ],
)
def test_a_suites_score_names_no_text(text):
    assert reading(text, 3).status == "missing"


# ---- a list item or field labelled as the text in the card languages (eval_text_forms.TEXT_FIELD) -----------------
# The label says what its value is, so no measuring word is asked of its line. Motivated by real-holdout-16/c
# zh_qksieve ("- 文本：... `mixed_b`"), real-holdout-16/c zh_idea_a_tiny_mixtral ("- 样本：8 条..."), real-holdout-15/c
# es_ficha_pearsonkyle ("- Dataset de evaluacion: org/name") and es_ficha_rbergbauer ("- Conjunto de prompts `org/name`"):
# four texts, three authors' cards.
@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM_VS_BF16}.\n\n- 文本：留出的 `long_c` 段落\n",
        f"{CLAIM_VS_BF16}.\n\n- 样本：12 条内置短文本\n",
        f"{CLAIM_VS_BF16}.\n\n- Dataset de evaluación: acme/notas-de-campo\n",
        f"{CLAIM_VS_BF16}.\n\n- Conjunto de prompts `acme/charlas`: https://example.org/charlas\n",
    ],
)
def test_a_field_labelled_as_the_text_names_the_text(text):
    assert reading(text, 3).status != "missing"


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM_VS_BF16}.\n\n- 语料：校准用的 `mix_a`\n",  # the field's value is a calibration's
        f"{CLAIM_VS_BF16}.\n\n见下文的文本：它们没有公开。\n",  # the word inside a sentence, not a label
        f"{CLAIM_VS_BF16}.\n\n- Dataset de entrenamiento: acme/notas-de-campo\n",  # a training set's label
    ],
)
def test_a_field_of_another_use_or_a_word_in_a_sentence_is_no_text(text):
    assert reading(text, 3).status == "missing"


# ---- a text kept apart from calibration, in the card languages (evidence_vetoes.CALIBRATION_EXCLUDED) --------------
# A sentence that says its text lies outside the calibration describes the measured text, not the calibration.
# Motivated by real-holdout-9/c es_ficha_hiwaifu ("fuera del conjunto de calibracion de la imatrix"); real-holdout-15/c
# es_ficha_scorpoon ("ajena a la calibracion") and real-holdout-17/e es_ficha_frank8465 ("un conjunto separado de la
# calibración") write the exclusion the same way.
@pytest.mark.parametrize(
    "exclusion",
    ["fuera del conjunto de calibracion de la imatrix", "ajenos a la calibración de la imatrix", "fora da calibração da imatrix"],
)
def test_a_count_of_texts_kept_apart_from_calibration_describes_the_text(exclusion):
    text = f"{CLAIM_VS_BF16}.\n\nLas métricas salen de 30 fragmentos de 256 tokens de chat, {exclusion}.\n"
    assert reading(text, 3).status == "incomplete"


def test_a_count_of_texts_used_for_calibration_stays_calibration():
    text = f"{CLAIM_VS_BF16}.\n\nLas métricas usan una imatrix hecha con 30 fragmentos de 256 tokens de chat.\n"
    assert reading(text, 3).status == "missing"


# ---- "N tokens of prose" (eval_text.DESCRIBED[1], the count of a text's tokens) -----------------------------------
# Prose is a kind of text as "text" and "corpus" are, and a plain four-digit count is whole ("2048 tokens de prosa").
# Motivated by real-holdout-15/c es_ficha_thedrainflorist ("2048 tokens de prosa"), real-holdout-9/c es_ficha_openmed
# ("4.092 tokens de prosa de ...") and real-holdout-14/b gufo_qwen38_27b_kernel_rooflines ("512 tokens of repo prose").
@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM_VS_BF16}, teacher-forced over 3000 tokens of essay prose.\n",
        f"{CLAIM_VS_BF16}, medida con 1536 tokens de prosa literaria.\n",
    ],
)
def test_a_count_of_tokens_of_prose_describes_the_text(text):
    assert reading(text, 3).status == "incomplete"


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM_VS_BF16}, medida con 2048 tokens de contexto.\n",  # a context length
        f"{CLAIM_VS_BF16}, medida con 2048 tokens de cada texto.\n",  # a count per text (D6)
    ],
)
def test_a_count_of_context_or_per_text_positions_describes_no_text(text):
    assert reading(text, 3).status == "missing"


# ---- a text described in the paragraph right over a KL table (eval_text_setup.over_kl_table) -----------------------
# The paragraph that ends where a table headed by a KL term starts is that table's setup, though none of its sentences
# names the measuring. Motivated by real-holdout-12/b t4_cache_requantization ("the original 664-token prompt" over a
# "Mean KL vs FP16" table) and real-holdout-16/a runner_vs_llamacpp_granite42 ("on all 16 prompts" over a KLD table).
SETUP = "The harness feeds the original 300-token prompt once. Decoding stops after 20 tokens.\n\n"


def test_a_text_described_over_a_kl_table_describes_the_text():
    text = "## Cache policies\n\n" + SETUP + "| Arm | Mean KL vs FP16 |\n|---|---:|\n| int8 | 0.0012 |\n"
    assert reading(text, 3).status == "incomplete"


def test_a_text_described_over_another_table_is_not_read():
    text = f"{CLAIM_VS_BF16}.\n\n## Speed\n\n" + SETUP + "| Arm | Decode tok/s |\n|---|---:|\n| int8 | 41.2 |\n"
    assert reading(text, 3).status == "missing"


# ---- a count of text units in Japanese without a counter word (eval_text_forms.COUNTED_JA) -------------------------
# Motivated by real-holdout-15/c ja_phase85_mxfp8 ("それぞれ10ケース") and real-holdout-11/d ja_coreml_mobilenet
# ("60 サンプルで評価"); real-holdout-3/misc ja_flash_next_mlx writes "31 プロンプト" alike.
@pytest.mark.parametrize(
    "text",
    [
        "KLD は 0.0231、12ケースの logits で比較した。\n",
        "KLD は 0.0231。精度: 40 サンプルで評価した。\n",
        "KLD は 0.0231、25 プロンプトで測定した。\n",
    ],
)
def test_a_japanese_count_of_text_units_describes_the_text(text):
    assert reading(text, 3).status == "incomplete"


@pytest.mark.parametrize(
    "text",
    [
        "KLD は 0.0231。\n\n拒否率: 100 プロンプトのうち 8。\n",  # refusals counted over prompts: another measurement
        "KLD は 0.0231。\n\n速度: 32 プロンプトで 41 tok/s。\n",  # a speed run's prompts
    ],
)
def test_a_japanese_count_of_another_runs_texts_is_not_read(text):
    assert reading(text, 3).status == "missing"
