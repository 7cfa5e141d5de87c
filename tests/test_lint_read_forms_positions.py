"""D6, the scored positions, as cards write them beyond the main patterns (kldcard.lint.read.positions,
.position_counts): a count with "teacher-forced" between, a stride, predictions, targets or evaluated tokens counted
(also in the Romance languages), a printout's field line, the last position, the next token alone, windows counted by
their source. Look-alikes next to each: "teacher-forced" or "every token" alone (a mode), a window-length compound,
positions picked by a property, a hedged count, the final logits, a decimal comma or a list item's number."""

from __future__ import annotations

import pytest
from helpers_reading import reading

CLAIM = "Q4_K_M reaches a KLD of 0.0231"
CLAIM_VS_BF16 = "Q4_K_M reaches a mean KLD of 0.0231 against BF16."


def test_a_windows_length_compound_is_no_count_of_positions():
    text = (
        f"{CLAIM} vs HF. The state is thresholded after each complete 64-token chunk, so the kernel sees every "
        "chunk boundary the same way.\n"
    )
    assert reading(text, 6).status == "missing"


def test_a_count_before_the_compound_is_still_read():
    assert reading(f"{CLAIM}, scored over 40 512-token chunks of wikitext-2.\n", 6).status != "missing"


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM} vs BF16. About 95% of the KL mass comes from the 2% of positions with KL > 1.\n",
        f"{CLAIM} vs BF16; single-logit outliers moved (at positions with KL ~1e-7).\n",
        f"{CLAIM} vs BF16. Top-1 changes are counted at positions where the top-2 gap exceeds 0.5.\n",
    ],
)
def test_positions_picked_by_a_property_are_not_the_scored_positions(text):
    assert reading(text, 6).status == "missing"


def test_all_positions_with_a_scheme_is_still_read():
    assert reading(f"{CLAIM} vs BF16, averaged over all positions with a full left context.\n", 6).status != "missing"


@pytest.mark.parametrize(
    "text",
    [
        "| metric | Q4 | Q5 |\n|---|---|---|\n| KLD vs BF16: teacher-forced · decode-path | 0.0231 · 0.0290 | 0.0190 · 0.0242 |\n",
        f"{CLAIM} vs BF16. The scoring is teacher-forced, so the quant always sees the reference's context.\n",
        "Outer scale on: teacher-forced KLD 0.184 → 0.152 against BF16 over 5 fresh boots.\n",
    ],
)
def test_teacher_forcing_alone_is_a_mode_not_positions(text):
    assert reading(text, 6).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM} vs BF16, teacher-forced over 1,200 continuation tokens of our chat set.\n",
        f"{CLAIM} vs BF16 (teacher-forced).\n\nEach run scores 64 targets per prompt.\n",
        f"{CLAIM} vs BF16. Both paths were compared teacher-forced on the same greedy continuation.\n\n"
        "```\nPositions checked: 128\n```\n",
        f"{CLAIM} vs BF16, teacher-forced; the maximum is taken over the decoded\npositions of each prompt.\n",
    ],
)
def test_teacher_forcing_with_a_count_near_it_is_read(text):
    assert reading(text, 6).status != "missing"


@pytest.mark.parametrize(
    ("text", "count"),
    [
        (f"{CLAIM} vs BF16, averaged over 24,262 teacher-forced steps.\n", 24262),
        (f"{CLAIM} vs BF16 over 96 teacher-forced frames of speech tokens.\n", 96),
        ("整模 16 个相同 teacher-forced 前缀中，平均 KL=0.0231。\n", 16),
    ],
)
def test_a_count_of_teacher_forced_units_is_a_count_of_positions(text, count):
    d = reading(text, 6)
    assert d.status != "missing" and d.value.get("count") == count, d


def test_a_rate_per_tokens_far_away_is_no_count_for_the_mode():
    text = (f"{CLAIM} vs BF16. The scoring is teacher-forced: each step sees the reference's context.\n"
            + "Other notes follow.\n" * 12 + "The quant flips 0.24 answers per 1,000 tokens.\n")
    assert reading(text, 6).status == "missing"


def test_a_japanese_comparison_word_makes_a_range_of_positions_a_measurement():
    text = "KLD は 0.0231。\n\n- 比べるのは decode position 4..66。\n"
    assert reading(text, 6).status != "missing"


