"""kldcard.lint.read.sentence_terms: a veto's sentence answers "does it name X" from one scan per card sentence."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st

from kldcard.lint.read.sentence_terms import Sentence, SentenceTerms, has

KL = re.compile(r"(?<![A-Za-z])KLD?(?![A-Za-z])")


def test_a_whole_sentence_reads_as_its_search():
    text = "Intro. Mean KLD 0.02 on a 12-token probe. Nothing here."
    terms = SentenceTerms(text)
    s, e = 7, 41
    assert has(KL, Sentence(terms, s, e, (s, e)))
    assert not has(KL, Sentence(terms, 42, len(text), (42, len(text))))
    assert Sentence(terms, s, e, (s, e)) == text[s:e]  # every other reader sees the plain string


def test_a_clipped_window_counts_the_terms_wholly_inside_it():
    text = "a 12-token probe, " * 20 + "KLD 0.01, " + "a 12-token probe, " * 20
    terms = SentenceTerms(text)
    at = text.index("KLD")
    whole = (0, len(text))
    assert has(KL, Sentence(terms, at - 50, at + 50, whole))
    assert not has(KL, Sentence(terms, 0, at - 1, whole))
    assert not has(KL, Sentence(terms, at + 4, len(text), whole))
    assert not has(KL, Sentence(terms, at - 50, at + 2, whole))  # "KL" of a term the clip cuts in two


def test_any_other_string_is_searched():
    assert has(KL, "KLD 0.01") and not has(KL, "a 12-token probe")


@given(st.lists(st.sampled_from(["KLD", "KL", "xKL", "KLs", " ", ", ", "probe", "."]), max_size=30))
def test_the_whole_sentence_answer_is_exactly_the_search(words):
    text = "".join(words)
    terms = SentenceTerms(text)
    for _ in range(2):  # the second answer comes from the memo
        assert has(KL, Sentence(terms, 0, len(text), (0, len(text)))) == (KL.search(text) is not None)
