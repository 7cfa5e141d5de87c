"""D1 by the shape of a comparison (kldcard.lint.read.comparison): whatever a KL number is compared against is
its reference, named however the card names it; a number, another metric, a second candidate or a list is not."""

from __future__ import annotations

import pytest
from helpers_reading import reading

from kldcard.lint.read.terms import REFERENCE_AFTER, VERSUS_WORDS


def d1(text: str):
    return reading(text, 1)


@pytest.mark.parametrize(
    "text",
    [
        # a comparison word and the phrase after it, in a sentence with a KL term (wrapped lines continue it)
        "Mean KLD 0.031, measured against the stock build without the patch.\n",
        "With the cache switch on, the fused path against\nthe plain path gives a mean KLD of 0.0004.\n",
        "Routing tweak: KLD 0.027 relative to the default router.\n",
        # used as the baseline or the reference (a logits sentence counts as the KL's)
        "Context 2048 on a wiki text. fp32 used as baseline for logits.\n\nThe Q5 file has KLD 0.004.\n",
        "The untouched run served as the reference; the patched run scores KLD 0.012.\n",
        # an unquantized side of a change
        "Going from F16 cache to Q4 cache costs a KLD of 0.05.\n",
        # a reference labelled by its short name, a golden side
        "| Quant | KLD (ref: bf16) |\n|---|---|\n| Q3 | 0.21 |\n",
        "The logit check reads the golden logits of the source model; mean KLD 0.0003.\n",
        # the KL's own preposition, the role assigned, a reference column beside a KL column
        "Table 1: KL divergence from the F16 model.\n\n| Quant | Mean KLD |\n|---|---|\n| Q5 | 0.01 |\n",
        "We cut the model to Q4; its mean KLD to the bf16 original is 0.04.\n",
        "Mean KLD 0.04 (Q4 build, teacher = F16 checkpoint).\n",
        "| Quant | Mean KLD | Reference |\n|---|---|---|\n| Q5 | 0.01 | F16 |\n",
        # Chinese comparison words before or around the reference
        "Q5 相较于 F16 的平均 KL 散度为 0.01。\n",
        "Q5 的 KLD 为 0.01（以 F16 为基准）。\n",
        # the model an edit was made from
        "We release a decensored version of acme/tiny-chat-3b at 4/100 refusals and KL 0.05.\n",
        # the model a quantization was made from (as the Hub's base_model with base_model_relation: quantized)
        "GGUF quants of acme/tiny-chat-3b. Mean KLD of the Q4 file: 0.031.\n",
        # the reference's own KL written as zero, in a header or as its row
        "| Quant | KLD (F16 = 0) |\n|---|---|\n| Q4 | 0.031 |\n",
        "| Quant | PPL | KLD |\n|---|---|---|\n| F16 | 6.1 | 0.0000 |\n| Q4 | 6.2 | 0.031 |\n",
    ],
)
def test_what_a_kl_number_is_compared_against_is_its_reference(text):
    d = d1(text)
    assert d.status == "incomplete" and d.evidence, d


@pytest.mark.parametrize(
    "text",
    [
        "The Q4 file has KLD 0.028 vs 0.031 for the Q3 file.\n",  # a number
        "Plot of KLD vs PPL for every file; Q4 has KLD 0.03.\n",  # another metric (an axis)
        "KLD 0.04 against file size, Q4 being the knee.\n",
        "Our Q4 has KLD 0.12 vs Q3_K_M from another uploader.\n",  # a second candidate
        "Mean KLD 0.2, against the competing versions.\n",  # several candidates
        "Our file scores KLD 0.11, against the Q3 and Q2 builds of others.\n",
        "The KLD dropped from 0.05 to 0.031 for the Q4 file.\n",  # a change between two values
        "Plot: KLD vs position for the Q4 file, mean KLD 0.03.\n",  # an axis
        "| Quant | size | refusals |\n|---|---|---|\n| BF16 | 16 | 0 |\n\nThe Q4 file has KLD 0.03.\n",  # a zero of another table
        "The Q4 file's KLD 0.03 vs the Q5 file's.\n",  # another candidate
        "The Q4 cache is 27.9% of the cache size vs fp16 and reaches a mean KLD of 0.003.\n",  # a size's comparison
        "The Q4 file has mean KLD 0.03.\n\nIt is fast vs the stock file at the same size.\n",  # no KL term in the sentence
    ],
)
def test_numbers_metrics_and_other_candidates_are_no_reference(text):
    d = d1(text)
    assert d.status == "missing", d


@pytest.mark.parametrize(
    "text",
    [
        "La divergencia KL frente al FP16 es 0,012.\n",
        "La divergence KL face au FP16 est de 0,012.\n",
        "Die KL-Divergenz zur BF16-Referenz beträgt 0,012.\n",
        "Die KL-Divergenz verglichen mit BF16 beträgt 0,012.\n",
        "Divergência KL em comparação com BF16: 0,012.\n",
        "КЛ-дивергенция по отношению к BF16 равна 0,012.\n",
        "BF16に対するKLDは0.012。\n",
        "BF16 대비 KLD는 0.012입니다.\n",
    ],
)
def test_comparison_words_of_the_card_languages(text):
    d = d1(text)
    assert d.status in ("stated", "incomplete") and d.value.get("dtype") in ("BF16", "F16"), d


def test_every_reference_language_has_a_sample():
    assert {"es", "pt", "fr", "de", "ru"} == set(VERSUS_WORDS) and {"ja", "zh", "ko"} == set(REFERENCE_AFTER)


# a table row labelled by the pair it compares: the KL term stands in the header, the reference after "vs" in the
# row's first cell (holdout16/d sparkinfer "| TP3 vs llama ref |", holdout-2 vulkan_vs_cpu_repack_kld_stub_check,
# holdout7/d redlite_dev80_half_kv_cache: three authors whose D1 this reads)
def test_a_row_label_that_pairs_the_run_with_its_reference():
    text = "| Pair | mean KLD |\n|---|---:|\n| split run vs single-GPU run | 0.0242 |\n"
    d = d1(text)
    assert d.status != "missing" and "single-GPU" in str(d.evidence[0].text), d


@pytest.mark.parametrize(
    "text",
    [
        # the header names no KL: the pair is of another metric
        "| Pair | top-1 agreement |\n|---|---:|\n| split run vs single-GPU run | 0.98 |\n\nThe KLD of the split run is 0.0242.\n",
        # the "vs" in a later cell is not the row's label
        "| Run | mean KLD | note |\n|---|---:|---|\n| split | 0.0242 | slower vs single-GPU run |\n",
        # a bare role as the row's other side names no reference (real-dev rmas_int4 "| INT4 vs REF |")
        "| Pair | mean KLD |\n|---|---:|\n| split run vs **base** | 0.0242 |\n",
        # ... also with an article, a full stop or "model" (review of round 19)
        "| Pair | mean KLD |\n|---|---:|\n| INT4 vs the ref | 0.0242 |\n",
        "| Pair | mean KLD |\n|---|---:|\n| INT4 vs REF. | 0.0242 |\n",
        "| Pair | mean KLD |\n|---|---:|\n| INT4 vs reference model | 0.0242 |\n",
        # a blank line ends the KL table: the next table's rows are not under its header
        "| Run | mean KLD |\n|---|---:|\n| split | 0.0242 |\n\n| split run vs single-GPU run | 1.4x |\n",
    ],
)
def test_a_pair_outside_a_kl_tables_first_cell_is_no_reference(text):
    assert d1(text).status == "missing", text