def test_a_sample_count_in_a_continued_measuring_command_is_read():
    text = (f"{CLAIM_VS_BF16}\n\n```\npython tools/measure_logit_kl.py \\\n  --model ./q4 \\\n  --n-samples 16 \\\n"
            "  --dtype bfloat16\n```\n")
    assert reading(text, 6).status != "missing"


def test_a_sample_count_in_a_command_of_another_job_is_not():
    text = (f"{CLAIM_VS_BF16}\n\n```\npython tools/make_plots.py \\\n  --input ./runs \\\n  --n-samples 16 \\\n"
            "  --dpi 200\n```\n")
    assert reading(text, 6).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        "Mean KLD against the BF16 model is 0.0121, on wikitext-2 test, context 2048, stride 512.\n",
        "We score KLD with `python score_kld.py --model q4 --reference bf16 --context-length 2048 --stride 512`: 0.0093 mean.\n",
    ],
)
def test_a_stride_is_a_scheme_of_positions(text):
    assert reading(text, 6).status != "missing"


def test_a_stride_of_a_perplexity_run_without_kl_is_not_read():
    text = (
        "Perplexity came out at 6.12 with `our-perplexity --context 4096 --stride 2048` over 40,000 tokens.\n\n"
        "Mean KLD against the BF16 model is 0.0121.\n"
    )
    assert reading(text, 6).status == "missing"


def test_a_stride_word_alone_is_not_read():
    text = "Mean KLD against the BF16 model is 0.0121; the kernel uses a strided layout.\n"
    assert reading(text, 6).status == "missing"


@pytest.mark.parametrize(
    "sentence",
    ["Cambiaron 31 de las 1.204 predicciones del conjunto.", "Com três janelas por artigo, são 12.288 previsões por modelo."],
)
def test_a_count_of_predictions_in_spanish_or_portuguese_is_a_count_of_positions(sentence):
    text = f"El KL medio frente a FP32 es 0,0124.\n\n{sentence}\n"
    assert reading(text, 6).status != "missing"


def test_a_prediction_word_without_a_count_is_not_read():
    text = "El KL medio frente a FP32 es 0,0124.\n\nLas predicciones cambiaron poco.\n"
    assert reading(text, 6).status == "missing"


@pytest.mark.parametrize("sentence", ["La prueba se basa en 64 tokens evaluados.", "Foram 1.536 tokens avaliados no total."])
def test_a_count_of_evaluated_tokens_in_spanish_or_portuguese_is_a_count_of_positions(sentence):
    text = f"El KL medio frente a BF16 es 0,0031 nats. {sentence}\n"
    assert reading(text, 6).status != "missing"


def test_evaluated_tokens_without_a_count_are_not_read():
    text = "El KL medio frente a BF16 es 0,0031 nats. Los tokens evaluados vienen de wikitext.\n"
    assert reading(text, 6).status == "missing"


def test_a_printout_field_is_read_though_a_hedge_follows_without_a_stop():
    text = ("Eval on our chat set vs the bf16 cache:\nMean KLD: 0.0231 nats/token\nScored positions: 48,210\n"
            "One day this could run on a laptop!\n")
    assert reading(text, 6).status != "missing"


def test_a_hedged_sentence_still_vetoes_its_count():
    text = f"{CLAIM_VS_BF16}\n\nIf we had more time we could score 48,210 positions per run.\n"
    assert reading(text, 6).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        # the output layer's logits, at every position: no scheme of scored positions
        "# Blend final-logit KLD tail comparison\n\nQ4_K_M reaches a mean KLD of 0.0231 against BF16.\n",
        f"{CLAIM_VS_BF16}\n\n| metric | change |\n|---|---|\n| final-logit L2 | -46.11 % |\n",
    ],
)
def test_final_logits_are_no_position_scheme(text):
    assert reading(text, 6).status == "missing"


@pytest.mark.parametrize(
    "row",
    ["Only the final token of each prompt is scored.", "We score the last-logit distribution of each prompt.",
     "KL is taken at the final position of every window."],
)
def test_the_last_position_is_still_a_scheme(row):
    assert reading(f"{CLAIM_VS_BF16} {row}\n", 6).status != "missing"


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM} vs BF16. The per-token KL can be taken at every token of the text and then averaged.\n",
        f"{CLAIM} vs BF16.\n\nThe kernel loads the weights once, not again for each token.\n",
    ],
)
def test_every_token_alone_is_a_mode_not_positions(text):
    assert reading(text, 6).status == "missing"


