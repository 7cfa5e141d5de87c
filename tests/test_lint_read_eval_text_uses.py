"""D3: names of a text that are not the KLD's text (kldcard.lint.read.eval_text_uses: a perplexity's text,
a benchmark's score, a cited page), the file of a KL run whatever its name, and the forms of
kldcard.lint.read.eval_text_forms (a texts column, a versioned panel, Romance-language descriptions)."""

from __future__ import annotations

import pytest
from helpers_reading import reading

CLAIM = "The Q5_K_S file reaches a mean KLD of 0.0147 against the BF16 logits"


def d3(text: str):
    return reading(text, 3)


@pytest.mark.parametrize(
    "text",
    [
        # a corpus named as a perplexity's qualifier, the KL in another statement
        f"{CLAIM}; the c4 validation perplexity is printed beside it for reference.\n",
        f"{CLAIM}.\n\n| Row | Value |\n|---|---|\n| wikitext-2 PPL | 7.91 |\n",
        f"{CLAIM}. Peor: la perplexity de wikitext-2 sube a 7,91.\n",
        # a task suite named for its score
        f"{CLAIM}; accuracy is kept on the usual suites (MMLU, GSM8K, HellaSwag).\n",
        f"{CLAIM}, and HumanEval 81.2% does not move.\n",
        f"{CLAIM}.\n\n| Quant | KL-div | HumanEval@1 |\n|---|---|---|\n| Q5 | 0.0147 | 80.4 |\n",
        # a speed run's prompts
        f"{CLAIM}.\n\n**Serving throughput** (one H100, 64 prompts ShareGPT): 212 tok/s.\n",
        f"{CLAIM}.\n\n**Rendimiento de servicio** (una GPU, 64 prompts ShareGPT): 212 tok/s.\n",
        # a cited page on the site of the corpus's name
        f'{CLAIM}.\n\n<li><a href="https://en.wikipedia.org/wiki/Kullback-Leibler">KL divergence - Wikipedia</a></li>\n',
    ],
)
def test_a_text_named_for_another_number_or_a_cited_page_is_not_read(text):
    assert d3(text).status == "missing", d3(text)


@pytest.mark.parametrize(
    "text",
    [
        # the perplexity and the KL in one statement, or a tool that scores both on one run
        f"{CLAIM}; wikitext-2 PPL and KL are measured on the same 40 chunks.\n",
        f"{CLAIM}.\n\n| Row | Value |\n|---|---|\n| wikitext-2 PPL | 7.91 |\n\nBoth come from one llama-perplexity run.\n",
        # "KL(P || Q)" does not end the statement that names the text
        f"{CLAIM}. KL(BF16 || Q5) over the fidelity-v2 population, with throughput logged alongside.\n",
        # a task suite whose prompts the KL was scored on
        f"{CLAIM}, KLD on GSM8K prompts.\n",
        # a corpus on a Hub dataset link is a source, not a cited page
        f"{CLAIM}, KL scored on https://huggingface.co/datasets/someone/chat-panel test windows.\n",
    ],
)
def test_the_kld_text_is_still_read(text):
    assert d3(text).status != "missing", d3(text)


def test_the_file_of_a_kl_run_is_its_text_whatever_its_name():
    text = (
        f"{CLAIM}.\n\n```\nllama-perplexity -m q5.gguf --ctx-size 2048 \\\n"
        "  --file /data/own_imat_calibration_text.txt --kl-divergence --kl-divergence-base ref.kld\n```\n"
    )
    d = d3(text)
    assert d.status != "missing", d
    assert any("calibration_text" in e.text for e in d.evidence)


@pytest.mark.parametrize(
    "text",
    [
        # a header column of texts in a table of KLDs
        f"{CLAIM}.\n\nPer text:\n\n| Prompt | Kind | Mean KLD |\n|---|---|---:|\n| recipe | chat | 0.011 |\n| sorter | code | 0.019 |\n",
        # a versioned population, a hyphenated panel
        f"{CLAIM}, scored on the same review-v3 population of 900 windows.\n",
        f"{CLAIM} over the long-panel windows.\n",
        # Spanish, Portuguese, French descriptions of the texts
        f"{CLAIM}, medida sobre secuencias fijas de tokens.\n",
        f"{CLAIM}, medida en 10 fragmentos de 512 tokens por texto.\n",
        f"{CLAIM}, mesurée sur les mêmes textes.\n",
    ],
)
def test_texts_written_in_these_forms_are_found(text):
    assert d3(text).status != "missing", d3(text)


def test_a_column_that_is_not_in_a_header_row_is_not_a_texts_column():
    text = f"{CLAIM}.\n\n| Quant | KLD |\n|---|---|\n| Prompt | 0.02 |\n"
    assert d3(text).status == "missing", d3(text)
