"""Counts and settings as cards write them in records, tables and number grammar (kldcard.lint.read.record_fields and
the tuning round 6 readings of D3, D5, D6 and D8), read from short texts in the project's own words."""

from __future__ import annotations

import pytest
from helpers_reading import reading as first_reading

CLAIM = "The Q4_K_M file reaches a KLD of 0.0231.\n\n"


def reading(text: str, n: int, claim: str = CLAIM):
    return first_reading(claim + text, n)


# ---- record fields (JSON, YAML, key=value) ------------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "n", "value"),
    [
        ('{"mean_kld": 0.0231, "n_ctx": 4096, "seed": 3}\n', 5, {"n_ctx": 4096}),
        ("kl_eval:\n  seq_len: 2048\n  mean_kl: 0.0231\n", 5, {"n_ctx": 2048}),
        ('{"mean_kld": 0.0231, "prediction_positions": 2047}\n', 6, {"count": 2047}),
        ('{"kld_mean": 0.0231, "total_kld_tokens": 4335, "ppl": 4.7}\n', 6, {"count": 4335}),
        ("KLD run settings: chunks: 80, positions: all\n", 6, {"scheme": "all"}),
        ('{"kld_direction": "ref_to_quant", "vocab_size": 154880}\n', 8, {"scheme": "full"}),
        ("kl_divergence settings: top_k: 100\n", 8, {"scheme": "top-k", "k": 100}),
        ("KL from the server with logprobs=20 per position.\n", 8, {"scheme": "top-k", "k": 20}),
    ],
)
def test_record_fields_are_read(text, n, value):
    d = reading(text, n)
    assert d.status != "missing" and all(d.value.get(k) == v for k, v in value.items()), d


@pytest.mark.parametrize(
    ("text", "n"),
    [
        ('Model config:\n\n{"hidden_size": 4096, "num_hidden_layers": 36, "vocab_size": 151936}\n', 8),  # architecture
        ('Sampler:\n\n{"temperature": 0.7, "top_p": 0.9, "top_k": 40}\n', 8),  # a sampler, no KL in its record
        ('Usage:\n\n{"prompt_tokens": 812, "completion_tokens": 96}\n', 6),  # a usage counter
        ('Serving:\n\n{"max_model_len": 32768, "n_ctx_train": 262144}\n', 5),  # the model's, not a window
    ],
)
def test_record_fields_of_other_things_are_not_read(text, n):
    assert reading(text, n).status == "missing"


def test_a_dataset_viewer_header_gives_a_position_column():
    text = ("quant string | mean_kld float64 | p99_kld float64 | positions int64 |\n|---|---|---|---|\n"
            "Q4_K_M | 0.0231 | 0.31 | 65,536 |\n")
    assert first_reading(text, 6).status != "missing"


# ---- D5 / D8 in number grammar ------------------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "The KLD is scored after the same 512-token WikiText prefix on each arm.\n",
        "Measured on five kinds of text of 3,500 tokens each.\n",
    ],
)
def test_window_lengths_in_other_words_are_read(text):
    assert reading(text, 5).status != "missing"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("KL in nats over Q8_0's top 256 plus one bucket for the rest.\n", {"scheme": "top-k", "k": 256}),
        ("- Same teacher top-8,192 token support\n", {"scheme": "top-k", "k": 8192}),  # a thousands separator in k
        ("  • top-1 agreement: 91.2%\n  • approximate (server top-N): no\n", {"scheme": "top-k"}),
    ],
)
def test_top_k_supports_written_with_an_owner_or_a_server_are_read(text, value):
    d = reading(text, 8)
    assert d.status != "missing" and d.value == value, d


# ---- D6: predictions are scored positions (three authors: "4,080 WikiText next-token predictions", "15520 independent
# predictions", "19 456 scored predictions") ------------------------------------------------------------
def test_a_count_of_predictions_is_a_count_of_positions():
    d = reading("Mean KL over 4,080 next-token predictions of the held-out text.\n", 6)
    assert d.status != "missing" and d.value.get("count") == 4080, d


def test_a_word_between_scored_and_tokens():
    d = reading("Each arm has 336 tokens of past and 64 scored continuation tokens.\n", 6)
    assert d.status != "missing" and d.value.get("count") == 64, d


def test_predictions_outside_a_measurement_are_no_positions():
    assert reading("The forecast made 300 weather predictions.\n", 6).status == "missing"


# ---- D3: a count is whole; a perplexity's text ---------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "Its answers match Model 4.1 8B en prompts benignos, per the KL.\n",  # a version and a size, not 4.1 prompts
        "Perplexity over 32 × 4096 tokens of wikitext rose by 0.2 against the base.\n",  # the perplexity's text
        "| Method | KL vs FP16 | WikiText2 subset PPL |\n|---|---|---|\n| NF4 | 0.0231 | 7.9 |\n",
        "Settings of the table:\n\n- PPL source: WikiText2 subset\n",  # a record's label for the perplexity's text
    ],
)
def test_texts_that_are_not_the_kl_text_are_not_read(text):
    assert reading(text, 3).status == "missing"


def test_a_prompt_count_with_thousands_is_still_a_described_text():
    assert reading("The KLD was measured on 1,000 prompts.\n", 3).status == "incomplete"


@pytest.mark.parametrize("key", ["max_new_tokens", "max_tokens", "token_budget", "new_tokens"])
def test_a_generation_budget_beside_a_kl_is_no_count_of_positions(key):
    text = f'Mean KLD vs BF16 was 0.012 nats.\n\n{{"mean_kl": 0.012, "{key}": 4096}}\n'
    assert reading(text, 6).status == "missing"
    assert reading(text.replace(key, "n_tokens"), 6).status != "missing"  # the scored count beside it still reads


@pytest.mark.parametrize("key", ["news_tokens", "wiki_tokens"])
def test_a_budget_word_inside_another_key_part_does_not_veto_it(key):
    assert reading(f'Mean KLD vs BF16 was 0.012 nats.\n\n{{"mean_kl": 0.012, "{key}": 20480}}\n', 6).status != "missing"
