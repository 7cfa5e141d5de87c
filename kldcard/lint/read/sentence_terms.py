"""The sentence a veto reads, and the terms looked for in it once per card sentence, not once per match.

A veto (:func:`kldcard.lint.evidence.collect`) reads the sentence of each match of a disclosure's patterns and asks
whether it names a KL term, a measuring word, a speed word, a conditional. A long sentence with many matches ("a
12-token probe, " four hundred times on one line) asked each question once per match, each a scan of up to 2,000
characters (the sentence clipped to ``evidence.SENTENCE_CLIP`` either side of the match): matches x sentence, 0.6 s for
an 8,000-character line. A :class:`Sentence` is the same string with the span it was cut from; :func:`has` scans
the card sentence it belongs to once per term and answers each match's window from those spans.

The answer is ``pattern.search(sentence) is not None`` where the window is the whole card sentence (the usual case:
the memo then only spares the repeats). Where the window is clipped (a sentence over ``SENTENCE_CLIP`` characters
from the match), the answer is whether one scan of the whole card sentence found a term lying wholly inside the
window. That can differ from a search of the clipped string: a term the clip cuts in two, which that search might
have matched in part, does not count; a longer match starting before the window hides a shorter one inside it (the
scan does not overlap); and anchors, look-behinds and word boundaries read the whole sentence, not the window's edge
("^if ...", "\\bmeasur" after a cut mid-word). The clip's place is arbitrary either way, and the scores of every
labelled split are the same with both. Samples in tests/test_lint_read_sentence_terms.py.
"""

from __future__ import annotations

from bisect import bisect_left

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)


class SentenceTerms:
    """Per card text: whether, and where, each term matches in each card sentence asked about."""

    def __init__(self, text: str) -> None:
        self.text = text
        self._found: dict[tuple[re.Pattern[str], int, int], bool] = {}
        self._spans: dict[tuple[re.Pattern[str], int, int], list[tuple[int, int]]] = {}

    def within(self, pattern: re.Pattern[str], whole: tuple[int, int], lo: int, hi: int) -> bool:
        """Whether ``pattern`` matches in ``text[lo:hi]``, a window of the card sentence ``text[whole[0]:whole[1]]``."""
        compiled = getattr(pattern, "compiled", pattern)  # one key for a lazy pattern and its compiled one
        s, e = whole
        key = (compiled, s, e)
        if (lo, hi) == whole:  # the whole sentence: the search itself, done once for all its matches
            found = self._found.get(key)
            if found is None:
                found = self._found[key] = compiled.search(self.text[s:e]) is not None
            return found
        spans = self._spans.get(key)
        if spans is None:  # the clipped windows of one long sentence overlap: one scan of it serves them all
            spans = self._spans[key] = [(s + t.start(), s + t.end()) for t in compiled.finditer(self.text[s:e])]
        i = bisect_left(spans, (lo, lo))  # the first term starting in the window (terms never overlap)
        return i < len(spans) and spans[i][1] <= hi


class Sentence(str):
    """``text[lo:hi]``, a plain string to every reader, that knows where it was cut from: the card sentence ``whole``
    (start, end) and the card's :class:`SentenceTerms` (see the module's docstring)."""

    terms: SentenceTerms
    lo: int
    hi: int
    whole: tuple[int, int]

    def __new__(cls, terms: SentenceTerms, lo: int, hi: int, whole: tuple[int, int]) -> Sentence:
        self = super().__new__(cls, terms.text[lo:hi])
        self.terms, self.lo, self.hi, self.whole = terms, lo, hi, whole
        return self


def has(pattern: re.Pattern[str], sentence: str) -> bool:
    """``pattern.search(sentence) is not None``, read from the card sentence's memo when ``sentence`` is a
    :class:`Sentence` (any other string, a clause cut from one too, is searched)."""
    if type(sentence) is Sentence:
        return sentence.terms.within(pattern, sentence.whole, sentence.lo, sentence.hi)
    return pattern.search(sentence) is not None
