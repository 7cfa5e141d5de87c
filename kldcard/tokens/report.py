"""The parity result: plain data with stable keys, a disclosure view and a terminal view."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

Outcome = Literal["identical", "mismatch", "overridden"]

# Names of the difference classes, in the order the classifier tries them.
KINDS = (
    "chat template",
    "missing BOS",
    "double BOS",
    "EOS",
    "special-token parsing",
    "pre-tokenizer",
    "vocabulary",
    "length",
)


@dataclass
class EngineResult:
    """One engine's tokenization of the text, and how BOS was handled."""

    spec: str
    engine: str  # hf | llama.cpp | mlx
    engine_label: str  # e.g. "transformers 5.24.0"
    n_tokens: int
    bos_id: int | None
    default_adds_bos: bool  # what the engine's default call does on plain text
    bos_handling: str  # what was used for this run
    leading_bos: int  # how many BOS ids the sequence starts with
    parses_special: bool  # special-token strings in the text became special ids
    ids: list[int] = field(repr=False)
    rendered: str | None = field(default=None, repr=False)  # chat mode: the rendered prompt

    @property
    def disclosure_label(self) -> str:
        """Engine, version and the file or folder the tokenizer came from (no local path)."""
        return f"{self.engine_label}: {Path(self.spec.split(':', 1)[1]).name}"


@dataclass
class Mismatch:
    """First difference between the reference engine ``a`` and engine ``b``."""

    position: int
    a: str
    b: str
    kind: str  # one of KINDS
    detail: str
    window_start: int
    ids_a: list[int]
    ids_b: list[int]
    pieces_a: list[str]
    pieces_b: list[str]
    context_before: str
    context_after: str


@dataclass
class ChatDiff:
    """First character where two rendered chat prompts differ."""

    a: str
    b: str
    char: int
    excerpt_a: str
    excerpt_b: str


@dataclass
class ParityReport:
    """Token parity across engines; ``engines[0]`` is the reference the others are compared to."""

    engines: list[EngineResult]
    tokens_checked: int
    outcome: Outcome
    add_bos: str  # auto | yes | no
    special: str  # auto | parse | text
    chat: bool = False
    mismatches: list[Mismatch] = field(default_factory=list)
    chat_diffs: list[ChatDiff] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)

    @property
    def first_mismatch(self) -> Mismatch | None:
        return min(self.mismatches, key=lambda m: m.position, default=None)

    def overridden(self) -> ParityReport:
        """The same report, outcome ``overridden`` (the user chose to capture despite a mismatch)."""
        return dataclasses.replace(self, outcome="overridden")

    def to_disclosure(self) -> dict[str, Any]:
        """The ``schema.TokenizerParity`` dict stored in a capture manifest and a card."""
        return {
            "engines": [e.disclosure_label for e in self.engines],
            "tokens_checked": self.tokens_checked,
            "outcome": self.outcome,
        }

    def to_dict(self, *, include_ids: bool = False) -> dict[str, Any]:
        """JSON-ready dict with stable keys (token arrays only when asked for)."""
        out = dataclasses.asdict(self)
        for e in out["engines"]:
            if not include_ids:
                e.pop("ids")
            if not self.chat:
                e.pop("rendered")
        fm = self.first_mismatch
        out["first_mismatch"] = dataclasses.asdict(fm) if fm else None
        out["disclosure"] = self.to_disclosure()
        return out

    def to_text(self) -> str:
        """Terminal summary: engines, BOS handling, outcome, then each first mismatch."""
        lines = []
        mode = "chat prompt" if self.chat else "text"
        lines.append(
            f"token parity over the {mode}: {self.outcome.upper()} "
            f"({self.tokens_checked} tokens checked; add-bos={self.add_bos}, special={self.special})"
        )
        for e in self.engines:
            bos = "no BOS token" if e.bos_id is None else f"BOS id {e.bos_id}"
            lines.append(
                f"  {e.spec}  [{e.engine_label}]  {e.n_tokens} tokens; {bos}; "
                f"adds BOS by default: {'yes' if e.default_adds_bos else 'no'}; "
                f"used: {e.bos_handling}; special-token strings "
                f"{'parsed' if e.parses_special else 'kept as text'}"
            )
        for d in self.chat_diffs:
            lines.append(f"  rendered chat prompts differ at character {d.char} ({d.a} vs {d.b}):")
            lines.append(f"    {d.a}: {d.excerpt_a!r}")
            lines.append(f"    {d.b}: {d.excerpt_b!r}")
        for m in self.mismatches:
            lines.append(f"  first mismatch {m.a} vs {m.b} at token {m.position}: {m.kind} — {m.detail}")
            lines.append(f"    text: {m.context_before!r} ⟨here⟩ {m.context_after!r}")
            lines.append(f"    {m.a} ids[{m.window_start}:]: {m.ids_a}  pieces: {m.pieces_a}")
            lines.append(f"    {m.b} ids[{m.window_start}:]: {m.ids_b}  pieces: {m.pieces_b}")
        for w in self.warnings:
            lines.append(f"  warning: {w}")
        return "\n".join(lines)
