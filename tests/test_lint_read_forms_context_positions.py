"""D5 and D6 as cards write them beyond the main patterns (kldcard.lint.read.context, .positions): the context
length in a run name, "at N tokens", the card languages, a code span, windows × length with a spaced "x", windows or
prompts counted then each one's length, a prefill's length; the scored positions as a count with "teacher-forced"
between, a stride, predictions or evaluated tokens counted in the Romance languages, a printout's field line, the
last position. Look-alikes next to each: a generation cap, a speed, a GPU count, a calibration's windows, a memory
row, a training run's length; "teacher-forced" alone (a mode), a window-length compound, positions picked by a
property, a hedged count, the final logits."""

from __future__ import annotations

import pytest
from helpers_reading import reading

CLAIM = "Q4_K_M reaches a KLD of 0.0231"
CLAIM_VS_BF16 = "Q4_K_M reaches a mean KLD of 0.0231 against BF16."
CLAIM_VS_BASE = "Mean KL to the base model: 0.042 nats.\n\n"


# ---- D5: the context length --------------------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "n_ctx"),
    [
        (f"{CLAIM}.\n\nLog: `/runs/kld/q4_vs_bf16_ctx2048_w1_0516.log`\n", 2048),  # a run name in a path
        (f"{CLAIM}; run `q4-c4096-s512`.\n", 4096),
        (f"{CLAIM} at 2048 tokens.\n", 2048),
        (f"{CLAIM} @ 1024 tokens.\n", 1024),
        ("La KL moyenne vaut 6,9e-5 à 2 048 jetons.\n", 2048),  # a space as the French thousands separator
        ("El KLD medio es 0.0231 (WikiText-2 raw, contexto 2048, 145 fragmentos).\n", 2048),
        ("La KLD médiane est 0,0231 avec un contexte 4096.\n", 4096),
        (f"{CLAIM} on WikiText at a `16k` context.\n", 16384),
        (f"{CLAIM} over 100 Simple English Wikipedia passages x 256 tokens.\n", 256),
    ],
)
def test_context_written_in_run_names_at_lengths_and_languages(text, n_ctx):
    d = reading(text, 5)
    assert d.status != "missing" and d.value["n_ctx"] == n_ctx, d


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM}.\n\nReplies were capped at 256 tokens.\n",  # a generation's cap
        f"{CLAIM}.\n\nDecode runs at 512 tokens/s.\n",  # a speed
        f"{CLAIM}, on 3x3090 GPUs (`c4090` node).\n",  # no multiple of 64
        f"{CLAIM}.\n\n**Rendimiento de servicio** (RTX PRO 6000, contexto 32.768 tokens, 128 prompts): 90 tok/s.\n",
    ],
)
def test_context_lookalikes_are_not_read(text):
    assert reading(text, 5).status == "missing"


@pytest.mark.parametrize(
    ("text", "n_ctx"),
    [
        (f"{CLAIM} against the Q8_0 on wikitext-2 (40 x 512; PPL of the Q8_0 = 8.49).\n", 512),
        ("El KLD medio es 0,0231 sobre wikitext-2 (24 x 1024, PPL 8,4).\n", 1024),
        ("La divergencia KL media es 0,0231 sobre seis ventanas de texto de 256 tokens.\n", 256),
        ("La divergencia KL media es 0,0231; se comprobo con 512 tokens por ventana.\n", 512),
        ("La KL moyenne vaut 0,0231, mesurée avec 1024 jetons par fenêtre.\n", 1024),
        (f"{CLAIM} on wikitext-2-raw, 512–2048 token prefills.\n", 2048),
    ],
)
def test_context_of_spaced_products_window_phrases_and_prefills(text, n_ctx):
    d = reading(text, 5)
    assert d.status != "missing" and d.value["n_ctx"] == n_ctx, d


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM}, measured on 2 x 3090 GPUs.\n",  # a GPU count: no multiple of 64
        f"{CLAIM}; the images were resized to 3 x 224 pixels first.\n",
        "La divergencia KL media es 0,0231; el servidor genera 60 tokens por segundo.\n",  # a speed, not a window
    ],
)
def test_context_lookalikes_of_the_new_forms_are_not_read(text):
    assert reading(text, 5).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        "La KLD media es 0,0231 frente a BF16. Para la calibracion se usan ventanas de 4096 tokens y semillas fijas.\n",
        "A KLD média é 0,0231 contra BF16. Na calibração usamos janelas de 4096 tokens.\n",
    ],
)
def test_windows_of_a_calibration_in_a_card_language_are_no_context(text):
    assert reading(text, 5).status == "missing"


def test_windows_of_the_measurement_beside_calibration_are_still_read():
    text = "La KLD media es 0,0231 frente a BF16. La KLD se midio con ventanas de 4096 tokens, sin datos de calibracion.\n"
    assert reading(text, 5).status != "missing"


