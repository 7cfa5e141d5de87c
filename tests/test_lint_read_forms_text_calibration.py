"""D3 and D4 as cards write them beyond the main patterns (kldcard.lint.read.eval_text, .calibration): the
evaluation text as a count of "seqs", cases or samples, a counted run in a lead-in over a KL table, a corpus labelling
a row, a text described in the card languages; a result counted over part of the texts, a file of results and a
benchmark column name no text. A calibration given by its purpose then its use, a field label, a file or a path;
a calibration word ending a phrase, a method, a withheld set, a file passed to the evaluation, a fraction or slashed
abbreviation, a calibration still needed are no calibration data. Each form next to a look-alike."""

from __future__ import annotations

import pytest
from helpers_reading import reading

CLAIM = "Q4_K_M reaches a KLD of 0.0231"
CLAIM_VS_BF16 = "Q4_K_M reaches a mean KLD of 0.0231 against BF16."
CLAIM_VS_BASE = "Mean KL to the base model: 0.042 nats.\n\n"


# ---- D3: the evaluation text -------------------------------------------------------------------------------------
def test_a_count_of_seqs_describes_the_text():
    d = reading(f"{CLAIM}, teacher-forced on 8 held-out seqs.\n", 3)
    assert d.status == "incomplete", d


@pytest.mark.parametrize(
    "text",
    [
        "整模 16 个相同 teacher-forced 前缀中 top-1 有 14 个一致，平均 KL=0.03174。\n",  # a count of units in Chinese
        "KLD は 0.0231、8 件のプロンプトで測定した。\n",  # in Japanese
        "- 평가: KLUE-MRC 검증셋, KLD 0.0231\n",  # a Korean "validation set" in an evaluation field
    ],
)
def test_texts_described_in_the_card_languages_are_read(text):
    assert reading(text, 3).status != "missing"


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM} vs HF. Measured: free-running greedy agrees on 2 of 4 prompts.\n",
        f"{CLAIM} vs BF16, and the quant is closer than the baseline on 3 out of 8 texts.\n",
    ],
)
def test_a_result_counted_over_part_of_the_texts_names_no_text(text):
    assert reading(text, 3).status == "missing"


def test_a_plain_count_of_prompts_still_describes_the_text():
    assert reading(f"{CLAIM} vs BF16, measured on 140 chat prompts.\n", 3).status != "missing"


@pytest.mark.parametrize(
    "text",
    [
        "Tras la abliteracion la KL es de 0,0231; las negativas bajan a 9 sobre 100 prompts.\n",
        "Après l'abliteration la KL vaut 0,0231 ; les refus tombent à 9 sur 100 prompts.\n",
    ],
)
def test_a_result_counted_over_part_of_the_prompts_in_a_card_language_names_no_text(text):
    assert reading(text, 3).status == "missing"


def test_a_plain_count_of_prompts_in_a_card_language_still_describes_the_text():
    assert reading("La KL media es 0,0231 frente a BF16, medida sobre 100 prompts de chat.\n", 3).status != "missing"


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


@pytest.mark.parametrize("unit", ["48-case check", "16-sample parity set"])
def test_a_joined_count_of_cases_or_samples_describes_the_text(unit):
    text = f"On the old {unit} the split kernel gave mean KL 0.0021 against the reference.\n"
    assert reading(text, 3).status != "missing"


def test_a_joined_count_of_something_else_is_no_text():
    text = "On the old 48-layer model the split kernel gave mean KL 0.0021 against the reference.\n"
    assert reading(text, 3).status == "missing"


def test_a_corpus_labelling_a_row_of_a_kl_table_is_the_text():
    text = ("| KLD vs own bf16 | q4 | q8 |\n|---|---|---|\n| WikiText-2 — median | 0.203 | 0.027 |\n"
            "| C4 — mean | 0.807 | 0.031 |\n")
    assert reading(text, 3).status != "missing"


def test_a_benchmark_heading_a_score_column_is_not():
    text = ("| Quant | Mean KLD | GSM8K (%) |\n|---|---|---|\n| q4 | 0.0231 | 85.1 |\n"
            "| q8 | 0.0040 | 86.0 |\n")
    assert reading(text, 3).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        # a count of text units in Spanish, Portuguese and French
        "El autor informa de una divergencia KL media de 0,0089 sobre 256 sesiones fijas.\n",
        "KL médio de 0,031 medido em 512 artigos do conjunto retido.\n",
        "La KL moyenne est de 0,0012, mesurée sur 11 invites.\n",
    ],
)
def test_a_count_of_text_units_in_the_card_languages_describes_the_text(text):
    assert reading(text, 3).status == "incomplete"


