"""Lint results, kept apart from reporters (which only format them)."""

from __future__ import annotations

import hashlib
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any, Literal

if TYPE_CHECKING:
    from kldcard.lint.reading import ClaimReading

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
    # What the finding is about, whitespace-normalised: the claim's sentence (or table row) for body
    # findings, ``pointer=value`` for front-matter ones. Baselines hash it instead of line numbers,
    # which move whenever a card is edited. Filled in by the runner; "" when unknown.
    text: str = field(default="", compare=False)
    fixable: bool = field(default=False, compare=False)  # ``kldcard lint --fix`` resolves it
    # For a verdict on a free-form card's disclosure (KLD30x, KLD33x): the reading it was reached
    # from (:meth:`kldcard.lint.reading.DisclosureReading.to_json`), so that a reviewer can check it.
    reading: dict[str, Any] | None = field(default=None, compare=False)

    def to_dict(self) -> dict[str, object]:
        return asdict(self)

    @property
    def fingerprint(self) -> str:
        """16 hex digits of sha256 over rule and :attr:`text` (line-independent; see baseline)."""
        subject = self.text or f"{self.pointer}|{self.message}"
        return hashlib.sha256(f"{self.rule_id}\0{subject}".encode()).hexdigest()[:16]


@dataclass
class LintResult:
    """Findings of one lint run over one or more cards."""

    findings: list[Finding] = field(default_factory=list)
    files: list[str] = field(default_factory=list)
    suppressed: int = 0  # findings hidden by inline directives
    sources: dict[str, str] = field(default_factory=dict)  # file -> card text (for the ``full`` format)
    # cards that could not be read or fetched (path or hf:// spec -> the one-line reason); the CLI
    # goes on with the others and exits 2 at the end; junit and gitlab reports carry them too
    unreadable: dict[str, str] = field(default_factory=dict)
    # file -> the reading of each KLD claim of a card without a kld_evaluation block (kldcard.lint.reader)
    readings: dict[str, list[ClaimReading]] = field(default_factory=dict)

    def extend(self, other: LintResult) -> None:
        self.findings.extend(other.findings)
        self.files.extend(other.files)
        self.suppressed += other.suppressed
        self.sources.update(other.sources)
        self.unreadable.update(other.unreadable)
        self.readings.update(other.readings)

    @property
    def ok(self) -> bool:
        return not self.findings

    def worst(self) -> int:
        return max((SEVERITY_RANK[f.severity] for f in self.findings), default=-1)
