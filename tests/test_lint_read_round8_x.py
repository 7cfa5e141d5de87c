"""Readings added in issue 28's eighth tuning round (tune-x), for documents about engines and the D1, D2, D8 and D9
readings: the statistic of Chinese and Japanese written with no word boundary, in parentheses after a KL label, as a
bare header cell after a KL column or after a value; an engine's major release series; the quantizer's clause in the
Romance languages and an engine's quantization mode; the whole vocabulary as "all vocabulary logits" and
"full-logit KL"; the KL's preposition hyphenated ("KLD-to-f16"). Each form sits next to a text it must not read."""

from __future__ import annotations

import pytest
from helpers_reading import reading


# ---- D9 ---------------------------------------------------------------------------------------------------------
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


# ---- D2 ---------------------------------------------------------------------------------------------------------
def test_an_engine_with_a_major_release_series():
    text = "The reload fails with max KL `3.4e-02` against the saved logits.\n\nThe recipe pins `eager`; transformers 5.x resolves to `sdpa`.\n"
    d = reading(text, 2)
    assert d.status == "incomplete" and d.value["engine"] == "transformers", d


def test_an_engine_with_an_x_inside_a_word_is_no_release_series():
    text = "The reload fails with max KL `3.4e-02` against the saved logits.\n\nSee transformers 5.xlsx for the sheet.\n"
    assert reading(text, 2).status == "missing"


def test_the_romance_quantize_with_clause_names_the_quantizer_not_the_measurement():
    text = ("El usuario los comprimió a 6 bits con precisión mixta mediante la herramienta oQ (oMLX v0.7.0).\n\n"
            "La divergencia KL directa es 0,0017.\n")
    assert reading(text, 2).status == "missing"


def test_an_engine_with_its_version_in_a_spanish_measurement_is_read():
    text = "Medimos la divergencia KL con oMLX v0.7.0 en un Mac Studio: 0,0017.\n"
    assert reading(text, 2).status != "missing"


def test_an_engines_quantization_mode_is_a_format_not_a_run():
    text = ("At the same bitrate the new codecs halve the divergence (as measured by KLD).\n"
            "| Model | Budget | MLX affine | new | cut |\n|---|---|---|---|---|\n| Qwen3-8B | 4-bit | 0.0577 | 0.0208 | 2.8x |\n")
    assert reading(text, 2).status == "missing"


def test_an_engine_named_as_the_measurements_runtime_still_counts():
    text = "We measured the KLD with MLX on the same prompts: 0.0577 for the 4-bit affine quant.\n"
    assert reading(text, 2).status != "missing"


# ---- D8 ---------------------------------------------------------------------------------------------------------
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


# ---- D1 ---------------------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "ref"), [("The requantized projections reach a KLD of 0.164, the lowest KLD-to-f16 so far.\n", "f16"),
                                           ("The 2-bit build reaches a KLD of 0.091; its KL-to-teacher gap is the smallest.\n", "teacher")])
def test_the_kls_preposition_hyphenated(text, ref):
    d = reading(text, 1)
    assert d.status != "missing" and ref in str(d.evidence[0].text), d


def test_a_hyphenated_placeholder_role_names_no_reference():
    assert reading("The 2-bit build reaches a KLD of 0.091; the KLD-vs-ref column ranks it first.\n", 1).status == "missing"


def test_a_head_to_head_names_a_rival_not_the_reference():
    text = ("The writeup covers the head-to-head against `other/master` (KLD and decode at 4.1 bpw), where the asymmetric K/V "
            "cache cuts KLD by 26%.\n")
    assert reading(text, 1).status == "missing"


def test_against_a_named_reference_is_still_read():
    text = "The asymmetric K/V cache gives a KLD of 0.012 against the BF16 cache of the same model.\n"
    assert reading(text, 1).status != "missing"


def test_a_copula_that_judges_the_reference_names_none():
    text = "The port drifted (the Python reference was already right); the fixed port reaches a KLD of 0.012.\n"
    assert reading(text, 1).status == "missing"


def test_a_copula_that_names_the_reference_is_read():
    text = "The reference was the unquantized BF16 checkpoint; the fixed port reaches a KLD of 0.012.\n"
    assert reading(text, 1).status != "missing"


def test_the_kls_support_over_a_models_top_k_beside_an_agreement():
    text = "| layer | top-1 agreement · KL over the original's top-64 |\n|---|---|\n| 12 | 97.1% · 0.0123 |\n"
    d = reading(text, 8)
    assert d.status == "stated" and d.value == {"scheme": "top-k", "k": 64}, d


def test_a_top_k_agreement_is_no_vocabulary():
    assert reading("The 4-bit build reaches a KLD of 0.0123 with a top-5 agreement of 93%.\n", 8).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        "Same checkpoint, measured against the saved reference logits:\n\n| load | max KL vs reference |\n|---|---|\n| default | 3.49e-02 |\n",
        "The reload reaches a max KL of 0.034, checked against a `2e-2` bar.\n",  # a number in a code span is no model
    ],
)
def test_a_reference_by_role_only_names_none(text):
    assert reading(text, 1).status == "missing"


@pytest.mark.parametrize(
    "text",
    [
        "The reload reaches a max KL of 3.49e-02 against a non-NCCL reference.\n",  # a modifier that names the reference
        "The reload reaches a max KL of 3.49e-02 against the BF16 reference logits.\n",
    ],
)
def test_a_reference_with_what_names_it_is_read(text):
    assert reading(text, 1).status != "missing"
