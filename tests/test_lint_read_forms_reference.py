"""D1 as cards write them beyond the main patterns (kldcard.lint.read.reference): the reference after a hyphenated
or speed-word preposition, in a "Teacher:" or "Base model:" field, "agreed with X", the KL of P to Q. Each form in the
project's own words, next to a look-alike that must not be read: a rival with its own figure, a baseline's own
values, a role without a name, a copula that judges the reference."""

from __future__ import annotations

import pytest
from helpers_reading import reading


# ---- D1: the reference -------------------------------------------------------------------------------------------
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


@pytest.mark.parametrize(
    "text",
    [
        # a bare reference (CONVENTIONS round 21, item 3: stays M)
        "Same checkpoint, measured against the same reference.\n\n| load | max KL vs reference |\n|---|---|\n| default | 3.49e-02 |\n",
        "The reload reaches a max KL of 0.034, checked against a `2e-2` bar.\n",  # a number in a code span is no model
    ],
)
def test_a_reference_by_role_only_names_none(text):
    assert reading(text, 1).status == "missing"


# ... but the reference the run kept is a role tied to the KL (round 21, item 3: D1 S with 1): holdout9/b automodel_pr3500
# ("against the saved reference logits") and holdout12/b exl3_bf16_io ("relative to the stored reference"), two authors
@pytest.mark.parametrize(
    "text",
    [
        "Same checkpoint, measured against the saved reference logits:\n\n| load | max KL vs reference |\n|---|---|\n| default | 3.49e-02 |\n",
        "The fused path reaches a mean KL of 2e-5 relative to the cached reference outputs.\n",
    ],
)
def test_a_kept_reference_is_a_role_tied_to_the_kl(text):
    assert reading(text, 1).status == "incomplete", reading(text, 1)


@pytest.mark.parametrize(
    "text",
    [
        "The reload reaches a max KL of 3.49e-02 against a non-NCCL reference.\n",  # a modifier that names the reference
        "The reload reaches a max KL of 3.49e-02 against the BF16 reference logits.\n",
    ],
)
def test_a_reference_with_what_names_it_is_read(text):
    assert reading(text, 1).status != "missing"


@pytest.mark.parametrize(("text", "found"), [
    # rule 15c.2: a "Base model:" field is the parent, the reference only beside words that say the KL is against it
    ("Base model: Qwen/Qwen3-4B\n\nResult: 9/10 refusals removed, KL divergence: 0.0388\n", False),
    ("Base model: Qwen/Qwen3-4B\n\nResult: KL divergence from the original model: 0.0388\n", True),
    ("base: f16\n\n| quant | KLD (mean) |\n|---|---|\n| Q4_K_M | 0.0301 |\n", True),  # llama-perplexity's "base" is the reference
    # "KL of P to Q": Q is the reference (the preposition of a divergence); a range "of 2 to 6" is no model
    ("Night 7 gives a KL of 0.0121 (kl_S, the KL of the S adapter to base).\n", True),
    ("The edits cost a KL of 2 to 6 thousandths: 0.004 on the last run.\n", False),
])
def test_a_base_model_field_and_the_kl_of_p_to_q(text, found):
    assert (reading(text, 1).status != "missing") is found


@pytest.mark.parametrize(("text", "base_read"), [
    # rule 15c.2: beside another reference ("vs Q8_0") the base model is the parent, not the KL's reference; beside
    # "the original" (or "base", "BF16", ...) it names that reference
    ("Base model: Qwen/Qwen3-4B\n\nThe quant's mean KL divergence vs Q8_0 is 0.0388.\n", False),
    ("Base model: Qwen/Qwen3-4B\n\nThe quant's mean KL divergence vs the original is 0.0388.\n", True),
])
def test_a_base_model_field_beside_another_reference_is_not_the_reference(text, base_read):
    d1 = reading(text, 1)
    assert d1.status == "incomplete"
    assert any(e.text.startswith("Base model:") for e in d1.evidence) is base_read
    assert ("repo" in d1.value) is base_read


