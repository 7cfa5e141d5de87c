"""Lint results, kept apart from reporters (which only format them)."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Literal

Severity = Literal["error", "warning", "info"]
SEVERITY_RANK = {"info": 0, "warning": 1, "error": 2}


@dataclass(frozen=True, order=True)
class Finding:
    """One problem in one card.

    ``pointer`` is an RFC 6901 JSON pointer into the front matter (``/kld_evaluation/context/n_ctx``)
    for structured findings, or ``""`` for findings in the Markdown body. ``line``/``column`` are 1-based.
    """

    file: str
    line: int
    column: int
    rule_id: str
    severity: Severity = field(compare=False)
    message: str = field(compare=False)
    pointer: str = field(default="", compare=False)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


@dataclass
class LintResult:
    """Findings of one lint run over one or more cards."""

    findings: list[Finding] = field(default_factory=list)
    files: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.findings

    def worst(self) -> int:
        return max((SEVERITY_RANK[f.severity] for f in self.findings), default=-1)
