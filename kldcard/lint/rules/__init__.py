"""The rule definitions, one module per group of checks; :mod:`kldcard.lint.registry` collects them."""

from __future__ import annotations

from kldcard.lint.rule import Rule, RuleSet
from kldcard.lint.rules import comparability, directives, draft, prose, structured


def collect(*sets: RuleSet) -> dict[str, Rule]:
    """All rules of ``sets``, sorted by code; a code defined twice is a programming error."""
    out: dict[str, Rule] = {}
    for s in sets:
        for code, r in s.rules.items():
            if code in out:
                raise ValueError(f"duplicate rule code {code}")
            out[code] = r
    return dict(sorted(out.items()))


__all__ = ["collect", "comparability", "directives", "draft", "prose", "structured"]