@pytest.mark.parametrize(
    "text",
    [
        # a count in a sentence about no measurement, a part of a counted set, a comparison that measures nothing
        "KL media de 0,0089 frente al modelo base.\n\nEl pool de replay reúne 2.048 sesiones, con semilla 731.\n",
        "KL media de 0,0089 frente al modelo base; mejora en 12 de los 100 textos.\n",
        f"{CLAIM_VS_BF16}\n\nChanging `prompts.json` breaks comparison with banked runs.\n",
        f"{CLAIM_VS_BF16}\n\nI also replay 25 held-out tool-use sessions and score each turn.\n",
        f"{CLAIM_VS_BF16}\n\nA separate 200-question MMLU-Pro cross-check scores BF16 at 87.0%.\n",
    ],
)
def test_a_count_of_text_units_elsewhere_is_not_read(text):
    assert reading(text, 3).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        # a parity check is a measurement: its counted samples are the text compared
        "### F0 untrained, 16-sample parity\n\nMean KL 0.0123 after the fix, student vs teacher.\n",
        "Student vs teacher mean KL 0.0123.\n\nThe 16-sample compression parity passed.\n",
    ],
)
def test_a_counted_parity_set_describes_the_text(text):
    assert reading(text, 3).status == "incomplete"


# ---- D4: the calibration -----------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM}.\n\nArm chosen by calibration: **`alpha025`**.\n",  # the word ends a phrase: no field label
        # scales merely called calibrated: no data (CONVENTIONS.md; an imatrix is data's role, rule 15a.1, read below)
        f"{CLAIM}.\n\nThe NVFP4 build keeps calibrated power-of-two scales.\n",
        f"{CLAIM}.\n\nIt feeds this calibration bar: turbo3 mean 0.0115 nats (8K wikitext).\n",  # a target, not data
    ],
)
def test_calibration_words_that_describe_no_data_are_not_read(text):
    assert reading(text, 4).status == "missing"


def test_a_calibration_field_label_is_still_read():
    assert reading(f"{CLAIM}.\n\n- **Calibration:** 200 chat samples\n", 4).status != "missing"


@pytest.mark.parametrize(
    "text",
    [
        "KLD media 0,0231 frente a BF16. Para calibrar se usaron 200 conversaciones de chat y codigo.\n",
        "KLD media 0,0231 frente a BF16. Para calibrar se uso el corpus fijo del cuantizador: 250 filas de 2.048 tokens.\n",
        f"{CLAIM} vs BF16. For calibration, the quants used 512 rows of mixed chat data.\n",
        # any passive "se" verb right after the bare purpose (holdout9/c godenheim, sloptimistprime; holdout15/c woooflet)
        "KLD media 0,0231 frente a BF16. Para calibrar se juntaron 12 tipos de textos tecnicos y de dialogo.\n",
    ],
)
def test_calibration_given_by_its_purpose_then_use(text):
    assert reading(text, 4).status != "missing"


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM} vs BF16, measured on held-out text not used for calibration.\n",  # the use comes first: a negation
        "KLD media 0,0231 frente a BF16. Para calibrar la velocidad se midio el prefill.\n",  # no verb of use
        "KLD media 0,0231 frente a BF16. Para calibrar el reloj se ajustaron 12 tipos de textos.\n",  # what is calibrated is named
        "KLD media 0,0231 frente a BF16. Para calibrar se necesitó una hora en una RTX 4090.\n",  # a past verb of no data
        "KLD media 0,0231 frente a BF16. Para calibrar se comparó contra el modelo BF16.\n",
    ],
)
def test_calibration_purpose_lookalikes_are_not_read(text):
    assert reading(text, 4).status == "missing"


SCRIPT = (
    "# KL of each KV type vs f16 (mean KLD 0.0231 for q8_0)\n"
    'TEXT = os.path.join(ROOT, "calib_mix.txt")\n'
    'ARGS = ["-m", MODEL, "{opt}", TEXT, "-c", "2048", "--kl-divergence"]\n'
)


def test_a_calibration_named_file_passed_by_variable_to_the_evaluation_is_no_calibration():
    assert reading(SCRIPT.format(opt="-f"), 4).status == "missing"


def test_a_calibration_named_file_not_passed_to_the_evaluation_is_still_read():
    assert reading(SCRIPT.format(opt="--imatrix-out"), 4).status != "missing"


def test_a_calibration_set_said_to_be_withheld_is_not_named():
    text = f"{CLAIM_VS_BF16}\n\nThe imatrix data behind these GGUFs has not been released.\n"
    assert reading(text, 4).status == "missing"


def test_a_calibration_set_named_stays():
    text = f"{CLAIM_VS_BF16}\n\nThe imatrix data behind these GGUFs is calibration_datav3.txt from the llama.cpp discussions.\n"
    assert reading(text, 4).status != "missing"