def test_every_token_with_a_count_near_it_is_read():
    text = f"{CLAIM} vs BF16, scored at every token of 2,048 held-out tokens.\n"
    assert reading(text, 6).status != "missing"


def test_windows_counted_by_their_source_then_a_length_give_positions():
    text = "Mean KL vs fp32 over 100 Simple English Wikipedia\npassages x 256 tokens: 0.0231.\n"
    assert reading(text, 6).status != "missing"


def test_a_source_times_a_length_without_a_measurement_is_no_count():
    text = f"{CLAIM} vs BF16.\n\nThe training mix held 100 Simple English Wikipedia passages x 256 tokens.\n"
    assert reading(text, 6).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM} vs BF16; the KL is read at the next token alone, over twelve prompts.\n",
        f"{CLAIM} vs BF16, scoring only the next-token distribution of each prompt.\n",
    ],
)
def test_the_next_token_alone_is_a_scheme_of_positions(text):
    assert reading(text, 6).status != "missing"


def test_a_next_token_distribution_alone_is_no_scheme():
    assert reading(f"{CLAIM}: the KL between the two next-token distributions.\n", 6).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        "The FP32-reference screen, with eight passages and 256 targets, gives a mean KL of 0.0231.\n",
        "Each next token is predicted from the text before it: 48 distinct targets, mean KL 0.0231 vs BF16.\n",
    ],
)
def test_a_count_of_targets_is_a_count_of_positions(text):
    assert reading(text, 6).status != "missing"


def test_targets_of_a_plan_without_a_measurement_are_no_count():
    assert reading(f"{CLAIM} vs BF16.\n\nThe roadmap lists 12 quarterly targets for the team.\n", 6).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        "La KL media frente a BF16 sobre los tokens: 0,511 nats; sin podar queda en 0,089 nats.\n",
        "La KL media es 0,0231. Arquitectura: dimension intermedia 1024, posiciones rotatorias (RoPE).\n",
    ],
)
def test_a_decimal_comma_or_a_list_item_is_no_count_of_positions(text):
    assert reading(text, 6).status == "missing"


def test_a_count_of_positions_in_spanish_is_still_read():
    assert reading("La KL media es 0,0231 sobre 1.024 posiciones puntuadas.\n", 6).status != "missing"


@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("Q4_K_M reaches a KL divergence of 0.0231 against BF16, scored over ~250,000 tokens of chat and code.\n", 250000),
        ("Mean KLD of Q4_K_M against BF16 was 0.0231 across 16,320 tokens of wikitext-2.\n", 16320),
        ("La KL media frente a FP32 es 0,0231, medida sobre 4.092 tokens de prosa de dominio publico.\n", 4092),
        ("Mean KL of the NVFP4 body against bf16 is 0.0231 on a held-out 512-token eval slice.\n", 512),
    ],
)
def test_the_tokens_a_kl_is_taken_over_are_its_count(text, count):
    # CONVENTIONS rule 15b.1 (localbench, kalomaze, olive, openmed, axolotl)
    d = reading(text, 6)
    assert d.status != "missing" and d.value.get("count") == count, d


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM} vs BF16. For prompts over 512 tokens the kernel switches to the chunked path.\n",
        f"{CLAIM} vs BF16. The draft model was trained on 4096 tokens of chat.\n",
        f"{CLAIM} vs BF16. Perplexity was taken over 65,536 tokens of wikitext.\n",
    ],
)
def test_a_length_or_another_runs_tokens_is_no_count(text):
    assert reading(text, 6).status == "missing"


def test_the_last_position_of_greedy_decoding_is_not_the_kls():
    text = (
        f"{CLAIM} vs BF16.\n\nThe prefill logits came out as garbage, yet greedy decoding (which only computes the head "
        "row of the last position) was fine.\n"
    )
    assert reading(text, 6).status == "missing"


def test_a_kl_at_the_last_position_is_still_read():
    assert reading(f"{CLAIM} vs BF16, taken on the last-position logits of each of 8 prompts.\n", 6).status != "missing"


