"""The one rule registry.

Every rule has a stable code (``KLD`` + three digits, grouped by hundreds, never reused), a
kebab-case name, a default severity, a one-line message template and ruff-style documentation
(what it does / why is this bad / example / use instead). The registry generates the CLI's
``--select/--ignore`` choices, ``docs/rules/*.md`` and ``.pre-commit-hooks.yaml``.

Groups:
  KLD0xx card structure and front matter
  KLD1xx a missing or incomplete disclosure (KLD101–KLD109, DESIGN.md's table order)
  KLD2xx consistency
  KLD3xx free-form cards (claims in prose and tables)
Rules are defined in :mod:`kldcard.lint.rules` (one :class:`~kldcard.lint.rule.RuleSet` per module).
"""

from __future__ import annotations

from kldcard.lint.rule import GROUPS, Rule
from kldcard.lint.rules import collect, comparability, directives, draft, prose, structured

__all__ = ["GROUPS", "RULES", "Rule", "all_rules", "select_codes"]

RULES: dict[str, Rule] = collect(directives.RULES, draft.RULES, prose.RULES, structured.RULES, comparability.RULES)


def all_rules() -> dict[str, Rule]:
    """All rules, sorted by code."""
    return RULES


def select_codes(select: list[str] | None, ignore: list[str] | None) -> set[str]:
    """Codes enabled by ``--select``/``--ignore`` (each entry a code or a prefix such as ``KLD1``)."""
    codes = set(all_rules())
    known_prefixes = {c[:n] for c in codes for n in range(3, 7)}
    for entry in [*(select or []), *(ignore or [])]:
        if entry.upper() not in known_prefixes and entry.upper() != "ALL":
            from kldcard.errors import UsageError

            raise UsageError(f"unknown rule code or prefix {entry!r}; see `kldcard lint --list-rules`")
    if select:
        codes = {c for c in codes if any(s.upper() == "ALL" or c.startswith(s.upper()) for s in select)}
    if ignore:
        codes = {c for c in codes if not any(c.startswith(i.upper()) for i in ignore)}
    return codes
