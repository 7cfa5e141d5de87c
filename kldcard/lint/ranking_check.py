"""KLD212: a card that ranks KLD numbers which are not the same quantity.

A card with a ``kld_evaluation`` block: the candidates of ``comparison.ranking``, read from the block
(:mod:`kldcard.lint.block_reading`). A free-form card: every prose number with its own readings
(:mod:`kldcard.lint.number_readings`), only when the card uses ranking words; numbers are compared
within each statistic (a table's mean and p99 columns are shown side by side, not ranked against each
other). The same-quantity rules and verdicts are :mod:`kldcard.lint.quantity` and
:mod:`kldcard.lint.quantity_verdict`.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from typing import Any

from kldcard.card.document import Card
from kldcard.lint.block_reading import block_readings
from kldcard.lint.findings import Finding
from kldcard.lint.markdown import Doc
from kldcard.lint.number_readings import is_uncertainty, number_readings
from kldcard.lint.quantity import statistic
from kldcard.lint.quantity_verdict import compare_readings, readings_key
from kldcard.lint.reading import ClaimReading, DisclosureReading
from kldcard.lint.structured import pointer_of
from kldcard.schema_rules import expand_runtime_changes

CODE = "KLD212"
RANKING = re.compile(
    r"\b(?:best|worst|rank(?:ed|ing|s)?|winners?|wins|beats?|outperform\w*|(?:better|worse) than|closest|"
    r"lowest (?:kld|kl|mean)|lower (?:is|=) (?:better|closer)|sorted by|top pick|pick the one)\b",
    re.IGNORECASE,
)


def check_ranking(card: Card, doc: Doc, readings: list[ClaimReading],
                  enabled: set[str] | None = None) -> list[Finding]:
    """KLD212 findings of ``card`` (``doc``: its body scanned; ``readings``: its claims' readings, as the
    runner's one analysis read them; the reader itself is not imported here, so that lint loads it only
    for a card whose prose makes a claim)."""
    if enabled is not None and CODE not in enabled:
        return []
    raw = card.metadata.get("kld_evaluation")
    if isinstance(raw, dict):
        return _block(card, raw)
    if not RANKING.search(doc.text):
        return []
    return _prose(card, readings)


def _block(card: Card, raw: dict[str, Any]) -> list[Finding]:
    block = expand_runtime_changes(raw)
    comparison = block.get("comparison") if isinstance(block.get("comparison"), dict) else {}
    ranking = comparison.get("ranking") if isinstance(comparison.get("ranking"), list) else []
    cands = block.get("candidates") if isinstance(block.get("candidates"), list) else []
    # names as YAML gave them: only strings name a candidate (a list or mapping there is a schema finding)
    index = {c.get("name"): i for i, c in enumerate(cands) if isinstance(c, dict) and isinstance(c.get("name"), str)}
    ranked = [e.get("name") for e in ranking if isinstance(e, dict) and isinstance(e.get("name"), str)
              and e.get("name") in index]
    if len(ranked) < 2:
        return []
    verdict = compare_readings(ranked, [block_readings(card, block, index[n]) for n in ranked], one_card=True)
    if verdict.overall != "not comparable":
        return []
    ptr = pointer_of("kld_evaluation", "comparison", "ranking")
    line, col = card.locate(ptr)
    return [Finding(card.path, line, col, CODE, "warning", f"the ranking puts side by side candidates that are "
                    f"not the same quantity: {verdict.reasons[0]}; rank only candidates measured the same way", ptr)]


def _prose(card: Card, claims: list[ClaimReading]) -> list[Finding]:
    lines = card.text.splitlines()
    by_stat: dict[Any, dict[str, tuple[int, int, dict[int, DisclosureReading]]]] = {}
    for claim in claims:
        for n in claim.numbers:
            if 1 <= n.line <= len(lines) and is_uncertainty(lines[n.line - 1], n):
                continue  # the "± x" of the number before it
            readings = number_readings(claim, n, lines)
            stat = readings.get(9).value.get("statistic") if readings.get(9) else None
            by_stat.setdefault(statistic(stat), {}).setdefault(readings_key(readings), (n.line, n.column, readings))
    out = []
    for groups in by_stat.values():
        if len(groups) < 2:
            continue
        cols = list(groups.values())
        names = [f"line {line}:{col}" for line, col, _ in cols]
        verdict = compare_readings(names, [r for _, _, r in cols], one_card=True)
        if verdict.overall == "not comparable":
            line, col, _ = cols[1]
            out.append(Finding(card.path, line, col, CODE, "warning", "the card ranks KLD numbers that are not the "
                               f"same quantity: {verdict.reasons[0]} (numbers at {', '.join(names)}); rank only "
                               "numbers measured the same way"))
    return out
