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

from kldcard.comparable.numbers import Column, Number, Source
from kldcard.comparable.ranking import Advice, advise
from kldcard.lint.quantity_verdict import Verdict, compare_readings, readings_key


@dataclass(frozen=True)
class Comparison:
    """What ``kldcard comparable`` prints: the columns, the verdict and the ranking advice."""

    columns: tuple[Column, ...]
    verdict: Verdict
    advice: Advice

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


def compare_sources(sources: Sequence[Source], names: Sequence[str]) -> Comparison:
    """The comparison of the numbers of ``sources`` (named ``names``) with each other.

    One source with one column has nothing to compare with: the verdict is "comparable" (its numbers
    share every reading) and the advice says so."""
    columns = columns_of(sources, names)
    verdict = compare_readings([c.name for c in columns], [c.readings for c in columns], one_card=len(sources) == 1)
    return Comparison(tuple(columns), verdict, advise(columns, verdict))


def to_json(cmp: Comparison) -> dict[str, Any]:
    """Every row with its cells' values, statuses and evidence (stable keys)."""
    v = cmp.verdict
    return {
        "verdict": v.overall,
        "sentence": v.sentence,
        "reasons": list(v.reasons),
        "caveats": list(v.caveats),
        "flags": list(v.flags),
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
