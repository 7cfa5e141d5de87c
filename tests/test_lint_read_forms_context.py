"""D5, the context length, as cards write it beyond the main patterns (kldcard.lint.read.context,
.context_written): a run name, "at N tokens", the card languages, a code span, windows × length with a spaced "x",
windows or prompts counted then each one's length (or the range of their lengths), units counted at a length, a
prefill's length. Look-alikes next to each: a generation cap, a speed, a GPU count, a calibration's windows, a memory
row, a training run's length, a quantization's block size, a length under a training or deployment heading."""

from __future__ import annotations

import pytest
from helpers_reading import reading

CLAIM = "Q4_K_M reaches a KLD of 0.0231"
CLAIM_VS_BF16 = "Q4_K_M reaches a mean KLD of 0.0231 against BF16."
CLAIM_VS_BASE = "Mean KL to the base model: 0.042 nats.\n\n"


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


def test_a_quantizations_block_size_is_no_window():
    assert reading(f"{CLAIM} vs BF16; with a block size of 128 the INT4 recipe is worse.\n", 5).status == "missing"


def test_a_long_block_size_is_still_a_window():
    d = reading(f"{CLAIM} vs BF16, measured with a block size of 1024.\n", 5)
    assert d.status != "missing" and d.value.get("n_ctx") == 1024, d


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


@pytest.mark.parametrize(
    "text",
    [
        # a bold list label over its items (zh_arxiv_bot h13; "**Calibration:**")
        "## Setup\n\n- **Models**: 8B to 230B\n- **训练配置**：\n  - 序列长度：8K\n  - Batch size：16\n\n"
        f"## Results\n\n{CLAIM} vs BF16.\n",
        f"{CLAIM} vs BF16.\n\n**Calibration:**\n- 128 samples, seq len 2048\n- open-platypus\n",
        # a comment banner in a script (es_idiotsavant h13)
        f"{CLAIM} vs BF16.\n\n```\n# ────────────\n#  CALIBRACION\n# ────────────\n#  256 muestras x 4096 tokens del servidor\n```\n",
        f"{CLAIM} vs BF16.\n\n```python\n# --- calibration ---\nSEQ_LEN = 2048  # sequence length of 2048\n```\n",
    ],
)
def test_a_length_in_a_labelled_step_block_is_not_the_kls(text):
    assert reading(text, 5).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        f"**Evaluation:**\n- {CLAIM} vs BF16\n- sequence length of 2048\n",
        f"{CLAIM} vs BF16.\n\n```\n# ────────────\n#  KL EVAL\n# ────────────\n#  64 x 2048 tokens of wikitext\n```\n",
    ],
)
def test_a_length_in_a_labelled_measuring_block_is_still_read(text):
    d = reading(text, 5)
    assert d.status != "missing" and d.value.get("n_ctx") == 2048, d


@pytest.mark.parametrize(
    "text",
    [
        # a speed run's context (glyd h6, ja_nix h13): the sentence gives a speed or memory and names no KL
        f"{CLAIM} vs BF16.\n\nMeasured on one GPU each, with a 4k-token context; memory is the GPU memory in use.\n",
        f"{CLAIM} vs BF16.\n\n# 測ると(KVキャッシュq8_0, context 131072)、\n# 28.6GiBで109.8トークン/秒。\n",
    ],
)
def test_a_context_in_a_speed_sentence_is_the_runs_not_the_kls(text):
    assert reading(text, 5).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        # the prefill words name the phase a KL run feeds its windows through, not a speed
        f"{CLAIM} vs BF16 on wikitext-2 with 256–1024 token prefills.\n",
        f"{CLAIM} vs BF16 at a 4k-token context (the KL run, 31 tok/s).\n",
        # the weights served are the ones measured (llmkube h3)
        f"{CLAIM} vs BF16.\n\n`llama-perplexity` on wikitext-2-raw, `-c 8192`, run on the Q4_K_M weights that we actually serve.\n",
    ],
)
def test_a_context_beside_a_prefill_or_the_kl_is_still_read(text):
    assert reading(text, 5).status != "missing"


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        # a long length written with a space as the thousands separator is as long as "131,072" (plain number grammar):
        # the model's or a deployment's, unless the sentence measures something
        (f"{CLAIM} vs BF16.\n\nEach session reserves its cache up front (2.7 GB at 131 072 tokens).\n", True),
        (f"{CLAIM} vs BF16.\n\nEach session reserves its cache up front (2.7 GB at 131,072 tokens).\n", True),
        # the same length where the KL was measured there is read; a short spaced length is read too
        (f"{CLAIM} vs BF16, measured at 131 072 tokens.\n", False),
        ("La KL moyenne vaut 6,9e-5 face au BF16, à 4 096 jetons.\n", False),
    ],
)
def test_a_long_length_with_a_spaced_separator_is_the_deployments(text, missing):
    assert (reading(text, 5).status == "missing") is missing