@pytest.mark.parametrize(
    ("text", "n_ctx"),
    [
        ("El KLD medio frente al bf16 es 0,0231: 24 prompts de 1024 tokens, puntuados hasta el final.\n", 1024),
        ("Mean KLD vs BF16 is 0.0231, measured on 180 samples of 2048 tokens from our chat logs.\n", 2048),
    ],
)
def test_counted_prompts_or_samples_of_a_length_give_the_context(text, n_ctx):
    d = reading(text, 5)
    assert d.status != "missing" and d.value.get("n_ctx") == n_ctx, d


def test_prompts_counted_without_a_length_give_no_context():
    assert reading("Mean KLD vs BF16 is 0.0231 over 24 prompts from our chat logs.\n", 5).status == "missing"


def test_a_context_in_a_memory_row_is_the_deployments():
    text = ("| Métrica | Valor |\n|---|---|\n| Divergencia KL vs bf16 | 0,0231 |\n"
            "| Memoria a 8k de contexto (RTX 4090) | 2,1 GB |\n")
    assert reading(text, 5).status == "missing"


def test_a_context_in_a_measuring_row_stays():
    text = ("| Métrica | Valor |\n|---|---|\n| Divergencia KL vs bf16 | 0,0231 |\n"
            "| Evaluada a 8k de contexto | sí |\n")
    assert reading(text, 5).status != "missing"


def test_a_clause_with_an_equals_sign_is_no_field_line():
    # "k=1024, ..." is a sentence's clause: the line is not a record's field, the hedge of its sentence still applies
    text = (f"{CLAIM_VS_BF16}\n\n- Fitted on 900 calibration trajectories\n  with teacher targets at k=1024, sequence length 1024,"
            " and it could be trained longer.\n")
    assert reading(text, 5).status == "missing"


@pytest.mark.parametrize(
    "sentence",
    [
        "- **Brief run.** 900 steps of single 256-token chunks (~230k tokens).\n",
        "The adapter was fine-tuned on 2048-token sequences from our chat logs.\n",
    ],
)
def test_a_training_runs_length_is_no_context_length(sentence):
    assert reading(CLAIM_VS_BASE + sentence, 5).status == "missing"


@pytest.mark.parametrize(
    "sentence",
    [
        "The KL was measured on 2048-token sequences from our chat logs.\n",
        "We trained the adapter, then scored the KL over 256-token chunks of held-out text.\n",
    ],
)
def test_a_measurements_length_is_still_read(sentence):
    assert reading(CLAIM_VS_BASE + sentence, 5).status != "missing"


# ---- D6: the scored positions ------------------------------------------------------------------------------------
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


# ---- round 14: a mode of every token, windows counted by their source, a length in another step's section ---------
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
        f"{CLAIM_VS_BASE}## Arquitectura y entrenamiento\n\nEl pool de replay reúne 2.048 sesiones, con límite de contexto 8.192.\n",
        f"{CLAIM_VS_BASE}## Deployment\n\n### Pins\n\n- Profile: 131,072-token context, FP16 cache, 512-token chunks, one slot\n",
    ],
)
def test_a_length_in_a_training_or_deployment_section_is_no_context(text):
    assert reading(text, 5).status == "missing"


def test_a_length_in_a_measuring_subsection_of_a_deployment_is_read():
    text = f"{CLAIM_VS_BASE}## Deployment\n\n### KL measurement\n\n- Profile: 512-token chunks, one slot\n"
    assert reading(text, 5).status != "missing"


@pytest.mark.parametrize(
    "text",
    [
        "Mean KL vs BF16 0.0231; the quant's top-1 agreed on 61/64 tokens at 2K and on 59/64 at 8K.\n",
        "KLD against the f16 cache, 12 chunks at 2K: mean 0.0231.\n",
    ],
)
def test_units_counted_at_a_length_give_the_context(text):
    d = reading(text, 5)
    assert d.status != "missing" and d.value.get("n_ctx") == 2048, d


def test_a_count_at_a_length_with_a_unit_after_is_no_context():
    assert reading(f"{CLAIM} vs BF16; decode ran 64 tokens at 2048 MHz.\n", 5).status == "missing"


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


def test_a_quantizations_block_size_is_no_window():
    assert reading(f"{CLAIM} vs BF16; with a block size of 128 the INT4 recipe is worse.\n", 5).status == "missing"


def test_a_long_block_size_is_still_a_window():
    d = reading(f"{CLAIM} vs BF16, measured with a block size of 1024.\n", 5)
    assert d.status != "missing" and d.value.get("n_ctx") == 1024, d


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
    ("text", "n_ctx"),
    [
        ("Mean KL vs BF16 0.0231 over held-out prompts (39–71 tokens), nine positions each.\n", 71),
        ("KL moyenne contre BF16 : 0,0231 ; invites de 526-547 jetons.\n", 547),
    ],
)
def test_prompts_with_a_range_of_lengths_give_the_longest_as_context(text, n_ctx):
    d = reading(text, 5)
    assert d.status != "missing" and d.value.get("n_ctx") == n_ctx, d


def test_a_range_of_tokens_without_a_prompt_noun_is_no_context():
    assert reading(f"{CLAIM} vs BF16; answers ran 1000-2000 tokens.\n", 5).status == "missing"
