"""Which findings ``kldcard lint --fix`` can repair, and the fixes that repair them.

The edits themselves are :mod:`kldcard.card.fixes` (text surgery that keeps every other byte);
this module only decides, from a card's findings, which of them to apply: a fix runs only for a
finding of an enabled rule, as ruff does, so ``--select``/``--ignore`` and suppressions limit it.
"""

from __future__ import annotations

from dataclasses import dataclass

from kldcard.card.document import Card
from kldcard.card.fixes import Fix, exponent_fixes, exponent_pointers, marker_fixes, model_index_fix
from kldcard.card.regions import MODEL_INDEX_KEY
from kldcard.lint.findings import Finding

# Rules whose finding a respelled exponent clears: a non-number model-index value (KLD004), a
# results value of the wrong type (KLD007) or a disclosure field of the wrong type (KLD1xx).
_EXPONENT_CODES = ("KLD004", "KLD007", "KLD1")
# Regenerate only where model-index disagrees with the block (a wrong number, no direction); a
# number merely spelled as a YAML 1.1 string is respelled instead.
_DISAGREE_CODES = ("KLD204", "KLD206")
_MODEL_INDEX_CODES = ("KLD004", *_DISAGREE_CODES)


@dataclass(frozen=True)
class PlannedFix:
    fix: Fix
    codes: tuple[str, ...]  # the rules whose findings it clears

    def resolves(self, f: Finding) -> bool:
        if not f.rule_id.startswith(self.codes):
            return False
        if self.fix.pointer:
            return f.pointer == self.fix.pointer or f.pointer.startswith(self.fix.pointer + "/")
        return not f.pointer


def plan(card: Card, findings: list[Finding]) -> list[PlannedFix]:
    """Non-overlapping fixes for ``findings`` of ``card``."""
    out: list[PlannedFix] = []
    under_index = [f for f in findings if f.rule_id in _DISAGREE_CODES and f.pointer.startswith(f"/{MODEL_INDEX_KEY}/")]
    if under_index:
        out += [PlannedFix(fx, _MODEL_INDEX_CODES) for fx in model_index_fix(card.text, card.path)]
    regenerated = bool(out)
    wanted = {f.pointer for f in findings if f.pointer and f.rule_id.startswith(_EXPONENT_CODES)}
    if regenerated:
        wanted = {p for p in wanted if not p.startswith(f"/{MODEL_INDEX_KEY}/")}
    if wanted:
        out += [PlannedFix(fx, _EXPONENT_CODES) for fx in exponent_fixes(card.text, wanted & exponent_pointers(card.text))]
    if any(f.rule_id == "KLD005" for f in findings):
        out += [PlannedFix(fx, ("KLD005",)) for fx in marker_fixes(card.text, len(card.text) - len(card.body))]
    return out
