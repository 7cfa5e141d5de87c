"""The one definition of a KL term (kldcard.lint.read.terms: KL_TERM, KL_WORD, KL_NAME, KL_MENTION) that the
claim finder, the detection readers and the evidence patterns build on. Inputs written for this test."""

from __future__ import annotations

import re

import pytest

from kldcard.lint.claims_patterns import KLD_TERM
from kldcard.lint.read.terms import KL_MENTION, KL_NAME, KL_TERM, KL_WORD

I = re.IGNORECASE | re.ASCII


@pytest.mark.parametrize("text", ["KLD 0.01", "the KL-div column", "KL divergence", "Kullback-Leibler", "D_KL", "KL(p||q)",
                                  "mean KL", "divergencia KL", "KL散度", "相对熵", "KL-Divergenz"])
def test_kl_term_names_the_divergence(text: str) -> None:
    assert re.search(KL_TERM, text, I)  # compiled with re.ASCII, as claims_patterns does
    assert KLD_TERM.search(text)


@pytest.mark.parametrize("text", ["KLD-QA benchmark", "a KL-based objective", "kld_results.csv", "OKLAHOMA", "skld"])
def test_kl_term_is_not_a_name_or_a_file(text: str) -> None:
    assert not re.search(KL_TERM, text, I)


@pytest.mark.parametrize(("text", "word"), [("the mean KLD fell", "KLD"), ("forward KL-divergence", "KL-divergence"),
                                            ("2x lower KL here", "KL"), ("正向KL散度", "KL")])
def test_kl_word_is_one_word_of_a_phrase(text: str, word: str) -> None:
    m = re.search(KL_WORD, text, re.IGNORECASE)
    assert m is not None and m.group(0) == word


def test_kl_word_wants_a_word_end() -> None:
    assert not re.search(r"\b" + KL_WORD, "KLDs KLX kl_loss", I)


def test_kl_name_leaves_a_bare_kl_out() -> None:
    assert re.fullmatch(KL_NAME, "KL-div", I) and re.fullmatch(KL_NAME, "KLD", I)
    assert not re.fullmatch(KL_NAME, "KL", I)


@pytest.mark.parametrize("text", ["a divergence of 0.1", "KL-based", "ダイバージェンス", "相對熵", "Kullback"])
def test_kl_mention_is_looser_than_the_term(text: str) -> None:
    assert re.search(KL_MENTION, text, re.IGNORECASE)