@pytest.mark.parametrize(
    ("text", "n_ctx"),
    [
        # Italian, the label before the number, as the other card languages ("contexto 2048", "contexte de 512")
        ("La KL media rispetto al BF16 vale 0,0042 (contesto 16,384, WikiText-2 raw validation).\n", 16384),
        ("La KL media rispetto al BF16 vale 0,0042, con una lunghezza del contesto di 2048 token.\n", 2048),
    ],
)
def test_context_in_italian(text, n_ctx):
    d = reading(text, 5)
    assert d.status != "missing" and d.value["n_ctx"] == n_ctx, d


def test_an_italian_serving_context_is_the_deployments():
    # the bare word in a sentence about serving speed is the deployment's context (as "contexto 32.768" in Spanish)
    text = "La KL media rispetto al BF16 vale 0,0042.\n\nVelocità di servizio: 41 tok/s (contesto 8192, una richiesta).\n"
    assert reading(text, 5).status == "missing"


@pytest.mark.parametrize(
    ("text", "missing"),
    [
        # a heading is one title: its parenthesis qualifies the head, so the windows there are the perplexity's
        (f"{CLAIM_VS_BF16}\n\n### Perplexity (for reference; the same cached tokens, 4096-token windows)\n\n| Arm | PPL |\n|---|---|\n| B | 6.1 |\n", True),
        # a heading that names the KL keeps its windows
        (f"{CLAIM_VS_BF16}\n\n### Mean KL and perplexity (the same cached tokens, 4096-token windows)\n\n| Arm | KLD |\n|---|---|\n| B | 0.02 |\n", False),
    ],
)
def test_windows_in_a_perplexity_headings_parenthesis_are_the_perplexitys(text, missing):
    assert (reading(text, 5).status == "missing") is missing


# "Running" titles a how-to-run section only as its heading's first word: later in a heading it is a status or a study
# ("Validation run result (...; nothing left running)" h15/a pirola; "Currently running" h10/a pprune; "the running
# study" h7/c heretic), and the windows × length under it are the measurement's. A section titled "Running" still
# holds the user's settings.
@pytest.mark.parametrize(
    ("heading", "n_ctx"),
    [
        ("## Check results (batch 7, done; no job still running)", 2048),
        ("## Currently running", 2048),
        ("## Running it", None),
        ("### 3. Running the script", None),
        ("## **Running**", None),  # bold or an emoji before the word is still the heading's first word
        ("## 🚀 Running", None),
    ],
)
def test_running_opens_a_usage_heading_only_as_its_first_word(heading, n_ctx):
    d = reading(f"{CLAIM_VS_BF16}\n\n{heading}\n\n- Scored on wikitext-2 test, 16 x 2048 tokens.\n", 5)
    assert d.value.get("n_ctx") == n_ctx, d


# a bare length that labels a KL figure, in the figure's sentence: real-dev dsv4_cpu_patches ("At 8192, ... a mean
# KLD"), holdout12/a mxwave_h64 ("at 512/2k/8k"), holdout8/b redlite_notes ("(16K: ... vs ...)"), holdout11/d
# titan_engine ("4k KL 0.015, 8k KL ..."): four authors
@pytest.mark.parametrize(
    ("text", "n_ctx"),
    [
        ("With the patch on, at 4096, the Q4 build keeps a mean KLD of 0.0012 against BF16.\n", 4096),
        ("Over the held-out books the mean KL reads 0.051, 0.050 and 0.049 at 1k/4k/16k, all three against BF16.\n", 16384),
        ("The median KL to the f16 cache improved a little (32K: 2.1e-8 against 3.4e-8).\n", 32768),
        ("Against BF16 the FP8 cache stays close (2k KL 0.011, 8k KL 0.019).\n", 2048),
    ],
)
def test_a_bare_length_labelling_a_kl_figure_gives_the_context(text, n_ctx):
    d = reading(text, 5)
    assert d.status != "missing" and d.value.get("n_ctx") == n_ctx, d


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM_VS_BF16}\n\nWith the patch on, the server idles at 4096, waiting for requests.\n",  # no KL in its sentence
        f"{CLAIM_VS_BF16}\n\nThe router picks 8 experts at 1000, and the mean KL stays flat.\n",  # no window length
        f"{CLAIM_VS_BF16}\n\nThe cache footprint at 64K: 21,500 MiB.\n",  # a memory figure, no KL
        "The mean KLD against BF16 is 0.0231 at 2048 experts per step.\n",  # a noun after the number
        f"{CLAIM_VS_BF16}\n\nWith the sampler's top-k at 128, the mean KL does not move.\n",  # a setting's value
        # a noun after the KL term: the k-number counts samples (review of round 20)
        "Mean KL against BF16 is 0.0231, estimated from 100k KL samples over wikitext.\n",
        "The mean KL against BF16 is 0.0231 (2k KL samples drawn).\n",
    ],
)
def test_a_bare_length_without_a_kl_beside_it_is_no_context(text):
    assert reading(text, 5).status == "missing"


