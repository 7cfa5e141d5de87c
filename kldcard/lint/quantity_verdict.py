"""Row and overall verdicts of the comparability table (the rules are in :mod:`kldcard.lint.quantity`).

:func:`compare_readings` takes one mapping of readings (D1–D9 → :class:`DisclosureReading`) per KLD
number and returns a :class:`Verdict`: a :class:`Row` per rule with a verdict (``same``,
``compatible``, ``differs``, ``unknown``) and the overall verdict with its reasons in words.
Standard library only (the linter uses it too).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from itertools import combinations
from typing import Any, Literal

from kldcard.lint.quantity import RULES, SameQuantityRule, normalise
from kldcard.lint.reading import DisclosureReading, Evidence

RowVerdict = Literal["same", "compatible", "differs", "unknown"]
Overall = Literal["comparable", "not comparable", "cannot tell"]
_ORDER = {"same": 0, "compatible": 1, "unknown": 2, "differs": 3}
DETAIL_VALUES = 6  # distinct values a row's detail names


@dataclass(frozen=True)
class Cell:
    """One number's side of a row: the reading's status, the row's values, and where they were read."""

    status: str  # the reading's status, or "missing" when there is no reading
    value: dict[str, Any]  # the values compared (those that name one quantity)
    evidence: tuple[Evidence, ...] = ()
    read: dict[str, Any] | None = None  # everything read for the row's keys ("both" directions too); None: = value

    @property
    def says(self) -> bool:
        return self.status != "missing" and bool(self.value)

    def shown(self, keys: Sequence[str] | None = None) -> str:
        """The values as one short string (``keys``: only those), "not stated" when there are none."""
        read = self.value if self.read is None else self.read
        keys = [k for k in (keys or read) if read.get(k) is not None]
        if read.get("scheme") == "floor" and "floor" in keys:  # "floor 16 nats", not "floor 16 nats" twice
            keys = [k for k in keys if k != "scheme"]
        parts = [_show(k, read[k]) for k in keys]
        return " ".join(p for p in parts if p) or "not stated"

    def to_json(self) -> dict[str, Any]:
        read = self.value if self.read is None else self.read
        return {"status": self.status, "value": dict(read), "compared": dict(self.value),
                "evidence": [e.to_json() for e in self.evidence]}


@dataclass(frozen=True)
class Row:
    rule: SameQuantityRule
    cells: tuple[Cell, ...]
    verdict: RowVerdict
    differing: tuple[str, ...] = ()  # value keys whose values differ (verdict "differs")
    silent: tuple[int, ...] = ()  # columns that do not say (verdict "unknown")
    flag: str | None = None  # calibration that overlaps the evaluation text ({} for the columns' names)
    flagged: tuple[int, ...] = ()  # the columns the flag is about

    @property
    def detail(self) -> str:
        """"BF16 vs Q8_0" for a difference (distinct values in column order), "" otherwise."""
        if self.verdict != "differs":
            return ""
        seen: list[str] = []
        for c in self.cells:
            s = c.shown(self.differing)
            if c.says and s not in seen:
                seen.append(s)
        if len(seen) > DETAIL_VALUES:  # a sentence, not a list of every column's value
            return " vs ".join(seen[:DETAIL_VALUES - 1]) + f" vs ... vs {seen[-1]} ({len(seen)} values)"
        return " vs ".join(seen)


@dataclass(frozen=True)
class Verdict:
    names: tuple[str, ...]
    rows: tuple[Row, ...]
    overall: Overall
    reasons: tuple[str, ...]  # why not comparable / what is unknown
    caveats: tuple[str, ...]  # rows that may differ only with a caveat, and do
    flags: tuple[str, ...]  # calibration overlapping the evaluation text

    @property
    def comparable(self) -> bool:
        return self.overall == "comparable"

    @property
    def sentence(self) -> str:
        """The overall verdict in words: "not comparable: different reference (BF16 vs Q8_0) and ..."."""
        if self.overall == "comparable":
            return "comparable" + (f", with caveats: {'; '.join(self.caveats)}" if self.caveats else "")
        return f"{self.overall}: {'; '.join(self.reasons)}"