@pytest.mark.parametrize(
    "text",
    [
        "| Quant | Calibration | Matrix bits/weight | Mean KL |\n|---|---|---|---|\n| IQ3 | four-format | 3.1 | 0.021 |\n",
        "| Quant (imatrix PTQ) | Passed | Mean KLD | Notes |\n|---|---|---|---|\n| IQ2_XS (imatrix PTQ) | 20/24 | 0.051 | `runs/LADDER.md` |\n",
    ],
)
def test_a_fraction_unit_ratio_or_report_file_names_no_calibration_data(text):
    assert reading(text, 4).status == "missing"


def test_a_calibration_file_still_names_the_data():
    text = "| Quant (imatrix from `calib/chat_mix.txt`) | Mean KLD |\n|---|---|\n| IQ2_XS | 0.051 |\n"
    assert reading(text, 4).status != "missing"


@pytest.mark.parametrize(
    "row",
    [
        # "n/a" in a table's cells, a slashed list of quant names: no dataset
        "| Laguna 2.1 IQ4_XS | n/a | n/a | Official imatrix IQ4_XS; no KL vs BF16 for this file |\n",
        "Low-bit GGUF ladders grew around it (Unsloth Dynamic, imatrix, K_P/K_L, NVFP4).\n",
        "Quants with imatrix tuning and/or calibration were slower on I/O here.\n",
    ],
)
def test_a_slashed_abbreviation_is_no_calibration_data(row):
    assert reading(f"{CLAIM_VS_BF16}\n\n{row}", 4).status == "missing"


@pytest.mark.parametrize(
    "row",
    [
        # a real path or Hub dataset beside the calibration word is still read
        "The imatrix was computed on data/calibration_v3.txt before quantizing.\n",
        "Calibration used the imatrix from bartowski/calibration_datav3 as published.\n",
    ],
)
def test_a_dataset_path_beside_the_calibration_word_is_read(row):
    assert reading(f"{CLAIM_VS_BF16}\n\n{row}", 4).status != "missing"


@pytest.mark.parametrize(
    "sentence",
    [
        "These figures need a domain-matched, multi-source calibration corpus before we publish them.\n",
        "On the 70B model the steering scale needs a calibration corpus of its own.\n",
    ],
)
def test_a_calibration_still_needed_is_no_calibration(sentence):
    assert reading(CLAIM_VS_BASE + sentence, 4).status == "missing"


@pytest.mark.parametrize(
    "sentence",
    [
        "The quants used a domain-matched calibration corpus of 300 chat samples.\n",
        "GPTQ required 256 calibration samples, drawn from C4.\n",
    ],
)
def test_a_calibration_used_is_still_read(sentence):
    assert reading(CLAIM_VS_BASE + sentence, 4).status != "missing"


@pytest.mark.parametrize(
    "row",
    [
        # a model's Hub id, the model after "quantizations of", a link to a model's page or a source file: no data
        "The calibration step lives in ../../tools/quantize-all.nix with the rest of the build.\n",
        "Calibration is skipped on the 0-1/100 refusal rows.\n",
    ],
)
def test_a_model_page_or_source_file_is_no_calibration_data(row):
    assert reading(f"{CLAIM_VS_BF16}\n\n{row}", 4).status == "missing"


@pytest.mark.parametrize(
    "row",
    [
        # imatrix quants: a calibration used, its data not given (rule 15a.1); the model's id or page is not its data
        "## llama.cpp imatrix Quantizations of acme-lab/Orca-Large\n",
        "The imatrix quants start from the base weights in acme/Falcon-3B-Instruct.\n",
        "Our imatrix quants are up: [7B](https://huggingface.co/someone/Model-7B-GGUF), [14B](https://huggingface.co/someone/Model-14B-GGUF).\n",
    ],
)
def test_imatrix_quants_of_a_model_name_no_calibration_data(row):
    d = reading(f"{CLAIM_VS_BF16}\n\n{row}", 4)
    assert d.status == "incomplete" and "dataset" not in d.value, d


@pytest.mark.parametrize(
    "row",
    [
        # a Hub dataset's link or a data file's address beside the calibration word is still read
        "The imatrix was built from [this set](https://huggingface.co/datasets/someone/chat-calib) before quantizing.\n",
        "Calibration used https://example.org/data/calib_mix.txt as published.\n",
    ],
)
def test_a_dataset_link_beside_the_calibration_word_is_read(row):
    assert reading(f"{CLAIM_VS_BF16}\n\n{row}", 4).status != "missing"


# ---- round 15 (lane a): the units of a text as data (kldcard.lint.read.eval_text_units), an imatrix used ----------
@pytest.mark.parametrize(
    "text",
    [
        "## Quality (ctx 512, 4 chunks of project docs, 1020 scored tokens)\n\nMean KLD 0.0231 against Q8_0.\n",
        "Ladder B as measured (same 3 条 prompt, last-token logits vs bf16): mean KL 0.0231.\n",
    ],
)
def test_counted_docs_and_a_counted_loan_word_prompt_describe_the_text(text):
    assert reading(text, 3).status == "incomplete"


