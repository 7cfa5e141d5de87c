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
Rules are defined in ``rules_*.py`` modules, which call :func:`rule`.
"""

from __future__ import annotations

from dataclasses import dataclass

from .findings import Severity

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


RULES: dict[str, Rule] = {}


def rule(**kwargs: str) -> Rule:
    r = Rule(**kwargs)  # type: ignore[arg-type]
    if r.code in RULES:
        raise ValueError(f"duplicate rule code {r.code}")
    RULES[r.code] = r
    return r


def all_rules() -> dict[str, Rule]:
    """All rules, sorted by code. Importing the rule modules registers them."""
    from . import rules_prose, rules_structured  # noqa: F401  (import registers)

    return dict(sorted(RULES.items()))


def select_codes(select: list[str] | None, ignore: list[str] | None) -> set[str]:
    """Codes enabled by ``--select``/``--ignore`` (each entry a code or a prefix such as ``KLD1``)."""
    codes = set(all_rules())
    known_prefixes = {c[:n] for c in codes for n in range(3, 7)}
    for entry in [*(select or []), *(ignore or [])]:
        if entry.upper() not in known_prefixes and entry.upper() != "ALL":
            from ..errors import UsageError

            raise UsageError(f"unknown rule code or prefix {entry!r}; see `kldcard lint --list-rules`")
    if select:
        codes = {c for c in codes if any(s.upper() == "ALL" or c.startswith(s.upper()) for s in select)}
    if ignore:
        codes = {c for c in codes if not any(c.startswith(i.upper()) for i in ignore)}
    return codes
