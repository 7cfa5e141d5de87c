"""The outputs of ``kldcard comparable``: a text table, JSON (every row with its evidence) and a
Markdown table to paste into a Hub discussion.

Everything a card wrote passes through :func:`safe` first: no control, bidi or other non-printing
character from a card reaches a terminal, a JSON consumer or a discussion.
"""

from __future__ import annotations

import json
from typing import Any

from kldcard.comparable.numbers import Number
from kldcard.comparable.table import Column, Comparison, to_json

CELL = 34  # characters of a text cell
FORMATS = ("text", "json", "markdown")


def safe(text: Any, limit: int | None = None) -> str:
    """``text`` on one line with every non-printing character (C0/C1 controls, bidi marks, zero-width
    and line/paragraph separators) replaced by a space; cut at ``limit`` characters."""
    flat = " ".join("".join(ch if ch.isprintable() else " " for ch in str(text)).split())
    return flat if limit is None or len(flat) <= limit else flat[: limit - 1] + "…"


def _safe_json(data: Any) -> Any:
    if isinstance(data, str):
        return safe(data)
    if isinstance(data, dict):
        return {safe(k): _safe_json(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_safe_json(v) for v in data]
    return data


def render(cmp: Comparison, fmt: str) -> str:
    if fmt == "json":
        return json.dumps(_safe_json(to_json(cmp)), indent=2, ensure_ascii=False) + "\n"
    if fmt == "markdown":
        return markdown(cmp)
    return text(cmp)


def _cell(cmp: Comparison, row: int, col: int) -> str:
    cell = cmp.verdict.rows[row].cells[col]
    shown = cell.shown()
    if cell.status == "inferred":
        shown += " (inferred)"
    elif cell.status == "incomplete" and cell.says:
        shown += " (incomplete)"
    return shown


def _what(n: Number) -> str:
    where = {"block": "kld_evaluation block", "prose": "prose", "results": "kldcard results"}[n.kind]
    line = f", line {n.line}" if n.line else ""
    return f"{where}{line}"


def _legend(c: Column) -> str:
    kinds = sorted({_what(n).split(",")[0] for n in c.numbers})
    line = f" line {c.numbers[0].claim_line or c.numbers[0].line}" if c.numbers[0].kind == "prose" else ""
    return f"{c.source}{line} ({', '.join(kinds)}): {c.numbers_shown}"


def _unread(cmp: Comparison) -> list[str]:
    return [f"{name} {u.shown()}; left out of the comparison" for name, u in cmp.unreadable]


def text(cmp: Comparison) -> str:
    v = cmp.verdict
    out = []
    for c in cmp.columns:
        out.append(f"{safe(c.name)}  {safe(_legend(c), 160)}")
        out.append(f"{' ' * len(c.name)}  {safe(c.numbers[0].what, 200)}")
    out += [f"not read: {safe(line, 300)}" for line in _unread(cmp)]
    head = ["", *(c.name for c in cmp.columns), "verdict"]
    body = []
    for i, r in enumerate(v.rows):
        label = f"D{r.rule.disclosure} {r.rule.label}"
        body.append([label, *(safe(_cell(cmp, i, j), CELL) for j in range(len(cmp.columns))),
                     r.verdict + ("" if r.rule.kind == "must-equal" else f" ({r.rule.kind})")])
    widths = [max(len(row[k]) for row in [head, *body]) for k in range(len(head))]
    out.append("")
    for row in [head, *body]:
        out.append("  ".join(cell.ljust(w) for cell, w in zip(row, widths)).rstrip())
    out.append("")
    out.append(f"verdict: {safe(v.sentence)}")
    out += [f"flag: {safe(f)}" for f in v.flags]
    out += [f"value: {safe(f)}" for f in cmp.values]
    out.append(f"ranking: {safe(cmp.advice.message)}")
    out += [f"  {safe(line)}" for line in cmp.advice.lines]
    return "\n".join(out) + "\n"


def _md(text: Any, limit: int | None = 60) -> str:
    return safe(text, limit).replace("\\", "\\\\").replace("|", "\\|").replace("`", "'").replace("<", "&lt;")


def markdown(cmp: Comparison) -> str:
    v = cmp.verdict
    out = [f"**Are these KLD numbers comparable?** {_md(v.sentence, None)}", ""]
    out += [f"- **{c.name}**: {_md(_legend(c), 200)}; {_md(c.numbers[0].what, 200)}" for c in cmp.columns]
    out += [f"- not read: {_md(line, 300)}" for line in _unread(cmp)]
    out += ["", "| disclosure | " + " | ".join(c.name for c in cmp.columns) + " | verdict |",
            "|---|" + "---|" * len(cmp.columns) + "---|"]
    for i, r in enumerate(v.rows):
        kind = "" if r.rule.kind == "must-equal" else f" ({r.rule.kind})"
        verdict = f"**{r.verdict}**" if r.verdict in ("differs", "unknown") and r.rule.kind == "must-equal" else r.verdict
        cells = " | ".join(_md(_cell(cmp, i, j)) for j in range(len(cmp.columns)))
        out.append(f"| D{r.rule.disclosure} {r.rule.label} | {cells} | {verdict}{kind} |")
    out.append("")
    out += [f"> flag: {_md(f, None)}" for f in v.flags]
    out += [f"> value: {_md(f, None)}" for f in cmp.values]
    out.append(f"Ranking: {_md(cmp.advice.message, None)}")
    out += [f"- {_md(line, None)}" for line in cmp.advice.lines]
    out += ["", "_Rules: when two KLD numbers are the same quantity (kldcard, docs/comparable.md)._"]
    return "\n".join(out) + "\n"
