"""What a lint rule is: its code, name, severity and ruff-style documentation.

Rule modules (:mod:`kldcard.lint.rules`) define rules with a :class:`RuleSet`; the registry collects
the sets. Nothing here imports a rule module, so the imports point one way.
"""

from __future__ import annotations

from dataclasses import dataclass

from kldcard.lint.findings import Severity

GROUPS = {
    "KLD0": "card structure and front matter",
    "KLD1": "missing or incomplete disclosure",
    "KLD2": "consistency",
    "KLD3": "free-form cards",
}


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    severity: Severity
    summary: str  # one line, used as SARIF shortDescription
    what: str
    why: str
    example: str  # a card fragment that triggers the rule
    fix: str  # "Use instead": the same fragment, corrected

    @property
    def group(self) -> str:
        return GROUPS[self.code[:4]]


class RuleSet:
    """The rules one module defines, in definition order; codes are unique across all sets (checked by
    the registry)."""

    def __init__(self) -> None:
        self.rules: dict[str, Rule] = {}

    def rule(self, **kwargs: str) -> Rule:
        r = Rule(**kwargs)  # type: ignore[arg-type]
        if r.code in self.rules:
            raise ValueError(f"duplicate rule code {r.code}")
        self.rules[r.code] = r
        return r
