"""Readings added in issue 28's eighth tuning round (tune-y): windows × length with a spaced "x", windows of a
length with what they are cut from between and the length per window in the card languages, a prefill's length
(D5); a window's length as a compound is no count of windows (D6); the purpose then the verb of use for a
calibration (D4). Each form has a look-alike next to it that must not be read."""

from __future__ import annotations

import pytest
from helpers_reading import reading

CLAIM = "Q4_K_M reaches a KLD of 0.0231"


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
        "KLD media 0,0231 frente a BF16. Para calibrar se usaron 200 conversaciones de chat y codigo.\n",
        "KLD media 0,0231 frente a BF16. Para calibrar se uso el corpus fijo del cuantizador: 250 filas de 2.048 tokens.\n",
        f"{CLAIM} vs BF16. For calibration, the quants used 512 rows of mixed chat data.\n",
    ],
)
def test_calibration_given_by_its_purpose_then_use(text):
    assert reading(text, 4).status != "missing"


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM} vs BF16, measured on held-out text not used for calibration.\n",  # the use comes first: a negation
        "KLD media 0,0231 frente a BF16. Para calibrar la velocidad se midio el prefill.\n",  # no verb of use
    ],
)
def test_calibration_purpose_lookalikes_are_not_read(text):
    assert reading(text, 4).status == "missing"


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
        f"{CLAIM} vs HF. Measured: free-running greedy agrees on 2 of 4 prompts.\n",
        f"{CLAIM} vs BF16, and the quant is closer than the baseline on 3 out of 8 texts.\n",
    ],
)
def test_a_result_counted_over_part_of_the_texts_names_no_text(text):
    assert reading(text, 3).status == "missing"


def test_a_plain_count_of_prompts_still_describes_the_text():
    assert reading(f"{CLAIM} vs BF16, measured on 140 chat prompts.\n", 3).status != "missing"
