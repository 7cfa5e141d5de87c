"""D4 recognisers (kldcard.lint.read.calibration): a calibration said to be used, or named only by its file,
reads as found (``incomplete`` until its text and size are given); other mentions of calibration do not."""

from __future__ import annotations

import pytest
from helpers_reading import reading

CLAIM = "The Q4_K_M file reaches a KLD of 0.0231.\n\n"


def d4(text: str):
    return reading(CLAIM + text, 4)


@pytest.mark.parametrize(
    "text",
    [
        "Every row uses the importance matrix `ours-v2.imatrix`.\n",  # the file named, not its text
        "The sealed corpus: `recall_calib.jsonl` (sha256 below).\n",
        "The experts are imatrix-weighted, the rest is 8-bit.\n",  # described
        "Quantized with the matching imatrix for this model.\n",
        "The imatrix was built from data with more German than usual.\n",
        "The files were calibrated on similar prose.\n",
        "The quants use calibration250×2048 and a 6-bit head.\n",  # exllamav3's rows × length
        "- **Calibration:**\n  - 2M text tokens of mixed chat.\n",  # a labelled field
        "| Quant | imatrix | KLD |\n|---|---|---|\n| Q4_K_M | None | 0.02 |\n",  # a table column
        "Datos: wiki.train 640 seq × 512 token (entrenamiento de la reconstrucción, training).\n",
        "Los cuantizados usan una matriz de importancia propia del autor.\n",  # Spanish for an imatrix
    ],
)
def test_calibration_used_or_named_by_its_file_is_found(text):
    assert d4(text).status in ("incomplete", "stated"), d4(text)


@pytest.mark.parametrize(
    "text",
    [
        "```\nllama-perplexity -m q.gguf -f calibration_datav3.txt --kl-divergence\n```\n",  # the eval text
        "The gap is in line with the imatrix calibration differences between uploaders.\n",
        "If an imatrix was built from wikitext, the numbers look better than they are.\n",  # hypothetical
        "The analysis runs on wiki.train.raw with the perplexity tool.\n",  # the train split as the eval text
        "See org/Model-9B-NEO-Imatrix-GGUF for the other quants.\n",  # a name, not a calibration statement
        "The cost is in [the calibration table](#calibration-costs) below, see data/a.json.\n",  # a link's text
        "| Variant | KLD |\n|---|---|\n| FP8, calibrated scales | 0.031 |\n",  # a compared variant's label
        "The calibrated 32-layer FP8 scales ship with the weights.\n",  # calibrated scales, no data described (R8')
    ],
)
def test_other_mentions_of_calibration_are_not_read(text):
    assert d4(text).status == "missing", d4(text)


@pytest.mark.parametrize(
    "text",
    [
        "Codebooks fitted from the weights alone, without a calibration corpus.\n",
        "Cuantización Q6_K estática, sin imatrix.\n",
        "Quantizado sem calibração.\n",
    ],
)
def test_no_calibration_said_in_other_words_is_stated(text):
    d = d4(text)
    assert d.status == "stated" and d.value.get("none") is True, d


@pytest.mark.parametrize(
    "text",
    [
        "La perte est donnée sans imatrice pour toutes les lignes.\n",  # French none
        "Alle Zeilen wurden ohne imatrix quantisiert.\n",  # German none
        "Все кванты сделаны без imatrix.\n",  # Russian none
        "| 4B（imatrix無し） | 0.054 |\n",  # Japanese none
        "本表的量化均不使用imatrix。\n",  # Chinese none
        "Both rows are w/o imatrix.\n",
        "- **imatrix:** none\n",  # a field set to none
    ],
)
def test_an_explicit_none_in_other_languages_is_stated(text):
    d = d4(text)
    assert d.status == "stated" and d.value.get("none") is True, d


@pytest.mark.parametrize(
    "text",
    [
        "These numbers come from the calibration windows, not from a benchmark.\n",  # data by its noun
        "Le texte de calibration fait environ 50 000 jetons.\n",
        "Die Kalibrierdaten stammen aus dem Forum.\n",
        "校正コーパスをモデルに通して統計を集めた。\n",
        "校准数据来自内部聊天记录。\n",
        "This wiki-calibrated build did worse than the plain one.\n",  # the data's kind before "-calibrated"
        "Rows marked * use an imatrix of 10M tokens.\n",  # the data by its size
        "```\npython quantize.py --calib-dataset pileval --w-bit 4\n```\n",  # an option with its value
        "## Calibration inputs\n\n- Corpus: `someorg/chat-mix`\n- Seed: 7\n",  # a heading, then a dataset field
        "The imatrix was made from a mix of chat and code data.\n",  # what it was made from, by kind
        "Both files use GPTQ with 256 calibration samples.\n",  # a calibrating quantizer's data by its size
        "imatrixデータは自作のものを使用。\n",
        "Для калибровки взят wiki.train.raw.\n",  # the word for calibration in the card languages, with a dataset
        "キャリブレーションには wiki.train.raw を使用。\n",
        "Die Kalibrierung nutzt 512 Zeilen aus c4.\n",
    ],
)
def test_calibration_data_described_or_named_is_found(text):
    assert d4(text).status in ("incomplete", "stated"), d4(text)


def test_the_file_given_to_llama_imatrix_is_the_calibration_text():
    text = "```\n./llama-imatrix -m base.gguf \\\n    -f calib_chat_v2.txt -o base.imatrix\n```\n"
    d = d4(text)
    assert d.status in ("incomplete", "stated") and "calib_chat_v2.txt" in str(d.value) + str(d.evidence), d


@pytest.mark.parametrize(
    "text",
    [
        "The probabilities are well-calibrated on this text.\n",  # calibration of a classifier, not of the quants
        "Scales are calibrated per tensor at load time.\n",
    ],
)
def test_calibrated_without_data_is_not_read(text):
    assert d4(text).status == "missing", d4(text)


@pytest.mark.parametrize(
    "text",
    [
        "DWQ corre 400 pasos sobre 1.024 muestras de un corpus web de 512 tokens.\n",  # a dotted thousand, Spanish
        "The AWQ pass ran over 2 048 samples of mixed chat.\n",  # a spaced thousand
    ],
)
def test_a_calibrating_quantizers_sample_count_as_the_languages_write_it(text):
    d = d4(text)
    assert d.status == "incomplete" and d.evidence, d


@pytest.mark.parametrize(
    "text",
    [
        "Calibration targets come from the published record at 1K context (64 tokens).\n",
        "- **Calibration artifact:** raw wikitext/wiki.test.raw gives a high base PPL.\n",
    ],
)
def test_calibration_as_a_modifier_of_no_data_is_not_d4(text):
    assert d4(text).status == "missing"