def readings_key(readings: Mapping[int, DisclosureReading]) -> str:
    """Equal for numbers that read the same on every disclosure (evidence aside): one column."""
    return json.dumps({d: [r.status, r.value] for d, r in sorted(readings.items())}, sort_keys=True, default=str)


def cell_of(rule: SameQuantityRule, reading: DisclosureReading | None) -> Cell:
    if reading is None:
        return Cell("missing", {})
    # a value that names no single quantity ("both" directions, "p99.9+mean") says nothing about this number
    read = {k: reading.value[k] for k in rule.keys if reading.value.get(k) is not None}
    value = {k: v for k, v in read.items() if normalise(rule.row, k, v) is not None}
    return Cell(reading.status, value, reading.evidence, read if read != value else None)


def compare_readings(names: Sequence[str], readings: Sequence[Mapping[int, DisclosureReading]], *,
                     one_card: bool = False) -> Verdict:
    """The comparability table of the numbers ``names`` (one readings mapping each, D1–D9).

    ``one_card``: the numbers come from one card, which presents them as measured together; a
    disclosure it gives for none of them is the same unknown for all (a caveat, not "cannot tell"),
    while one it gives for some numbers and not others still leaves the comparison open."""
    if len(names) != len(readings):
        raise ValueError("one name per readings mapping")
    rows = tuple(_row(rule, tuple(cell_of(rule, r.get(rule.disclosure)) for r in readings)) for rule in RULES)
    reasons, caveats = [], []
    differs = [r for r in rows if r.verdict == "differs" and r.rule.kind == "must-equal"]
    unknown = [r for r in rows if r.verdict == "unknown" and r.rule.kind == "must-equal"]
    if one_card:
        # a card's mean and its median are shown side by side, not ranked against each other
        several = [r for r in differs if r.rule.row == "statistic"]
        differs = [r for r in differs if r not in several]
        caveats += [f"the card gives several statistics ({r.detail}): compare like with like" for r in several]
        quiet = [r for r in rows if r.verdict == "unknown" and r.rule.kind != "free" and len(r.silent) == len(names)]
        unknown = [r for r in unknown if r not in quiet]
        if quiet:
            caveats.append(f"the card does not say {_or([r.rule.asks for r in quiet])} for any of its numbers "
                           "(the same unknown for all; another card's numbers cannot be set beside them)")
    if differs:
        overall: Overall = "not comparable"
        reasons.append("different " + _and([f"{r.rule.row} ({r.detail})" for r in differs]))
    elif unknown:
        overall = "cannot tell"
        for i, name in enumerate(names):
            asks = [r.rule.asks for r in unknown if i in r.silent]
            if asks:
                reasons.append(f"{name} does not say {_or(asks)}")
    else:
        overall = "comparable"
    for r in rows:
        if r.rule.kind == "caveat" and r.verdict == "differs":
            why = "a cross-stack difference is part of each number" if r.rule.row == "runtime" else (
                "the intervals are not equally wide for the same data")
            caveats.append(f"{r.rule.row} differs ({r.detail}): {why}")
        elif r.rule.kind == "caveat" and r.verdict == "unknown" and overall == "comparable" and not (
                one_card and len(r.silent) == len(names)):
            caveats.append(f"{r.rule.row} not stated for {', '.join(names[i] for i in r.silent)}")
    flags = tuple(r.flag.format(", ".join(names[i] for i in r.flagged)) for r in rows if r.flag)
    return Verdict(tuple(names), rows, overall, tuple(reasons), tuple(caveats), flags)