@pytest.mark.parametrize(
    "text",
    [
        "Mean KL of the q4 cache against f16 is 0.0231 nats over the generated tokens.\n",
        "| Metric | What it measures | Value |\n|---|---|---|\n| Generated-token KLD, held-out text | drift on written tokens | 0.0231 |\n",
    ],
)
def test_the_generated_tokens_are_a_scheme(text):
    d = reading(text, 6)
    assert d.status != "missing" and d.value.get("scheme") == "response-only", d


def test_generated_tokens_of_a_speed_run_are_no_scheme():
    assert reading(f"{CLAIM} vs BF16.\n\nOver the generated tokens the server held 113 tok/s.\n", 6).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        # a rate's denominator (behemoth h10), a length (curvedinf h5), a speed run's count (local_kimi h13)
        f"{CLAIM} vs BF16. The scoring is teacher-forced; the quant flips 0.24 times per 1,000 tokens.\n",
        f"{CLAIM} vs BF16 (teacher-forced); calibrated on samples de 256 a 2048 tokens de longitud.\n",
        f"{CLAIM} vs BF16, teacher-forced. The speed run decoded 64 tokens at 113 tok/s.\n",
    ],
)
def test_teacher_forced_beside_a_rate_a_length_or_a_speed_is_a_mode(text):
    assert reading(text, 6).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        # the speed words of the other card languages, as context_written.SPEED reads them: a Cyrillic unit at the
        # clause's end, a Cyrillic capital, an accented capital (positions.OTHER_RUN compiled them ASCII-only)
        f"{CLAIM} vs BF16, teacher-forced. Прогон скорости: 64 tokens decoded at 113 токенов/с\n",
        f"{CLAIM} vs BF16, teacher-forced. Памяти хватило на 64 tokens.\n",
        f"{CLAIM} vs BF16, teacher-forced. Le test de MÉMOIRE a décodé 64 tokens.\n",
    ],
)
def test_teacher_forced_beside_a_speed_in_another_language_is_a_mode(text):
    assert reading(text, 6).status == "missing"


def test_teacher_forced_beside_a_count_of_its_steps_is_still_read():
    text = f"{CLAIM} vs BF16 over 55 calibration pages, 24,262 teacher-forced steps.\n"
    assert reading(text, 6).status != "missing"


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        # Italian: "token" takes no plural, the participle follows as in Spanish ("1020 tokens evaluados")
        ("La KL media rispetto al BF16 vale 0,0042 (contesto 4096, 128 token valutati).\n", False),
        ("La KL media rispetto al BF16 vale 0,0042 su 2.048 token confrontati.\n", False),
        # a count of tokens with no participle of scoring is no count of scored positions
        ("La KL media rispetto al BF16 vale 0,0042; il modello genera 128 token al secondo.\n", True),
    ],
)
def test_italian_tokens_scored_are_positions(text, missing):
    assert (reading(text, 6).status == "missing") is missing


TABLE = "| Token batch | {count} | PPL ratio | {kl} |\n|---|---:|---:|---:|\n| 1 | 254 | 0.9962 | 0.0024 |\n"


@pytest.mark.parametrize(
    ("header", "missing"),
    [
        # a count column in a header row that also has a perplexity column: the row is one record, the KL column in it
        # makes the count the KL's (the perplexity veto read only the clause around the count's cell)
        (TABLE.format(count="Scored tokens", kl="Mean KLD"), False),
        (TABLE.format(count="Positions", kl="Mean KLD"), False),
        # a header with a perplexity column and no KL column: the count is the perplexity's
        (TABLE.format(count="Scored tokens", kl="Wall time"), True),
    ],
)
def test_a_count_column_beside_perplexity_and_kl_columns_is_read(header, missing):
    text = f"{CLAIM_VS_BF16}\n\n{header}"
    assert (reading(text, 6).status == "missing") is missing


# the KL taken at or over the answer's positions is a scheme (response-only): holdout14/b gemma_cpp_issue1002 ("at the
# answer token"), holdout13/f es_idiotsavant ("sobre las posiciones de RESPUESTA"): two authors
@pytest.mark.parametrize(
    "text",
    [
        "Mean KL(bf16 || int8) is 0.0231 nats, read at the answer token of each question.\n",
        "Mean KL against BF16 is 0.0231, taken over the response positions of the chat set.\n",
        "KL(BF16 || cuantizado) medio 0,0231, calculada en las posiciones de la respuesta.\n",
    ],
)
def test_a_kl_at_the_answer_positions_is_a_scheme(text):
    d = reading(text, 6)
    assert d.status != "missing" and d.value.get("scheme") == "response-only", d


