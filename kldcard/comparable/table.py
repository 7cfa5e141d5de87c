"""The comparability table of several inputs: columns of numbers, rows of disclosures, a verdict.

Numbers that share every reading (a block's candidates on one stack, a table's rows under one claim)
are one column: they are the same quantity by construction, and a column per number would repeat
itself. Each column is named after its input (``A``, ``B``, ...; ``A1``, ``A2`` when one input gives
several columns). The rules and verdicts are :mod:`kldcard.lint.quantity` and
:mod:`kldcard.lint.quantity_verdict`; the ranking advice is :mod:`kldcard.comparable.ranking`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from kldcard.comparable.numbers import Column, Number, Source, Unreadable
from kldcard.comparable.ranking import Advice, advise
from kldcard.errors import InputError
from kldcard.lint.quantity_verdict import Verdict, compare_readings, readings_key


# Columns are numbers that read differently; a real card has a handful. Beyond this many the table is
# unreadable and the pairwise row verdicts grow with the square of the count (a 2,000-row table whose
# every row names its own context is a stall, not a comparison).
MAX_COLUMNS = 100


@dataclass(frozen=True)
class Comparison:
    """What ``kldcard comparable`` prints: the columns, the verdict and the ranking advice."""

    columns: tuple[Column, ...]
    verdict: Verdict
    advice: Advice
    unreadable: tuple[tuple[str, Unreadable], ...] = ()  # (input's short name, number left out and why)
    values: tuple[str, ...] = ()  # numbers whose value cannot be a mean KL divergence, and why

    @property
    def exit_code(self) -> int:
        return 0 if self.verdict.comparable else 1


def columns_of(sources: Sequence[Source], names: Sequence[str]) -> list[Column]:
    out: list[Column] = []
    for src, name in zip(sources, names):
        groups: dict[str, list[Number]] = {}
        for n in src.numbers:
            groups.setdefault(readings_key(n.readings), []).append(n)
        many = len(groups) > 1
        out += [Column(f"{name}{i}" if many else name, src.name, tuple(g)) for i, g in enumerate(groups.values(), 1)]
    return out


def one_card(sources: Sequence[Source]) -> bool:
    """True when every input is the same card (by content: one file given twice, two claims of it, the
    same card as a file and as ``hf://``): its numbers are presented as measured together."""
    ids = {s.identity or s.name for s in sources}
    return len(ids) == 1


def compare_sources(sources: Sequence[Source], names: Sequence[str]) -> Comparison:
    """The comparison of the numbers of ``sources`` (named ``names``) with each other.

    Numbers that all come from one card (:func:`one_card`) share what the card leaves unsaid: a
    disclosure none of them states is a caveat, not "cannot tell" (:func:`compare_readings`). A number
    whose value cannot be a mean KL divergence (negative, not finite, absurdly large) is named in
    ``values`` and is not ranked."""
    columns = columns_of(sources, names)
    if len(columns) > MAX_COLUMNS:
        raise InputError(f"the inputs give {len(columns)} columns (numbers that read differently); comparable puts "
                         f"at most {MAX_COLUMNS} side by side: narrow an input with CARD#LINE or CARD::NAME")
    verdict = compare_readings([c.name for c in columns], [c.readings for c in columns], one_card=one_card(sources))
    values = tuple(f"{c.name} {n.label}: {why}" for c in columns for n in c.numbers if (why := n.implausible()))
    unread = tuple((name, u) for src, name in zip(sources, names) for u in src.unreadable)
    return Comparison(tuple(columns), verdict, advise(columns, verdict, values), unread, values)


def to_json(cmp: Comparison) -> dict[str, Any]:
    """Every row with its cells' values, statuses and evidence (stable keys)."""
    v = cmp.verdict
    return {
        "verdict": v.overall,
        "sentence": v.sentence,
        "reasons": list(v.reasons),
        "caveats": list(v.caveats),
        "flags": list(v.flags),
        "implausible_values": list(cmp.values),
        "unreadable": [{"input": name, **u.to_json()} for name, u in cmp.unreadable],
        "columns": [{"name": c.name, "source": c.source, "numbers": [n.to_json() for n in c.numbers]}
                    for c in cmp.columns],
        "rows": [{
            "row": r.rule.row, "disclosure": f"D{r.rule.disclosure}", "label": r.rule.label, "rule": r.rule.kind,
            "verdict": r.verdict, "detail": r.detail,
            "flag": r.flag.format(", ".join(cmp.columns[i].name for i in r.flagged)) if r.flag else None,
            "cells": {c.name: cell.to_json() for c, cell in zip(cmp.columns, r.cells)},
        } for r in v.rows],
        "ranking": cmp.advice.to_json(),
    }
