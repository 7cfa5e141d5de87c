"""The shape of one tool's grammar (the tools without a module of their own for their block
structure: llama-perplexity and exllamav3 model_diff have theirs): the lines it prints with a KLD
number, what names it on a card, what only its output shows, and its documented defaults."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

I = re.IGNORECASE | re.ASCII
# a number as these tools print it: fixed ("0.000409", "0.1055") or with an exponent ("2.4e-05")
NUMBER = r"(?P<kld>-?\d+\.\d+(?:[eE][-+]?\d+)?)(?![\w.])"
# pasted output is often quoted or indented ("> ", "    ")
PASTE_PREFIX = r"^(?:[ \t]*+>)*+[ \t]*+"


@dataclass(frozen=True)
class Grammar:
    name: str  # as the reading names the tool
    # printed lines that carry a KLD number: each ``.match()``es a whole line; group "kld" is the number
    lines: tuple[re.Pattern[str], ...] = ()
    # what names the tool on a card precisely enough to infer its defaults (a command, its package)
    names: re.Pattern[str] | None = None
    # labels only its output shows: one of them on the card means the card prints that tool
    printed: re.Pattern[str] | None = None
    # rows of the tool's own record that carry no KLD ("top-1 agreement 0.91" between a receipt's KL rows):
    # they sit between its KLD lines without ending the block, so the record is one claim
    between: re.Pattern[str] | None = None
    # disclosure -> the documented default in words / as a normalised value (reading.VALUE_KEYS);
    # each module cites the source line that documents it. Empty: named only, nothing inferred.
    defaults: dict[int, str] = field(default_factory=dict)
    values: dict[int, dict[str, Any]] = field(default_factory=dict)
    # whether the reading infers those defaults (status ``inferred``) or only names the tool and keeps them
    # as documentation. Inferred only where the tool's user documentation states them, so a reviewer can
    # look them up: the corpus's labelling conventions (tests/data/real_cards/CONVENTIONS.md, R-rules in
    # labels.yaml) give "I" for llama-perplexity and exllamav3 model_diff alone. Defaults found in a tool's
    # source only (Heretic, the MaxText checker, llama_kl.py) can be changed per run by a config option or
    # a fork, and a card that does not say it kept them has not disclosed them.
    infer: bool = False
