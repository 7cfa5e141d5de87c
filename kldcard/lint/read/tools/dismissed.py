"""Whether a tool named in prose is the one that measured the card's numbers (kldcard.lint.tool_defaults and
the D2 reading in kldcard.lint.read.runtime): a tool named as the former or removed setup, as of no use here, or
as the other side of a contrast with the card's own run is not. Plain grammar of tense, negation and comparison
in the card languages, so no single card's phrasing.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.terms import FORMER_USE

_FORMER = re.compile(FORMER_USE, re.IGNORECASE)
# a tool named as of no use here, right after its name (plain grammar of negation, in the card languages):
# "`llama-perplexity` no sirve aquí", "llama-perplexity does not apply", "is not used", "n'est pas utilisé",
# "ist nicht geeignet"; a tool that is not used did not measure the card's numbers
_NEGATED_AFTER = re.compile(
    r"[`'\"*_»”)]*\s+(?:(?:is|was|does|did|can|could|would)(?:n't|\s+not)\b|(?:is|was)\s+(?:of\s+)?no\b|"
    r"no\s+(?:sirve|aplica|funciona|se\s+usa|es\s+(?:útil|aplicable|válid[oa]))\b|não\s+(?:serve|se\s+aplica|funciona)\b|"
    r"n['’](?:est|a)\s+pas\b|ne\s+\w+\s+pas\b|(?:ist|wird|kann)\s+(?:hier\s+)?nicht\b)",
    re.IGNORECASE,
)
# a tool named as the other side of a contrast with the card's own run (plain grammar of comparison): "unlike
# llama-perplexity", "a diferencia de", "contrairement à", "anders als"; or the tool's convention set against
# "ours" in its own clause ("llama-perplexity's sliding-window context against our independent-chunk
# cross-entropy"; the possessive, since "ran llama-perplexity against our BF16 baseline" is the run itself)
_CONTRAST_BEFORE = re.compile(
    r"\b(?:unlike|rather\s+than|a\s+diferencia\s+de(?:l)?|en\s+(?:lugar|vez)\s+de(?:l)?|contrairement\s+(?:à|au)|"
    r"au\s+lieu\s+d[eu']|anders\s+als|(?:an)?statt|em\s+vez\s+de|ao\s+contrário\s+d[eo])\s+[`'\"*_«“(]*(?:the\s+|el\s+|la\s+|le\s+)?$",
    re.IGNORECASE,
)
_CONTRAST_AFTER = re.compile(r"[`'\"*_]*['’]s\b[^.;:()]{0,80}?\b(?:against|versus|vs\.?|compared\s+(?:to|with))\s+(?:our|ours)\b", re.IGNORECASE)


def contrasted(body: str, m: re.Match[str]) -> bool:
    """Whether the tool at ``m`` is the other side of a contrast with the card's own run."""
    return bool(_CONTRAST_BEFORE.search(body, max(0, m.start() - 40), m.start()) or _CONTRAST_AFTER.match(body, m.end()))


def set_aside(body: str, m: re.Match[str]) -> bool:
    """Whether the text names the tool at ``m`` as its former or removed setup (FORMER_USE, anywhere in its
    sentence) or as the other side of a contrast."""
    return bool(_FORMER.search(_sentence(body, m))) or contrasted(body, m)


def negated(body: str, m: re.Match[str]) -> bool:
    """Whether the words right after the tool at ``m`` say it is of no use or not used."""
    return bool(_NEGATED_AFTER.match(body, m.end()))


_SENTENCE_END = re.compile(r"[.!?](?=\s)|\n\s*\n|\n(?=[ \t]*(?:[-*+]|\d+[.)])\s)")


def _sentence(body: str, m: re.Match[str]) -> str:
    """The sentence (or list item) around ``m``, clipped to 400 characters either side."""
    lo = max(0, m.start() - 400)
    ends = [e.end() for e in _SENTENCE_END.finditer(body, lo, m.start())]
    start = ends[-1] if ends else lo
    after = _SENTENCE_END.search(body, m.end(), m.end() + 400)
    return body[start : after.start() if after else min(len(body), m.end() + 400)]