def test_a_teacher_field_names_the_reference():
    text = "Setup:\n\n- Teacher: the frozen 1.5B checkpoint\n- Student: its 4-bit copy\n\nHeld-out KL after 300 steps: 0.0142.\n"
    assert reading(text, 1).status != "missing"


def test_a_teacher_word_without_a_field_is_not_read():
    text = "Setup:\n\n- Teacher forcing on every step\n- Student: its 4-bit copy\n\nHeld-out KL after 300 steps: 0.0142.\n"
    assert reading(text, 1).status == "missing"


def test_agreed_with_names_the_reference():
    text = "All eight greedy tokens agreed with native BF16, and the mean KL was 0.0091.\n"
    assert reading(text, 1).status != "missing"


def test_agreed_alone_names_nothing():
    text = "All eight greedy tokens agreed, and the mean KL was 0.0091.\n"
    assert reading(text, 1).status == "missing"


def test_a_baseline_field_holding_its_own_values_names_no_reference():
    text = "- Q5_K baseline: KL=0.0712, top-P=86.10%, size=512.3 MB\n- Q5_K tuned: KL=0.0655, top-P=87.02%\n"
    assert reading(text, 1).status == "missing"


def test_a_baseline_field_naming_a_model_still_counts():
    text = "- Baseline: Q8_0 of the same model\n- Q5_K tuned: KL=0.0655, top-P=87.02%\n"
    assert reading(text, 1).status != "missing"


def test_a_rival_with_its_own_figure_after_a_measured_one_is_no_reference():
    text = "The trial build reads KLD 0.0171 / top-1 95.2%, compared vs INT8 0.0249 on the same window.\n"
    assert reading(text, 1).status == "missing"


def test_a_reference_followed_by_its_value_still_counts():
    text = "bf16 : weights 3.8 GB | KL vs HF bf16 0.0004 | decode 19 tok/s\n"
    assert reading(text, 1).status != "missing"


def test_the_kl_from_a_reference_after_a_speed_figure():
    text = "- Int8 matmuls (stage 4): one step ran 1.4x faster, and the KL from bf16 was 0.0051 nats.\n"
    assert reading(text, 1).status != "missing"


def test_a_speed_comparison_names_no_reference():
    text = "- Int8 matmuls (stage 4): one step ran 1.4x faster than bf16, and the KL was 0.0051 nats.\n"
    assert reading(text, 1).status == "missing"


# ---- D1: a figure run into the compared name ("KLD vs baseline 0.000000": general grammar of a label and its value)
def test_a_figure_run_into_the_compared_name_is_the_kls_value():
    text = "The patched build still runs; its KLD vs stock build 0.000012, top-1 agreement 100 %.\n"
    assert reading(text, 1).status != "missing"


def test_a_figure_run_into_a_compared_metric_is_still_no_reference():
    text = "The patched build still runs; its KLD vs last run 0.000012 is lower.\n"
    assert reading(text, 1).status == "missing"


# ---- D1: a git base (the commit a branch starts from) is no reference (holdout bonsai2, holdout15 b12x_pr342)
def test_a_git_base_commit_names_no_reference():
    text = "Fork base: `30da59942c012a965c06f501313a35afbbc46ba5`; the port reaches a mean KLD of 0.012.\n"
    assert reading(text, 1).status == "missing"


def test_a_base_field_naming_a_dtype_is_still_read():
    text = "Base: f16; the port reaches a mean KLD of 0.012.\n"
    assert reading(text, 1).status != "missing"


# ---- D1: the copula inverted, a short name first (dev2 pxa_pxq, dev2 nvfp4_activation, holdout8 qwen38_35b, holdout15 gptoss_20b)
def test_a_short_name_that_is_the_reference_is_read():
    text = "Paired logits over 24 prompts (run A is the baseline; B is reference): C reaches a mean KL of 0.012.\n"
    d = reading(text, 1)
    assert d.status != "missing" and "B is reference" in str(d.evidence[0].text), d


def test_a_pronoun_or_a_document_that_is_the_reference_names_none():
    text = "The quant reaches a mean KL of 0.012. This document is the reference on caches; it is the baseline for later work.\n"
    assert reading(text, 1).status == "missing"


