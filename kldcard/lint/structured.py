"""Structured checker: validate ``kld_evaluation`` and turn every schema error into a Finding.

A block that :mod:`kldcard.lint.block_check` accepts is valid and needs no pydantic; any other goes to
the schema's models, and every pydantic error becomes one finding (KLD1xx for the disclosure it
belongs to, KLD0xx for structure; :mod:`kldcard.lint.schema_errors`). The consistency rules
(:mod:`kldcard.lint.consistency`) then run on the raw mapping, so an incomplete block still gets its
consistency findings.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from kldcard.card.document import Card
from kldcard.lint import block_check
from kldcard.lint.consistency import check_consistency
from kldcard.lint.placeholders import todo_pointers
from kldcard.lint.findings import Finding
from kldcard.lint.pointers import BLOCK_KEY, pointer_of, yaml_type
from kldcard.lint.registry import RULES
from kldcard.schema_rules import expand_runtime_changes


def finding(card: Card, code: str, message: str, pointer: str, enabled: set[str] | None) -> Finding | None:
    """A Finding for ``code`` located at ``pointer`` (or None when the rule is not enabled)."""
    if enabled is not None and code not in enabled:
        return None
    message = one_line(message)
    if pointer.startswith("#L"):  # a body finding: a line in the Markdown, no JSON pointer
        line, col, pointer = int(pointer[2:]), 1, ""
    else:
        line, col = card.locate(pointer) if pointer else (1, 1)
    return Finding(card.path, line, col, code, RULES[code].severity, message, pointer)


def unique_sorted(findings: Iterable[Finding]) -> list[Finding]:
    """Findings without exact duplicates, ordered by file, line, column, rule, pointer, message.

    (``Finding`` equality ignores message and pointer, so a set would merge two different findings
    of one rule at one place, e.g. two missing keys of the same mapping.)
    """
    by_key = {(f.file, f.line, f.column, f.rule_id, f.pointer, f.message): f for f in findings}
    return [by_key[k] for k in sorted(by_key)]


def one_line(text: str) -> str:
    """``text`` with line breaks and other control characters escaped (keys can contain anything)."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _resolve_pointer(raw: dict[str, Any], pointer: str) -> Any:
    node: Any = {BLOCK_KEY: raw}
    for part in pointer.split("/")[1:]:
        part = part.replace("~1", "/").replace("~0", "~")
        node = node[int(part)] if isinstance(node, list) else node[part]
    return node


def check_structured(card: Card, enabled: set[str] | None = None) -> tuple[list[Finding], Any]:
    """Findings for the card's front matter, and the block for the prose checker.

    The second value is the block as read (a mapping, or whatever YAML gave) when there is one, and
    None when there is none. A draft block (TODO placeholders, ``kldcard lint --fix --scaffold``)
    gets only KLD013, one per placeholder.
    """
    out: list[Finding | None] = []
    raw = card.metadata.get(BLOCK_KEY)
    block: Any = None
    if BLOCK_KEY in card.metadata:
        if not isinstance(raw, dict):
            kind = "empty" if raw is None else f"a {yaml_type(raw)}"
            out.append(
                finding(
                    card,
                    "KLD001",
                    f"kld_evaluation is {kind}, not a mapping of the nine disclosures",
                    pointer_of(BLOCK_KEY),
                    enabled,
                )
            )
        elif todo_pointers(raw):  # a draft (kldcard lint --fix --scaffold): its placeholders, nothing else
            for p in todo_pointers(raw, pointer_of(BLOCK_KEY)):
                shown = one_line(str(_resolve_pointer(raw, p)))[:120]
                out.append(finding(card, "KLD013", f"kld_evaluation placeholder {p}: {shown}", p, enabled))
            return unique_sorted(f for f in out if f is not None), raw
        else:
            block = raw
            if not block_check.accepts(raw):
                # Only now pay for pydantic (about half of a one-card lint): its errors are the findings.
                from kldcard.lint.schema_errors import validation_findings

                out.extend(finding(card, c, m, p, enabled) for c, m, p in validation_findings(raw))
    # a compact block's candidates state only runtime_changes: the checks see the full runtime
    out.extend(finding(card, c, m, p, enabled) for c, m, p in check_consistency(card, expand_runtime_changes(raw)))
    return unique_sorted(f for f in out if f is not None), block
