"""The arguments of ``kldcard comparable``: cards (files or ``hf://``), one claim of a card, results JSON.

An argument is

- a card file or ``hf://OWNER/NAME[@REV]`` (read through the linter's Hub reader): its ``kld_evaluation``
  block's candidates when it has one, else the numbers of its prose claims;
- ``CARD#LINE``: only the numbers of the claim (or candidate) at that line of the card;
- ``CARD::NAME``: only the numbers of candidate ``NAME`` (a block candidate or a table row's label);
- a results JSON written by kldcard (``kldcard compare`` / ``kldcard evaluate``).

Every failure is an :class:`~kldcard.errors.InputError` (one line; exit 2).
"""

from __future__ import annotations

import hashlib
import os
import re
from dataclasses import dataclass
from pathlib import Path

from kldcard.card import hub
from kldcard.card.document import MAX_CARD_BYTES, Card, parse_card, read_bytes
from kldcard.comparable.block import block_numbers
from kldcard.comparable.numbers import Number, Source, Unreadable
from kldcard.comparable.prose import prose_numbers
from kldcard.comparable.results import is_results, parse_json, results_number
from kldcard.errors import InputError
from kldcard.files import decode_utf8

_LINE = re.compile(r"^(?P<card>.+)#(?P<line>[0-9]+)$")
_BOM = b"\xef\xbb\xbf"
SHOWN_CLAIMS = 8  # claims listed when a CARD#LINE names none


@dataclass(frozen=True)
class Spec:
    """One argument, split: the card or file, and the claim it narrows to."""

    text: str
    path: str
    line: int | None = None
    name: str | None = None
    bad_line: str | None = None  # what followed '#' when it is not a line number


def parse_arg(text: str) -> Spec:
    """``CARD``, ``CARD#LINE`` or ``CARD::NAME`` (a file whose name has ``#`` or ``::`` is taken whole)."""
    if not text:
        raise InputError("an empty argument; give a card, hf://OWNER/NAME, CARD#LINE, CARD::NAME or a results JSON")
    if text == "-" and not os.path.exists(text):
        raise InputError("-: comparable reads files, not standard input; save the card to a file and pass its path")
    if hub.is_hub_spec(text) or not os.path.exists(text):
        if "::" in text:
            path, _, name = text.rpartition("::")
            if not path or not name:
                raise InputError(f"{text}: write CARD::NAME (a candidate's name after the '::')")
            return Spec(text, path, name=name)
        m = _LINE.match(text)
        if m:
            return Spec(text, m.group("card"), line=int(m.group("line")))
        head, sep, tail = text.rpartition("#")
        if sep and head and (hub.is_hub_spec(head) or os.path.exists(head)):
            return Spec(text, head, bad_line=tail)
    return Spec(text, text)


def load(text: str, cache: hub.CardCache | None = None, *, limit: int = MAX_CARD_BYTES) -> Source:
    """The numbers one argument gives (narrowed as it says); ``limit``: the largest input read, in bytes."""
    spec = parse_arg(text)
    numbers, unread, identity = _numbers(spec, cache or hub.CardCache(), limit)
    if spec.bad_line is not None:
        raise InputError(f"{spec.text}: {spec.bad_line!r} after '#' is not a line number; "
                         f"{_claims_at(spec.path, numbers, unread)}")
    if spec.line is not None:
        picked = [n for n in numbers if _at(spec.line, n.span, n.line, n.claim_line)]
        picked_unread = [u for u in unread if _at(spec.line, u.span, u.line)]
        if not picked and not picked_unread:
            raise InputError(f"{spec.text}: no KLD claim at line {spec.line} of {spec.path}; "
                             f"{_claims_at(spec.path, numbers, unread)}")
        numbers, unread = picked, picked_unread
    if spec.name is not None:
        want = spec.name.casefold()
        names = sorted({n.label for n in numbers} | {u.label for u in unread})
        numbers = [n for n in numbers if n.label.casefold() == want]
        unread = [u for u in unread if u.label.casefold() == want]
        if not numbers and not unread:
            shown = ", ".join(repr(n) for n in names[:SHOWN_CLAIMS]) + (" ..." if len(names) > SHOWN_CLAIMS else "")
            raise InputError(f"{spec.text}: no candidate named {spec.name!r} in {spec.path}"
                             + (f" (its candidates: {shown})" if names else ""))
    if not numbers and unread:
        u = unread[0]
        raise InputError(f"{spec.text}: no usable KLD number: kldcard lint rejects its kld_evaluation block "
                         f"({u.shown()})")
    if not numbers:
        raise InputError(f"{spec.text}: no KLD number found (no kld_evaluation block and no KLD claim in the prose)")
    return Source(spec.text, numbers, unread, identity)


