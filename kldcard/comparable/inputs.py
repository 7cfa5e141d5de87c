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

import os
import re
from dataclasses import dataclass
from pathlib import Path

from kldcard.card import hub
from kldcard.card.document import parse_card, read_bytes
from kldcard.comparable.block import block_numbers
from kldcard.comparable.numbers import Number, Source
from kldcard.comparable.prose import prose_numbers
from kldcard.comparable.results import is_results, parse_json, results_number
from kldcard.errors import InputError
from kldcard.files import decode_utf8

_LINE = re.compile(r"^(?P<card>.+)#(?P<line>[0-9]+)$")


@dataclass(frozen=True)
class Spec:
    """One argument, split: the card or file, and the claim it narrows to."""

    text: str
    path: str
    line: int | None = None
    name: str | None = None


def parse_arg(text: str) -> Spec:
    """``CARD``, ``CARD#LINE`` or ``CARD::NAME`` (a file whose name has ``#`` or ``::`` is taken whole)."""
    if not text:
        raise InputError("an empty argument; give a card, hf://OWNER/NAME, CARD#LINE, CARD::NAME or a results JSON")
    if hub.is_hub_spec(text) or not os.path.exists(text):
        if "::" in text:
            path, _, name = text.rpartition("::")
            if not path or not name:
                raise InputError(f"{text}: write CARD::NAME (a candidate's name after the '::')")
            return Spec(text, path, name=name)
        m = _LINE.match(text)
        if m:
            return Spec(text, m.group("card"), line=int(m.group("line")))
    return Spec(text, text)


def load(text: str, cache: hub.CardCache | None = None) -> Source:
    """The numbers one argument gives (narrowed as it says)."""
    spec = parse_arg(text)
    numbers = _numbers(spec, cache or hub.CardCache())
    if spec.line is not None:
        numbers = [n for n in numbers if spec.line in (n.line, n.claim_line)]
        if not numbers:
            raise InputError(f"{spec.text}: no KLD number or claim at line {spec.line} of {spec.path}")
    if spec.name is not None:
        want = spec.name.casefold()
        numbers = [n for n in numbers if n.label.casefold() == want]
        if not numbers:
            raise InputError(f"{spec.text}: no candidate named {spec.name!r} in {spec.path}")
    if not numbers:
        raise InputError(f"{spec.text}: no KLD number found (no kld_evaluation block and no KLD claim in the prose)")
    return Source(spec.text, numbers)


def _numbers(spec: Spec, cache: hub.CardCache) -> list[Number]:
    if hub.is_hub_spec(spec.path):
        local, _ = cache.fetch(spec.path)
        card = parse_card(read_bytes(local), f"{hub.parse_spec(spec.path)}/README.md")
        return block_numbers(card, spec.path) or prose_numbers(card, spec.path)
    data = read_bytes(spec.path)
    if data.lstrip()[:1] in (b"{", b"["):
        parsed = parse_json(decode_utf8(data, spec.path), spec.path)
        if not is_results(parsed):
            raise InputError(f"{spec.path}: a JSON file that is not a kldcard results file (format "
                             "kldcard-compare-result, from `kldcard compare` or `kldcard evaluate`)")
        return [results_number(parsed, spec.path)]
    card = parse_card(data, spec.path)
    return block_numbers(card, spec.path) or prose_numbers(card, spec.path)


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
