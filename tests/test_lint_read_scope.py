"""Narrowed recognisers (round 4): a D1, D5, D6 or D8 statement counts only where it is bound to the KL
measurement. A weight layout's product is no window (kldcard.lint.read.tensor_shapes); a reference word in a
table without a KL term, or after another metric's figure, is not the KL's (kldcard.lint.read.reference_scope);
a list of a model's top tokens is no vocabulary (kldcard.lint.read.vocabulary)."""

from __future__ import annotations

import re

import pytest
from helpers_reading import reading

from kldcard.lint.read import reference_forms, reference_scope, tensor_shapes

CLAIM = "The Q4_K_M file reaches a KLD of 0.0231.\n\n"


# ---- D5/D6: a weight layout's product -----------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "Weights use FP8 block scales of 128x128 with dynamic activations.\n",
        "La cuantizacion usa bloques de pesos de 128x128 en E4M3.\n",
        "The kernel works on 64×256 tiles of the matrix.\n",
    ],
)
def test_a_weight_layouts_product_is_no_window(text):
    assert reading(CLAIM + text, 5).status == "missing"
    assert reading(CLAIM + text, 6).status == "missing"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("The KLD ran over 20 x 2048 tokens of held-out text.\n", {"n_ctx": 2048, "chunks": 20}),
        ("Scored on openwebtext 8x2048.\n", {"n_ctx": 2048, "chunks": 8}),
    ],
)
def test_windows_by_length_stay_read(text, value):
    d = reading(CLAIM + text, 5)
    assert d.status == "stated" and d.value == value, d


def test_a_product_followed_by_windows_is_not_a_shape():
    text = "the weights were scored on 20x2048 tokens"
    m = re.search(r"20x2048", text)
    assert m is not None and not tensor_shapes.is_shape(text, m)


# ---- D1: the reference of another metric ----------------------------------------------------------------
@pytest.mark.parametrize(
    "text",
    [
        # a pipe-less table of refusal counts: its "original model" column is no KL reference
        "```text\n                原始模型       第二阶段\nrefusals          86/100        11/100\n```\n",
        "| Benchmark | original model | edited |\n|---|---|---|\n| MMLU | 61.0 | 60.2 |\n",
        # the comparison belongs to the perplexity figure right before it
        "The other kernel lands at PPL 14.28 (+5.3% vs FP32), with similar KLD.\n",
    ],
)
def test_another_metrics_baseline_is_not_the_kl_reference(text):
    assert reading(CLAIM + text, 1).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        "| Quant | KLD vs original model |\n|---|---|\n| Q4 | 0.02 |\n",
        "| Context | KLD_95 | change |\n|---|---|---|\n| 4096 | 0.12 | (Baseline) |\n",
    ],
)
def test_a_reference_in_a_kl_table_is_kept(text):
    m = re.search(r"original model|\(Baseline\)", text)
    assert m is not None and not reference_scope.table_without_kl(text, m)


def test_a_kl_comparison_is_not_another_metrics():
    text = "KLD 0.02 vs FP32 on the panel"
    m = re.search("vs", text)
    assert m is not None and not reference_scope.after_other_figure(text, m)


# ---- D8: a model's top tokens -----------------------------------------------------------------------------
def test_a_list_of_top_tokens_is_no_vocabulary_statement():
    assert reading(CLAIM + "--- model top 10 tokens ---\n", 8).status == "missing"


@pytest.mark.parametrize("text", ["The divergence is summed over the top 100 tokens.\n", "KL restricted to the top 20 tokens.\n"])
def test_a_top_k_bound_to_the_kl_stays_read(text):
    d = reading(CLAIM + text, 8)
    assert d.status == "stated" and d.value["scheme"] == "top-k", d


