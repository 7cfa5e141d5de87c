"""Sentences wrapped across comment lines (issue 28, claim detection; R3 allows one sentence across lines): a run of
lines that each start with the same line-comment or diff marker ("# ", "// ", "-- ", "; ", "+") is one paragraph of
prose written inside code or pasted without a fence (a Nix or shell comment, a quoted documentation diff), whatever
Markdown makes of each line on its own (an unfenced "# " line reads as a heading, so every line would be a sentence).

Its sentences are split as a paragraph's (markdown.SENTENCE_END), with each line's marker blanked so offsets hold; a
line whose text is empty ("#" alone) ends the paragraph. Only sentences that name a KL term and run across lines are
returned ("... 32-way agg. KL vs FP16 KV at" / "# 4096 ctx / top-2000: 0.0179 (...)."): a one-line sentence is read
where it stands. Prose paragraphs are not read here: Markdown already joins their lines. Samples in
tests/test_lint_claim_detection.py.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.claims_patterns import KLD_TERM
from kldcard.lint.markdown import HEADING, SENTENCE_END, Doc

MARKER = re.compile(r"^[ \t]*(#+|//|--|;+|\+)[ \t]?")


def wrapped_sentences(doc: Doc) -> list[tuple[int, str]]:
    """(body offset, text with the markers blanked) of each KL sentence a comment run wraps across lines."""
    out: list[tuple[int, str]] = []
    done: set[int] = set()
    for i in sorted(doc.lines_matching(KLD_TERM)):
        if i in done or not _commented(doc, i):
            continue
        marker = MARKER.match(doc.lines[i]).group(1)
        first, last = i, i
        while first > 0 and _continues(doc, first - 1, marker, doc.code[i]):
            first -= 1
        while last + 1 < len(doc.lines) and _continues(doc, last + 1, marker, doc.code[i]):
            last += 1
        done.update(range(first, last + 1))
        if first == last:
            continue
        start = doc.starts[first]
        text = list(doc.text[start : doc.starts[last] + len(doc.lines[last])])
        for j in range(first, last + 1):
            m = MARKER.match(doc.lines[j])
            at = doc.starts[j] - start
            text[at : at + m.end()] = " " * m.end()
        para = "".join(text)
        s = 0
        for end in [m.start() for m in SENTENCE_END.finditer(para)] + [len(para)]:
            sentence = para[s:end]
            if "\n" in sentence.strip() and KLD_TERM.search(sentence):
                out.append((start + s, sentence))
            s = end
            while s < len(para) and para[s].isspace():
                s += 1
    return out


def _commented(doc: Doc, i: int) -> bool:
    """Whether line ``i`` starts with a comment marker and is not prose Markdown already joins (code, or a "# " line)."""
    m = MARKER.match(doc.lines[i])
    return m is not None and bool(doc.lines[i][m.end() :].strip()) and (doc.code[i] or bool(HEADING.match(doc.lines[i])))


def _continues(doc: Doc, j: int, marker: str, code: bool) -> bool:
    m = MARKER.match(doc.lines[j])
    return m is not None and m.group(1) == marker and doc.code[j] == code and _commented(doc, j)