# review of round 18: the inverted copula names the reference of the KL, not of something else
@pytest.mark.parametrize(
    "text",
    [
        "Mean KL: 0.0123.\n\nNote: PyTorch is the reference implementation of the KL kernel.\n",
        "Mean KL: 0.0123.\n\nNote: vLLM is the baseline for the KL speed table.\n",
    ],
)
def test_a_reference_of_another_thing_is_not_the_kls_reference(text):
    assert reading(text, 1).status == "missing"


# ---- D1: a KL term in the plural is still a KL term ("these KLDs are ... taken against X": holdout16/b crow_issue28;
# the plural also in holdout4/a loom_tiered, holdout6/b qwen35_2b_phone, holdout12/b tree_bitnet)
def test_a_plural_kl_term_carries_its_comparison():
    text = "| Quant | mean KLD |\n|---|---:|\n| Q2_K | 0.41 |\n\nThe KLDs above were taken against the vendor's Q8_0 file.\n"
    d = reading(text, 1)
    assert d.status != "missing" and "Q8_0" in str(d.evidence[0].text), d


def test_another_metrics_plural_carries_no_reference():
    text = "| Quant | mean KLD |\n|---|---:|\n| Q2_K | 0.41 |\n\nThe PPLs above were taken against the vendor's Q8_0 file.\n"
    assert reading(text, 1).status == "missing"


# holdout12/d experiment_016 ("source-logit KL climbed past 8.0") and holdout13/d gemma_signed ("source-to-candidate
# KL per token"): the reference's role first in the compound before the KL term names it (a role only: incomplete)
@pytest.mark.parametrize(("text", "found"), [
    ("After the swap the source-logit KL rose to 0.412 on the held-out set.\n", True),
    ("| Measure | Value |\n|---|---|\n| Mean teacher-to-draft KL per token | 0.0371 |\n", True),
    # the roles are read.terms.REF_ROLE, as the direction's "teacher → student" reads them
    ("The baseline-to-int4 KL comes to 0.0371 per token.\n", True),
    # look-alikes: a compound with no role ("end-to-end KL"), a role joined to another noun ("source-code KL notes")
    ("The end-to-end KL rose to 0.412 on the held-out set.\n", False),
    ("Our source-code KL estimator reads 0.412 on the held-out set.\n", False),
])
def test_a_role_first_in_a_kl_compound_names_the_reference(text, found):
    assert (reading(text, 1).status != "missing") is found
    if found:
        from kldcard.lint.read import comparison

        assert comparison.ROLE_COMPOUND.search(text) is not None


# the real holdout's holdout_gfx1201_bf16_gdn_kld ("the gap that remains between the bf16 kernels of RDNA4 and
# RDNA3/RDNA3.5") and holdout9/b megatron_pr7562 ("stood between a hybrid MoE model and a zero train/generation gap"):
# "between X and Y" in a sentence that names no KL sets two things side by side, not a KL and its reference
@pytest.mark.parametrize(("text", "found"), [
    ("The port narrows the gap between the fused kernels of Navi and Navi2/Navi3 while keeping its speed. "
     "Mean KLD after the port: 0.0031.\n", False),
    ("Two rounding steps stood between the small dense model and a zero train/serve gap. The serve-side KL is now 0.0012.\n", False),
    # look-alike: the pair of the KL itself, named in its sentence
    ("We measured the mean KLD between the 4-bit file and acme/tiny-7b: 0.0031.\n", True),
])
def test_between_without_a_kl_term_names_no_pair(text, found):
    assert (reading(text, 1).status != "missing") is found


@pytest.mark.parametrize(
    ("text", "quote"),
    [
        ("Mean KLD vs the exact oracle: 0.012.\n", "the exact oracle"),
        ("Mean KLD vs the pre-edit model: 0.012.\n", "the pre-edit model"),
        ("The mean KL against the uncompressed run is 0.004.\n", "the uncompressed run"),
        ("Mean KL vs FP64: 3e-7.\n", "FP64"),
    ],
)
def test_a_role_by_what_the_reference_lacks_or_how_exactly_it_computes_is_incomplete(text, quote):
    d = reading(text, 1)
    assert d.status == "incomplete" and any(quote in e.text for e in d.evidence), d