def _at(line: int, span: tuple[int, int] | None, *lines: int | None) -> bool:
    return line in lines or (span is not None and span[0] <= line <= span[1])


def _claims_at(path: str, numbers: list[Number], unread: list[Unreadable]) -> str:
    """"its KLD claims are at lines 7-10 (line 9), 12-15 (Q4_K_M, Q5_K_M)" (what CARD#LINE can name)."""
    spans: dict[tuple[int, int], list[str]] = {}
    for label, span, line in [(n.label, n.span, n.line) for n in numbers] + [(u.label, u.span, u.line) for u in unread]:
        key = span or ((line, line) if line else None)
        if key is not None and label not in spans.setdefault(key, []):
            spans[key].append(label)
    if not spans:
        return f"{path} has no KLD claim with a line (a results JSON has none: give it whole)"
    parts = [(f"{a}-{b}" if a != b else f"{a}") + f" ({', '.join(labels[:3])}{' ...' if len(labels) > 3 else ''})"
             for (a, b), labels in sorted(spans.items())[:SHOWN_CLAIMS]]
    more = f" and {len(spans) - SHOWN_CLAIMS} more" if len(spans) > SHOWN_CLAIMS else ""
    return f"its KLD claims are at lines {', '.join(parts)}{more}"


def _numbers(spec: Spec, cache: hub.CardCache, limit: int) -> tuple[list[Number], list[Unreadable], str]:
    if hub.is_hub_spec(spec.path):
        local, _ = cache.fetch(spec.path)
        data = read_bytes(local, limit)
        card = parse_card(data, f"{hub.parse_spec(spec.path)}/README.md")
        return (*_card_numbers(card, spec.path), hashlib.sha256(data).hexdigest())
    data = read_bytes(spec.path, limit)
    identity = hashlib.sha256(data).hexdigest()
    if data.removeprefix(_BOM).lstrip()[:1] in (b"{", b"["):
        parsed = parse_json(decode_utf8(data.removeprefix(_BOM), spec.path), spec.path)
        if not is_results(parsed):
            raise InputError(f"{spec.path}: a JSON file that is not a kldcard results file (format "
                             "kldcard-compare-result, from `kldcard compare` or `kldcard evaluate`)")
        return [results_number(parsed, spec.path)], [], identity
    return (*_card_numbers(parse_card(data, spec.path), spec.path), identity)


def _card_numbers(card: Card, source: str) -> tuple[list[Number], list[Unreadable]]:
    # a card with a block gives the block's numbers (its prose restates them); without one, its prose's
    numbers, unread = block_numbers(card, source)
    if numbers or unread:
        return numbers, unread
    return prose_numbers(card, source), []


def source_names(paths: list[str]) -> list[str]:
    """Short names of the inputs: A, B, C, ... (AA after Z)."""
    out = []
    for i in range(len(paths)):
        name, n = "", i
        while True:
            name = chr(ord("A") + n % 26) + name
            n = n // 26 - 1
            if n < 0:
                break
        out.append(name)
    return out


def display_path(path: str) -> str:
    return path if hub.is_hub_spec(path) else str(Path(path))