def _row(rule: SameQuantityRule, cells: tuple[Cell, ...]) -> Row:
    silent = tuple(i for i, c in enumerate(cells) if not _decidable(rule, c))
    verdict: RowVerdict = "same"
    differing: list[str] = []
    # a pair's verdict depends only on the two cells' values: compare each distinct value once (a card's
    # numbers mostly share a row's value, so n columns are not n² comparisons)
    distinct = list({json.dumps(c.value, sort_keys=True, default=str): c for c in cells}.values())
    for a, b in combinations(range(len(distinct)), 2):
        v, keys = _pair(rule, distinct[a], distinct[b])
        differing += [k for k in keys if k not in differing]
        verdict = max(verdict, v, key=_ORDER.__getitem__)
    if verdict != "differs" and silent:
        verdict = "unknown"
    flag = None
    if rule.row == "calibration":
        over = [i for i, c in enumerate(cells) if c.value.get("overlaps") is True]
        if over:
            flag = "calibration overlaps the evaluation text ({}): that candidate was tuned on the text it is scored on"
    return Row(rule, cells, verdict, tuple(differing) if verdict == "differs" else (), silent, flag,
               tuple(over) if flag else ())


def _decidable(rule: SameQuantityRule, c: Cell) -> bool:
    if not c.says:
        return False
    if rule.row == "text" and c.value.get("sha256"):
        return True
    if rule.row == "calibration":
        return c.value.get("none") is True or c.value.get("dataset") is not None
    if rule.row == "reference" and c.value.get("revision") and c.value.get("dtype"):
        return True
    return all(c.value.get(k) is not None for k in rule.needs)


def _pair(rule: SameQuantityRule, a: Cell, b: Cell) -> tuple[RowVerdict, list[str]]:
    differs, compatible, unknown = [], False, False
    for key in rule.keys:
        va, vb = a.value.get(key), b.value.get(key)
        if va is None or vb is None:
            unknown |= key in rule.needs
            continue
        na, nb = normalise(rule.row, key, va), normalise(rule.row, key, vb)
        if na != nb:
            differs.append(key)
        elif va != vb:
            compatible = True
    same_pin = {"reference": "revision", "text": "sha256"}.get(rule.row)
    if same_pin and same_pin not in differs and a.value.get(same_pin) and b.value.get(same_pin):
        # pinned to the same content: names that differ are two names of one thing
        compatible |= bool({"repo", "name"} & set(differs))
        differs = [k for k in differs if k not in ("repo", "name")]
        unknown = False
    if rule.row == "direction" and "unit" in differs:  # bits vs nats: the same quantity, ln 2 apart
        differs.remove("unit")
        compatible = True
    if differs:  # shown with what only one side gives ("full vs top-k k=20")
        one_side = [k for k in rule.keys if (a.value.get(k) is None) != (b.value.get(k) is None)]
        return "differs", [k for k in rule.keys if k in differs or k in one_side]
    if unknown:
        return "unknown", []
    return ("compatible" if compatible else "same"), []


def _show(key: str, value: Any) -> str:
    if value is True:
        return {"none": "none", "overlaps": "overlaps eval text", "quantized": "(quantized)",
                "chat_template": "chat template"}.get(key, key)
    if value is False:
        return {"chat_template": "raw", "overlaps": "no overlap"}.get(key, "")
    if key in ("revision", "sha256") and isinstance(value, str) and len(value) > 12:
        return f"@{value[:12]}" if key == "revision" else f"sha256:{value[:12]}"
    if key == "k":
        return f"k={value}"
    if key == "floor":
        return f"floor {value} nats"
    if key == "count":
        return f"{value:,} positions" if isinstance(value, int) else str(value)
    if key == "chunks":
        return f"x{value}"
    if key == "stride":
        return f"stride {value}"
    return str(value)


def _and(items: list[str]) -> str:
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " and " + items[-1]


def _or(items: list[str]) -> str:
    # "which text, context length or positions": in longer lists a "which" after a "which" is left out
    items = [i[len("which "):] if n and len(items) > 2 and i.startswith("which ") and items[n - 1].startswith("which ") else i
             for n, i in enumerate(items)]
    return items[0] if len(items) == 1 else ", ".join(items[:-1]) + " or " + items[-1]