@pytest.mark.parametrize(
    "text",
    [
        "Changelog entry, 2026-09-18\nDocs only. The rows show 16x q8's KLD, 0.002 absolute.\n",  # a date's day, not a count
        "## Quality (ctx 512, 4 chunks of 512 tokens)\n\nMean KLD 0.0231 against Q8_0.\n",  # chunks of tokens: D6's, no text
    ],
)
def test_a_date_or_chunks_of_tokens_describe_no_text(text):
    assert reading(text, 3).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM_VS_BF16} All the other quants in the chart are imatrix-calibrated K-quants.\n",
        f"## llama.cpp imatrix Quantizations of org/Model-9B\n\n{CLAIM_VS_BF16}\n",
        f"{CLAIM_VS_BF16} La receta también usa imatrix para repartir el error.\n",
        # a compared candidate with its own KL (rule 15a.1; before round 15 "a community imatrix quant" was read as no
        # calibration of this file, tests/test_lint_read_calibration.py)
        f"{CLAIM_VS_BF16} It beats a community imatrix quant of the same size, whose KLD is 0.0259.\n",
        f"{CLAIM_VS_BF16}\n\nMLP weights: NVFP4 via GPTQ (imatrix observer, static actorder).\n",
        f"{CLAIM_VS_BF16} El método es activation-aware, con calibración imatrix.\n",
    ],
)
def test_quants_called_imatrix_quants_state_a_calibration_in_part(text):
    assert reading(text, 4).status == "incomplete"


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM_VS_BF16} The menu's other build was re-quantized with an importance matrix for code.\n",
        f"{CLAIM_VS_BF16} See org/Model-9B-NEO-Imatrix-GGUF for the files.\n",  # inside a repository's name
        f"{CLAIM_VS_BF16} GPTQ and AWQ need calibration; the imatrix of llama.cpp does the same job.\n",  # in general
    ],
)
def test_an_imatrix_for_another_build_or_inside_a_name_is_not_read(text):
    assert reading(text, 4).status == "missing"


def test_a_calibration_after_a_sentence_closed_by_emphasis_is_not_hypothetical():
    text = f"{CLAIM_VS_BF16}\n\n- **If it has to be 4-bit, take Q4_K_M.** Its files were calibrated on similar prose.\n"
    assert reading(text, 4).status == "incomplete"


def test_a_calibration_after_a_closed_conditional_that_repeats_its_word_is_not_hypothetical():
    # the match's own sentence is found by its offset: by its text, the conditional's first "calibrated" was taken
    text = (f"{CLAIM_VS_BF16}\n\n- **If it has to be calibrated on prose, take Q4_K_M.** Its files were calibrated on "
            "similar prose.\n")
    assert reading(text, 4).status == "incomplete"


def test_a_conditional_calibration_in_its_own_sentence_stays_hypothetical():
    text = f"{CLAIM_VS_BF16}\n\n- **Note.** If the files were calibrated on similar prose, the perplexity flatters them.\n"
    assert reading(text, 4).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        "The mean KLD vs BF16 on math500 is 0.012 and on MBPP-plus 0.015.\n",  # task suites by their names
        "Mean KLD vs BF16 is 0.012 over MMLU (5-shot) prompts.\n",  # N-shot, but the suite's prompts are the text
        "Mean KLD vs BF16 over HellaSwag contexts: 0.009.\n",
        "Mean KLD vs BF16 on the AIME24 trajectories: 0.012.\n",
        "Mean KLD vs BF16: 0.012. Data: `lb_data_raw/data/*.jsonl` (16 tasks).\n",  # a glob of the eval's data files
    ],
)
def test_a_task_suite_the_kl_is_taken_on_names_the_text(text):
    d = reading(text, 3)
    assert d.status != "missing", d


def test_an_n_shot_task_suite_beside_the_kl_term_is_a_benchmark_not_the_text():
    assert reading("Mean KLD vs BF16 is 0.012; the quant keeps 5-shot GSM8K.\n", 3).status == "missing"
    assert reading("Mean KLD vs BF16 is 0.012; the quant keeps GSM8K (5-shot).\n", 3).status == "missing"


@pytest.mark.parametrize("text", ["Mean KLD vs BF16: 0.012. Evidence: `night/ev10/*.txt` (raw logs).\n",  # as often logs
                                  "Mean KLD vs BF16: 0.012. Results are written to out/*.jsonl.\n"])  # an output, not data
def test_a_glob_of_logs_or_outputs_names_no_text(text):
    assert reading(text, 3).status == "missing"
