"""Where a clause stops, read over a sentence or a passage: a sentence end or ";" with white space after it (not
"llama.cpp", "0.9", "&nbsp;"), or a blank line; a colon and a single line break go on. One grammar for the readers
that ask which clause holds a match (runtime_targets: a requirement's or an aim's clause); inside one sentence the
splitter cut, only ";" stops (:func:`in_sentence`; position_forms: a top-1 fraction's, so that "PASS with top-1 24/24;
kl_vs_reference.py ... mean KL" is another check's, while "1270/1280 tokens vs. the BF16 model, ... mean KLD" is one).

Not the other clauses, which read other things: eval_text.clause ends at a comma, colon or bracket too (the phrase
a text is named in), runtime_roles.CLAUSE_START at a colon or any line break (an engine's role on its line), and
context_written.CLAUSE_END reads forward with the CJK stops and any line break (a length's own clause).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

STOP = r"[.!?;](?=\s)|\n\n"
# the first stop after a position (a clause's end)
NEXT = re.compile(STOP)
# the last stop of a text: its last clause starts at this match's end
LAST = re.compile(r"(?:" + STOP + r")(?=(?:(?!" + STOP + r").)*$)", re.S)


def in_sentence(sentence: str, start: int, end: int) -> tuple[int, int]:
    """Offsets of the clause of one sentence (as the sentence splitter cut it) that holds ``sentence[start:end]``:
    there only ";" ends a clause, since a "." the splitter went past is an abbreviation ("vs. the BF16 model",
    "i.e. the argmax") or a number, not a stop."""
    lo = sentence.rfind(";", 0, start) + 1
    hi = sentence.find(";", end)
    return lo, len(sentence) if hi < 0 else hi