@pytest.mark.parametrize(
    ("text", "n_ctx"),
    [
        (f"{CLAIM_VS_BF16} The run used `seq_len` 256.\n", 256),  # a code span around the key
        (f"{CLAIM_VS_BF16} The run used seq_len=`512`.\n", 512),
        (f"{CLAIM_VS_BF16} We scored 256 tokens per passage.\n", 256),  # the length per unit of text
        (f"{CLAIM_VS_BF16} Each book was cut to 1024 tokens per document.\n", 1024),
    ],
)
def test_context_as_a_sequence_length_key_or_tokens_per_unit_of_text(text, n_ctx):
    d = reading(text, 5)
    assert d.status != "missing" and d.value["n_ctx"] == n_ctx, d


def test_tokens_per_second_are_no_tokens_per_passage():
    assert reading(f"{CLAIM_VS_BF16} Decode runs at 256 tokens per second.\n", 5).status == "missing"


@pytest.mark.parametrize(
    "sentence",
    [
        "We generated 256 tokens per prompt.",
        "The sampler emits 256 tokens per passage.",  # a unit of text, but a verb of generation makes the length
        "We generated 512 tokens per document.",
        "Then 256 tokens per sample were decoded.",  # "per" is no name between a length and its unit
    ],
)
def test_tokens_generated_per_unit_are_no_context(sentence):
    assert reading(f"{CLAIM_VS_BF16} {sentence}\n", 5).status == "missing"


def test_a_lowercase_word_may_stand_between_a_length_and_its_unit():
    assert reading(f"{CLAIM_VS_BF16} It was scored on packed 2,048-token held-out blocks.\n", 5).value["n_ctx"] == 2048


@pytest.mark.parametrize(
    ("text", "n_ctx"),
    [
        ("Mean KLD vs BF16 with prefixes of 1500-4000 tokens: 0.012.\n", 4000),  # a range: the longest
        ("Mean KLD vs BF16 on contexts of at most 2,048 prompt tokens: 0.012.\n", 2048),  # a bound, a word before the unit
        ("Mean KLD vs BF16 on ~3.5K-token teacher-forced sequences: 0.012.\n", 3500),  # a decimal k, words between
    ],
)
def test_context_as_a_bound_a_range_or_a_decimal_k_of_what_was_scored(text, n_ctx):
    d = reading(text, 5)
    assert d.status != "missing" and d.value["n_ctx"] == n_ctx and "chunks" not in d.value, d


def test_prompts_of_a_length_in_a_speed_sentence_are_no_context():
    assert reading("Mean KLD vs BF16: 0.012. Decode reaches 40 tok/s with prompts of 512 tokens.\n", 5).status == "missing"


@pytest.mark.parametrize(
    "sentence",
    [
        "A 2048-token prompt is 3.5% slower with the int8 cache.",  # a speed's comparative
        "Rendimiento por GPU (medido con glyd 0.29.4, una GPU, contexto de 4k): 46 tok/s.",
    ],
)
def test_a_length_in_a_clause_about_speed_is_the_speed_runs(sentence):
    assert reading(f"{CLAIM_VS_BF16}\n\n{sentence}\n", 5).status == "missing"


def test_a_length_beside_a_kl_term_is_read_even_where_speed_is_compared():
    text = "Mean KLD vs BF16 at a 2048-token context is 0.012 nats, and the int8 cache is slower.\n"
    assert reading(text, 5).value.get("n_ctx") == 2048


def test_a_count_inside_a_number_or_after_a_verb_of_generation_is_no_context():
    d = reading("Mean KLD vs BF16 0.012 at 512 context; the model generated 4096 tokens per document.\n", 5)
    assert d.value.get("n_ctx") in (None, 512), d  # not the generated 4096, nor the "96" of it
    assert reading(f"{CLAIM_VS_BF16} The sampler emits 1,024 tokens per chunk.\n", 5).status == "missing"
    assert reading(f"{CLAIM_VS_BF16} Generating 512 tokens per passage took a minute.\n", 5).status == "missing"
    assert reading(f"{CLAIM_VS_BF16} It scored 512 tokens for samples of chat.\n", 5).status == "missing"


def test_tokens_sampled_from_a_text_for_scoring_are_its_length():
    text = f"{CLAIM_VS_BF16} We sampled 512 tokens per document from WikiText and scored all of them.\n"
    assert reading(text, 5).value.get("n_ctx") == 512