def test_an_answer_token_without_a_measurement_is_no_scheme():
    text = f"{CLAIM_VS_BF16}\n\nThe chat template puts a newline at the answer token of every turn.\n"
    assert reading(text, 6).status == "missing"


# a bare token count listed among a KL run's settings, in the KL's sentence or on a lead-in line over a KL table:
# holdout10/d sglang_qwen3_30b ("..., 1820 tokens:"), holdout14/c zh_kernel_equivalence ("（词表 …，8 个 token，…）："),
# holdout3/hf thedrainflorist_glm53 ("(streamed referee, 2048 tokens, ...)"): three authors
@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("Mean KL against the trainer's logits is 0.0231 (saved batch, 2048 tokens).\n", 2048),
        ("**Run** (vocabulary 151,936, 16 tokens, fixed seed):\n\n| dtype | KL(ref ‖ new) |\n|---|---|\n| FP8 | 0.0231 |\n", 16),
    ],
)
def test_a_listed_token_count_beside_a_kl_is_the_count_scored(text, count):
    d = reading(text, 6)
    assert d.status != "missing" and d.value.get("count") == count, d


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM_VS_BF16}\n\nDecoding ran greedy (temperature 0, 256 tokens, one prompt).\n",  # no KL in the sentence
        "The mean KL against BF16 is 0.0231 over 100 windows (512 tokens, stride 256).\n",  # a window's length
        f"{CLAIM_VS_BF16}\n\nThe tokenizer's vocabulary: 151,936 tokens, byte fallback on.\n",  # a label's value
        "Mean KL vs BF16 0.0231; decode speed (batch 1, 512 tokens) 41 tok/s.\n",  # a speed run's
    ],
)
def test_a_listed_token_count_elsewhere_is_no_count_scored(text):
    d = reading(text, 6)
    assert d.value.get("count") in (None, 100), d


@pytest.mark.parametrize("text", [f"{CLAIM_VS_BF16} It is the mean over 48 scored sequences.\n",
                                  f"{CLAIM_VS_BF16} It is the mean over the 12 evaluated windows.\n"])
def test_a_count_of_scored_windows_is_a_position_scheme(text):
    assert reading(text, 6).status != "missing"


@pytest.mark.parametrize("sentence", ["The server handled 48 concurrent sequences.",
                                      "The reward model scored 48 sequences per batch.",  # another scorer's count
                                      "A judge model rated 200 evaluated sequences for helpfulness."])
def test_a_count_of_sequences_no_kl_was_scored_on_is_not_read(sentence):
    assert reading(f"{CLAIM_VS_BF16} {sentence}\n", 6).status == "missing"


def test_a_count_of_sequences_beside_another_scorer_is_read_where_the_kl_is_named():
    text = f"{CLAIM_VS_BF16} The KL and the judge both scored the same 48 sequences.\n"
    assert reading(text, 6).status != "missing"


def test_a_positions_label_takes_a_count_not_the_first_digit_of_the_kl_value():
    d = reading("Mean KLD vs BF16 over 141 compared positions: 0.012.\n", 6)
    assert [e.text for e in d.evidence] == ["141 compared positions"], d


@pytest.mark.parametrize(("text", "count"), [("Mean KLD vs BF16: 0.012 (n_pos=4).\n", 4),
                                             ("Mean KLD vs BF16: 0.012 (num_positions: 128).\n", 128)])
def test_a_positions_key_of_a_log_is_a_count(text, count):
    d = reading(text, 6)
    assert d.status != "missing" and d.value.get("count") == count, d


@pytest.mark.parametrize("sentence", ["We scored 48 sequences, then the classifier flagged none.",  # not its subject
                                      "We scored 48 sequences; a grader was not involved."])
def test_a_scorer_named_elsewhere_in_the_sentence_leaves_the_count_the_kls(sentence):
    assert reading(f"{CLAIM_VS_BF16} {sentence}\n", 6).status != "missing"


def test_a_comparison_of_speed_in_the_sentence_leaves_a_listed_token_count():
    text = "Mean KLD vs BF16 0.012 (WikiText, 20,480 tokens), and the Q4 build is 2x faster.\n"
    assert reading(text, 6).status != "missing"
