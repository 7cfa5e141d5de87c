"""D1 by the comparison words of the card languages other than English (kldcard.lint.read.reference_words):
the reference a KL number is compared against, written with "相对", "与 … 相比", "和 … 的 KL", "と比べ",
"に対する", "대비", "基线", "respecto a", "par rapport à", "gegenüber", "против", and read with the vetoes of "vs"."""

from __future__ import annotations

import pytest
from helpers_reading import reading

from kldcard.lint.read import comparison, reference_words

CLAIM = "The Q4_K_M file reaches a KLD of 0.0231.\n\n"


@pytest.mark.parametrize(
    "text",
    [
        "量化版相对 FP16 的平均 KLD 约 0.012。\n",  # Chinese, the word before
        "它和原始权重的 KL 散度只有 0.3 nats。\n",  # Chinese, "the KL with X"
        "与 FP16 原版相比，平均 KLD 为 0.02。\n",  # Chinese, the frame around the reference
        "| factorA vs trunk 基线 | KLD 0.000 |\n",  # Chinese, the baseline noun after a name
        "フル精度 fp16 reference と比べた KLD は 0.040。\n",  # Japanese
        "自前 dense logits に対する KLD は 0.02 だった。\n",  # Japanese
        "full 16-bit KV cache 대비 KLD가 0.9 수준이다.\n",  # Korean
        "El KLD medio respecto al modelo sin cuantizar es 0,021.\n",  # Spanish
        "La KL moyenne par rapport au modèle complet vaut 0,03.\n",  # French
        "Die mittlere KLD gegenüber dem Ausgangsgewicht liegt bei 0,02.\n",  # German
        "Средний KLD относительно исходной модели равен 0,02.\n",  # Russian
    ],
)
def test_a_comparison_word_of_the_card_language_names_the_reference(text):
    d = reading(CLAIM + text, 1)
    assert d.status == "incomplete" and d.evidence, d


@pytest.mark.parametrize(
    "text",
    [
        "El KLD baja un 15% respecto a 3 bits uniformes.\n",  # a number / a bit width: another candidate
        "La opción compite frente a cuantizaciones Q4_K_M del mismo tamaño en KLD.\n",  # a quantized rival
        "与 8-bit 量化（如 Q8_0）相比，平均 KLD 更高。\n",  # a quantized rival
        "内存占用和 FP16 模型相比降低 60%。\n",  # no KL term in the sentence
        "3/8/16と比べて KLD は変わらない。\n",  # numbers
    ],
)
def test_what_a_comparison_word_puts_against_no_kl_reference_is_not_read(text):
    ms = [m for p in reference_words.PATTERNS for m in p.finditer(text)]
    assert all(reference_words.vetoed(text, m) for m in ms), [m.group(0) for m in ms]


@pytest.mark.parametrize("text", ["参考分布取自官方 runtime 输出的 BF16 logits，平均 KLD 为 0.01。\n", "参照は FP16 KV の同じモデル、KLD は 0.02。\n"])
def test_the_reference_as_a_cjk_copula(text):
    d = reading(CLAIM + text, 1)
    assert d.status == "incomplete" and d.evidence, d


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("| Quant | PPL | Mean KLD | Top-1 |\n|---|---|---|---|\n| BF16 original | 3.27 | — | — |\n| Q4_K_M | 3.31 | 0.012 | 97% |\n", True),
        ("| Quant | Size | KLD |\n|---|---|---|\n| bf16 (teacher) | 65 GB | — (reference) |\n| 4bit | 18 GB | 0.03 |\n", True),
        ("| Quant | PPL | Mean KLD |\n|---|---|---|\n| BF16 | — | 0.004 |\n", False),  # a KL value of its own: a candidate
        ("| Quant | PPL | Speed |\n|---|---|---|\n| BF16 | 3.27 | — |\n", False),  # no KL column
    ],
)
def test_the_reference_row_has_a_dash_under_the_kl_column(text, found):
    ms = list(comparison.DASH_ROW.finditer(text))
    assert any(comparison.dash_under_kl(m) for m in ms) is found