# ---- D6: counts bound to the KL by their structure (kldcard.lint.read.position_forms) ----------------------
@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("The run measured KLD@n=128 on the small card.\n", 128),
        ("- **first batch** (kv-q8, n=512): plain vs tuned, a 20% lower KLD.\n", 512),
    ],
)
def test_a_sample_count_beside_the_kl_is_read(text, count):
    d = reading(CLAIM + text, 6)
    assert d.status != "missing" and d.value.get("count") == count, d


def test_a_count_column_beside_a_kl_column_is_read():
    text = "| tokens | mean KLD | max KLD |\n|---|---|---|\n| 511 | 0.04 | 0.9 |\n"
    assert reading(CLAIM + text, 6).status != "missing"


@pytest.mark.parametrize(
    "text",
    [
        "Training used n=64 prompts per step for the adapter.\n",  # no KL term in the sentence
        "Accuracy averaged over n=3 seeds.\n",
        "| tokens | speed (t/s) |\n|---|---|\n| 512 | 40 |\n",  # a count column without a KL column
    ],
)
def test_counts_not_bound_to_the_kl_are_not_read(text):
    assert reading(CLAIM + text, 6).status == "missing"


# ---- D1: written forms of the reference (kldcard.lint.read.reference_forms) -------------------------------
@pytest.mark.parametrize(
    "text",
    [
        "Mean divergence per token (D_KL(P_golden || Q_port)): 0.0031.\n",
        "We report KL(p_bf16 ‖ p_q) for each quant.\n",
        "Die Werte stammen aus llama-perplexity. Referenz ist die unquantisierte Fassung des Modells.\n\n| KLD | 0.01 |\n",
        "The KL reference is the unquantized BF16 export of the model.\n",
        "This is an abliterated version of [some-org/Base-7B](https://example.org/some-org/Base-7B); KL divergence 0.09.\n",
    ],
)
def test_written_forms_of_the_reference_are_found(text):
    d = reading(CLAIM + text, 1)
    assert d.status != "missing" and d.evidence, d


@pytest.mark.parametrize(
    "text",
    [
        "The reference implementation is in C.\n\nIt compiles on every platform.\n",
    ],
)
def test_copulas_without_a_kl_are_not_the_reference(text):
    assert reading("The Q4_K_M file is small.\n\n" + text + "\n\nLater: KLD 0.02 for Q4.\n", 1).status == "missing"


def test_a_placeholder_in_the_formula_names_no_reference():
    assert reference_forms.FORMULA.search("KL(P_ref ‖ P_q4km) per token") is None


def test_a_copula_about_speed_is_vetoed():
    text = "The baseline is 40 tok/s on the old kernel."
    m = reference_forms.COPULA.search(text)
    assert m is not None and reference_forms.vetoed(text, m)


# ---- D8: the card languages, a support after its noun, a shared vocabulary (read.vocabulary_forms) ---------
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("Se midio la KLD completa de vocabulario con logits BF16.\n", {"scheme": "full"}),
        ("Cada ventana cubre 151.936 de vocabulario.\n", {"scheme": "full"}),
        ("La mitad de la masa viene del soporte top-256.\n", {"scheme": "top-k", "k": 256}),
        ("Logits are cut to the intersection of the two vocabularies before the KL.\n", {"scheme": "full"}),
        ("先取两个模型词表的交集再计算 KL。\n", {"scheme": "full"}),
    ],
)
def test_vocabulary_forms_are_read(text, value):
    d = reading(CLAIM + text, 8)
    assert d.status == "stated" and d.value == value, d


def test_a_vocabulary_count_without_the_word_is_not_read():
    assert reading(CLAIM + "El modelo tiene 151.936 parametros de salida.\n", 8).status == "missing"


# ---- D5: windows counted, then their length (read.context_written) -----------------------------------------
def test_windows_counted_then_their_length_are_read():
    d = reading(CLAIM + "The KL runs over 40 windows of held-out prose at 2048 tokens.\n", 5)
    assert d.status == "stated" and d.value == {"n_ctx": 2048, "chunks": 40}, d