# A KL term's pair with the reference role first: holdout9/b automodel_pr1951 / automodel_pr1932 ("KL divergence between
# original and HF-loaded model"), holdout10/d torchtitan ("the KL divergence between the original and ..."), holdout16/d
# sae_circuit ("KL divergence between baseline and ..."): labelled D1 S with 1 (a role tied to the KL, round 21)
@pytest.mark.parametrize(
    "text",
    [
        "Reload check failed: KL divergence between original and re-saved model is 0.031 per token.\n",
        "The mean KL between the teacher and the pruned student stays at 0.0042.\n",
        "Mean KLD between base and the 3-bit export: 0.018.\n",
    ],
)
def test_a_kl_pair_with_the_reference_role_first_is_incomplete(text):
    d = reading(text, 1)
    assert d.status == "incomplete" and any("between" in e.text for e in d.evidence), d


# ... but two sides neither of which is a reference role name none ("between trainer and rollout", holdout8/b and
# holdout9/d: no side is the reference), nor a role first in a pair that is not the KL's
@pytest.mark.parametrize(
    "text",
    [
        "The mean KL between trainer and rollout probabilities is 0.0021 after the fix.\n",
        "Speed differs between baseline and patched builds by 4%; the patched build's KLD is 0.0031.\n",
    ],
)
def test_a_pair_without_a_reference_role_first_names_no_reference(text):
    assert reading(text, 1).status == "missing", reading(text, 1)


# A baseline field or row whose value is a count out of a total is the baseline's own score, not a model: holdout16/a
# mlx_quality_suite ("**Baseline:** 15/15 passed" beside the needle runs) and holdout7/d gemma4_abliteration ("| baseline
# | 24/100 |" in a refusal table), two authors, both D1 M
@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("**Baseline:** 12/12 passed\n\nThe 4-bit cache reaches a mean KLD of 0.021.\n", False),
        ("| run | refusals |\n|---|---|\n| baseline | 31/100 |\n| edited | 2/100 |\n\nMean KLD of the edit: 0.044.\n", False),
        # look-alikes: a baseline named, even with a number first
        ("**Baseline:** 8-bit MLX export\n\nThe 4-bit cache reaches a mean KLD of 0.021.\n", True),
        ("**Reference:** 6.0bpw\n\nThe 4-bit cache reaches a mean KLD of 0.021.\n", True),
    ],
)
def test_a_baselines_score_out_of_a_total_names_no_reference(text, found):
    assert (reading(text, 1).status != "missing") is found, reading(text, 1)


# The teacher the compared runs share, beside a KL: holdout9/b hipfire_pr596 ("Same source, same teacher, same slice:" over
# the KLD table), holdout4/b unnamed_dsv4_flash and holdout16/e deepseek_v4_flash_0731 ("Same FP8 ... own-base teacher" in
# the list of what the runs share): D1 S with 1, a role tied to the KL (round 21)
@pytest.mark.parametrize(
    "text",
    [
        "Both runs share the same tokens and the same teacher:\n\n| build | mean KLD |\n|---|---|\n| q3 | 0.21 |\n",
        "- Same 32 windows\n- Same BF16 distilled teacher\n- Same KLD definition\n\nThe 3-bit build: mean KLD 0.12.\n",
    ],
)
def test_a_shared_teacher_beside_a_kl_is_the_reference(text):
    d = reading(text, 1)
    assert d.status == "incomplete" and any("teacher" in e.text for e in d.evidence), d


# ... not a shared teacher far from any KL, nor teacher forcing (a way of decoding)
@pytest.mark.parametrize(
    "text",
    [
        "The 3-bit build: mean KLD 0.12.\n\n## Training\n\nBoth students learned from the same teacher for two epochs.\n",
        "The 3-bit build: mean KLD 0.12.\n\nBoth arms decode with the same teacher-forced prefix of 64 tokens.\n",
    ],
)
def test_a_shared_teacher_away_from_the_kl_or_teacher_forcing_is_not_read(text):
    assert reading(text, 1).status == "missing", reading(text, 1)
