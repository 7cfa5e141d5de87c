"""Numbers of a card's ``kld_evaluation`` block: one per candidate, its readings taken from the block.

The block is read as the raw mapping (a block that does not validate still says what it says; what
it leaves out is ``missing``). Evidence is the JSON pointer into the front matter, with its line.
The number is the candidate's ``results.kld.mean``: forward KL(P_ref ‖ P_cand), nats.
"""

from __future__ import annotations

from typing import Any

from kldcard.card.document import Card
from kldcard.comparable.numbers import Interval, Number
from kldcard.lint.block_reading import block_readings
from kldcard.lint.structured import pointer_of
from kldcard.schema_rules import expand_runtime_changes


def _map(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def _scalar(x: Any) -> Any:
    return x if isinstance(x, (str, int, float, bool)) else None


def block_numbers(card: Card, source: str) -> list[Number]:
    """One :class:`Number` per candidate of the card's block (none when the card has no block)."""
    raw = card.metadata.get("kld_evaluation")
    if not isinstance(raw, dict):
        return []
    block = _map(expand_runtime_changes(raw))
    out = []
    cands = block.get("candidates") if isinstance(block.get("candidates"), list) else []
    for i, cand in enumerate(cands):
        cand = _map(cand)
        kld = _map(_map(cand.get("results")).get("kld"))
        mean = kld.get("mean")
        readings = block_readings(card, block, i)
        unc = _map(_map(block.get("aggregation")).get("uncertainty"))
        interval = None
        if isinstance(kld.get("ci_low"), (int, float)) and isinstance(kld.get("ci_high"), (int, float)):
            interval = Interval(float(kld["ci_low"]), float(kld["ci_high"]), _scalar(unc.get("level")),
                                _scalar(unc.get("method")))
        line, _ = card.locate(pointer_of("kld_evaluation", "candidates", i))
        out.append(Number(source, "block", str(_scalar(cand.get("name")) or f"candidate {i + 1}"),
                          float(mean) if isinstance(mean, (int, float)) else None, readings,
                          line=line, interval=interval))
    return out
