"""Numbers of a card's ``kld_evaluation`` block: one per candidate, its readings taken from the block.

Only what the linter accepts is read. A value the linter rejects (its structure and schema checks,
KLD0xx and KLD1xx errors under ``/kld_evaluation``: ``schema_version: 2``, a mean written as the string
``'213e-4'``, a revision that is a branch name, an unknown key) says nothing that can be trusted, and
neither does a candidate without its number (no ``results``): an error inside one candidate leaves
that candidate out, any other leaves out every candidate, each as an
:class:`~kldcard.comparable.numbers.Unreadable` naming the rule. What the block leaves out (a KLD1xx
"missing" error) is read as what it is, "not stated", and so is a scaffold's ``TODO`` placeholder
(KLD013): a must-equal row a side does not state is never ``comparable``.

Evidence is the JSON pointer into the front matter, with its line. The number is the candidate's
``results.kld.mean``: forward KL(P_ref ‖ P_cand), in nats when ``direction.log_base`` is ``e``.
"""

from __future__ import annotations

from typing import Any

from kldcard.card.document import Card
from kldcard.comparable.numbers import Interval, Number, Unreadable
from kldcard.lint.block_reading import block_readings
from kldcard.lint.findings import Finding
from kldcard.lint.structured import check_structured, pointer_of
from kldcard.schema_rules import expand_runtime_changes

BLOCK = "/kld_evaluation"


def _map(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def _scalar(x: Any) -> Any:
    return x if isinstance(x, (str, int, float, bool)) else None


def rejections(card: Card) -> list[Finding]:
    """The linter's errors that reject a value of the card's block, or a candidate's number (structure
    and schema; not an absent disclosure, not placeholders, not the consistency rules, not model-index)."""
    findings, _ = check_structured(card)
    raw = card.metadata.get("kld_evaluation")
    return [f for f in findings if f.severity == "error" and f.rule_id[:4] in ("KLD0", "KLD1")
            and f.rule_id != "KLD013" and (f.pointer == BLOCK or f.pointer.startswith(BLOCK + "/"))
            and (f.rule_id in ALWAYS or _is_number(f.pointer) or _present(raw, f.pointer))]


# not a block of this kldcard (KLD001 not a mapping, KLD003 another schema version), a candidate without results
ALWAYS = frozenset({"KLD001", "KLD003", "KLD006"})


def _is_number(pointer: str) -> bool:
    parts = pointer.split("/")
    return len(parts) > 4 and parts[2] == "candidates" and parts[4] == "results"


def _present(raw: Any, pointer: str) -> bool:
    """True when ``pointer`` names a value the block gives (an error about it is about what it says)."""
    node = raw
    for part in pointer.split("/")[2:]:
        part = part.replace("~1", "/").replace("~0", "~")
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and part.isdigit() and int(part) < len(node):
            node = node[int(part)]
        else:
            return False
    return True


def _scope(f: Finding) -> int | None:
    """The candidate a rejection is about (None: the whole block)."""
    parts = f.pointer.split("/")
    return int(parts[3]) if len(parts) > 3 and parts[2] == "candidates" and parts[3].isdigit() else None


def block_numbers(card: Card, source: str) -> tuple[list[Number], list[Unreadable]]:
    """One :class:`Number` per candidate of the card's block that the linter accepts, and one
    :class:`Unreadable` per candidate it rejects (both empty when the card has no block)."""
    if "kld_evaluation" not in card.metadata:
        return [], []
    raw = card.metadata.get("kld_evaluation")
    errors = rejections(card)
    whole = [f for f in errors if _scope(f) is None]
    if not isinstance(raw, dict):
        return [], [_unreadable(source, "kld_evaluation block", whole)]
    block = _map(expand_runtime_changes(raw))
    cands = block.get("candidates") if isinstance(block.get("candidates"), list) else []
    if not cands and whole:
        return [], [_unreadable(source, "kld_evaluation block", whole)]
    out, unread = [], []
    for i, cand in enumerate(cands):
        cand = _map(cand)
        label = str(_scalar(cand.get("name")) or f"candidate {i + 1}")
        line, _ = card.locate(pointer_of("kld_evaluation", "candidates", i))
        span = card.lines_of(pointer_of("kld_evaluation", "candidates", i))
        mine = whole + [f for f in errors if _scope(f) == i]
        if mine:
            unread.append(_unreadable(source, label, mine, line, span))
            continue
        kld = _map(_map(cand.get("results")).get("kld"))
        mean = kld.get("mean")
        unc = _map(_map(block.get("aggregation")).get("uncertainty"))
        interval = None
        if isinstance(kld.get("ci_low"), (int, float)) and isinstance(kld.get("ci_high"), (int, float)):
            interval = Interval(float(kld["ci_low"]), float(kld["ci_high"]), _scalar(unc.get("level")),
                                _scalar(unc.get("method")))
        # results.kld is in nats when the block says log base e (the only base the schema allows); else unstated
        unit = "nats" if _map(block.get("direction")).get("log_base") == "e" else None
        out.append(Number(source, "block", label, float(mean) if isinstance(mean, (int, float)) else None,
                          block_readings(card, block, i), unit=unit, line=line, interval=interval,
                          span=span))
    return out, unread


def _unreadable(source: str, label: str, errors: list[Finding], line: int | None = None,
                span: tuple[int, int] | None = None) -> Unreadable:
    # the line the rule points at (the candidate's, for an error inside it; else the block's own)
    first = errors[0]
    return Unreadable(source, label, first.line or line, first.rule_id, first.message, len(errors) - 1, span)
