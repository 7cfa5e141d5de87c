"""Filling a scaffolded block's TODO placeholders the way an author would, for the round-trip test
(tests/test_lint_scaffold.py): each placeholder from the compliant example card's block at the same
place (its siblings too, as an author completes a section), a quoted printed number as that number,
and the counts made consistent with the context the card states."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from kldcard.card.document import read_card
from kldcard.lint.placeholders import is_todo, todo_pointers

COMPLIANT = Path(__file__).parent.parent / "examples" / "cards" / "compliant.md"
# what the compliant block does not hold (it measures the full vocabulary)
FALLBACK = {"tail": "lumped into one bucket and renormalised"}
AS_PRINTED = re.compile(r"TODO: (-?\d+(?:\.\d+)?(?:[eE]-?\d+)?) as printed")


def _parts(pointer: str) -> list[str]:
    return [p.replace("~1", "/").replace("~0", "~") for p in pointer.split("/")[1:]]


def _get(node: Any, parts: list[str]) -> Any:
    for part in parts:
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def _compliant_parts(parts: list[str]) -> list[str]:
    out = list(parts)
    if out[:1] == ["candidates"]:
        out[1] = "0"
    return ["runtime" if p == "runtime_changes" else p for p in out]


def fill(block: dict[str, Any]) -> dict[str, Any]:
    """``block`` with every placeholder filled (in place); raises KeyError for one it cannot fill."""
    compliant = read_card(COMPLIANT).metadata["kld_evaluation"]
    for pointer in todo_pointers(block):
        parts = _parts(pointer)
        parent = _get(block, parts[:-1])
        key: Any = int(parts[-1]) if isinstance(parent, list) else parts[-1]
        printed = AS_PRINTED.search(str(parent[key]))
        if printed:
            parent[key] = float(printed.group(1))
            continue
        source = _get(compliant, _compliant_parts(parts[:-1]))
        parent[key] = source[key] if key in source else FALLBACK[key]
        if isinstance(parent, dict) and isinstance(source, dict) and not parts[-2:-1] == ["runtime_changes"]:
            for k, v in source.items():  # the section's other fields, as its author would give them
                parent.setdefault(k, v)
    ctx = block["context"]
    scored = ctx["n_ctx"] * ctx["n_chunks"] // 2
    if block["positions"]["n_scored"] > ctx["n_ctx"] * ctx["n_chunks"]:
        block["positions"]["n_scored"] = scored
    block["aggregation"]["output_ranges"] = [[ctx["n_ctx"] // 2, ctx["n_ctx"]]]
    for cand in block["candidates"]:
        cand["results"]["n_positions"] = block["positions"]["n_scored"]
        cand["results"].pop("ranges", None)
    assert not any(is_todo(v) for v in [block]), "filled"
    return block
