"""First differing position between two id arrays, and what kind of difference it is."""

from __future__ import annotations

import unicodedata

from kldcard.tokens.engines import EngineTokenizer
from kldcard.tokens.report import Mismatch

_WINDOW_BEFORE, _WINDOW_AFTER, _CONTEXT_CHARS = 2, 5, 40


def first_difference(a: list[int], b: list[int]) -> int | None:
    """Index of the first differing id (``min(len)`` when one is a prefix); None when equal."""
    for i, (x, y) in enumerate(zip(a, b)):
        if x != y:
            return i
    return None if len(a) == len(b) else min(len(a), len(b))


def leading_bos(ids: list[int], bos: int | None) -> int:
    n = 0
    if bos is not None:
        while n < len(ids) and ids[n] == bos:
            n += 1
    return n


def _classify(
    a: list[int], b: list[int], p: int, ta: EngineTokenizer, tb: EngineTokenizer, near_text: str
) -> tuple[str, str]:
    lead_a, lead_b = leading_bos(a, ta.bos_id), leading_bos(b, tb.bos_id)
    if lead_a != lead_b and p <= max(lead_a, lead_b):
        more, fewer = (ta, tb) if lead_a > lead_b else (tb, ta)
        n_more, n_fewer = max(lead_a, lead_b), min(lead_a, lead_b)
        if n_fewer == 0 and n_more == 1:
            return "missing BOS", (
                f"{fewer.label} does not start with BOS; {more.label} starts with BOS id "
                f"{more.bos_id} — align BOS (--add-bos yes or no) before comparing logits"
            )
        return "double BOS", (
            f"{more.label} starts with {n_more} BOS ids, {fewer.label} with {n_fewer} — "
            "BOS was added to a text (or rendered template) that already had one"
        )
    shorter, longer, t_longer = (a, b, tb) if len(a) < len(b) else (b, a, ta)
    if p == len(shorter) and set(longer[p:]) <= t_longer.eos_ids:
        return "EOS", f"{t_longer.label} appends EOS id(s) {longer[p:]} that the other does not"
    if p == len(shorter):
        return "length", f"{t_longer.label} has {len(longer) - p} extra token(s) at the end"
    xa, xb = a[p], b[p]
    specials = ta.special_texts | tb.special_texts
    parsed_a = any(i in ta.special_ids for i in a[p : p + _WINDOW_AFTER])
    parsed_b = any(i in tb.special_ids for i in b[p : p + _WINDOW_AFTER])
    if parsed_a != parsed_b or any(s and s in near_text for s in specials):
        if parsed_a != parsed_b:
            parser, other = (ta, tb) if parsed_a else (tb, ta)
            what = f"is one special id for {parser.label} and plain text for {other.label}"
        else:
            what = "is tokenized differently by the two engines"
        return "special-token parsing", (
            f"a special-token string in the text {what} — use the same --special (parse or text) for both"
        )
    pa, pb = ta.decode([xa]), tb.decode([xb])
    if pa == pb:
        return "vocabulary", f"the same piece {pa!r} has id {xa} in {ta.label} and {xb} in {tb.label}"
    if unicodedata.normalize("NFC", near_text) != near_text:
        return "pre-tokenizer", (
            f"the same text is split differently ({ta.piece(xa)!r} vs {tb.piece(xb)!r}) where the text is "
            "not in Unicode NFC: one engine applies the tokenizer's normalizer (NFC), the other does not"
        )
    return "pre-tokenizer", (
        f"the same text is split differently ({ta.piece(xa)!r} vs {tb.piece(xb)!r}): "
        "pre-tokenizer, normalizer or merges differ"
    )


def describe_mismatch(
    text: str, a: list[int], b: list[int], ta: EngineTokenizer, tb: EngineTokenizer
) -> Mismatch | None:
    """The first mismatch between ``a`` (tokenized by ``ta``) and ``b`` (by ``tb``), or None.

    ``text`` is what was tokenized (the rendered prompt in chat mode); the surrounding text is
    located by decoding ``a`` up to the mismatch.
    """
    p = first_difference(a, b)
    if p is None:
        return None
    lead = leading_bos(a, ta.bos_id)
    offset = min(len(ta.decode(a[lead:p])) if p > lead else 0, len(text))
    before = text[max(0, offset - _CONTEXT_CHARS) : offset]
    after = text[offset : offset + _CONTEXT_CHARS]
    kind, detail = _classify(a, b, p, ta, tb, text[max(0, offset - 20) : offset + 40])
    start = max(0, p - _WINDOW_BEFORE)
    wa, wb = a[start : p + _WINDOW_AFTER], b[start : p + _WINDOW_AFTER]
    return Mismatch(
        position=p,
        a=ta.label,
        b=tb.label,
        kind=kind,
        detail=detail,
        window_start=start,
        ids_a=wa,
        ids_b=wb,
        pieces_a=[ta.piece(i) for i in wa],
        pieces_b=[tb.piece(i) for i in wb],
        context_before=before,
        context_after=after,
    )


def first_char_difference(x: str, y: str) -> int | None:
    for i, (c, d) in enumerate(zip(x, y)):
        if c != d:
            return i
    return None if len(x) == len(y) else min(len(x), len(y))
