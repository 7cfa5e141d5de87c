"""Lint cards: read, run the structured and prose checkers, collect findings.

This is the library entry point behind ``kldcard lint`` (:func:`lint_card`, :func:`lint_paths`).
A card without a ``kld_evaluation`` block and without KLD claims in its prose has no findings.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from kldcard.card import hub
from kldcard.card.document import parse_card, read_bytes
from kldcard.lint.config import LintConfig
from kldcard.lint.findings import LintResult
from kldcard.lint.prose import check_prose
from kldcard.lint.registry import select_codes
from kldcard.lint.structured import check_structured, unique_sorted

__all__ = ["lint_card", "lint_paths", "enabled_codes"]


def enabled_codes(
    select: list[str] | None = None, ignore: list[str] | None = None, config: LintConfig | None = None
) -> set[str]:
    """Rule codes in force: ``select`` replaces the config's select, ``ignore`` adds to its ignore."""
    cfg = config or LintConfig()
    return select_codes(select if select else cfg.select, [*cfg.ignore, *(ignore or [])])


def lint_card(
    path_or_url: str | os.PathLike[str],
    *,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    config: LintConfig | None = None,
    local_files_only: bool = False,
) -> LintResult:
    """Lint one card: a local file or ``hf://OWNER/NAME[@REVISION]``.

    ``select``/``ignore`` take rule codes or prefixes (``KLD1``). Raises
    :class:`~kldcard.errors.InputError` when the card cannot be read (missing, a directory, binary,
    not UTF-8, malformed YAML, front matter that is not a mapping) and
    :class:`~kldcard.errors.UsageError` for an unknown rule code. The file is only read, never written.
    """
    enabled = enabled_codes(select, ignore, config)
    name = str(path_or_url)
    if hub.is_hub_spec(name):
        local = hub.fetch_card(name, local_files_only=local_files_only)
        name = f"{hub.parse_spec(name)}/README.md"
    else:
        local = path_or_url
    card = parse_card(read_bytes(local), name)
    findings, block = check_structured(card, enabled)
    prose = [f for f in check_prose(card, block, enabled) if f.rule_id in enabled]
    return LintResult(findings=unique_sorted([*findings, *prose]), files=[name])


def lint_paths(
    paths: Iterable[str | os.PathLike[str]],
    *,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    config: LintConfig | None = None,
    local_files_only: bool = False,
) -> LintResult:
    """Lint several cards into one result; stops at the first card that cannot be read (InputError)."""
    total = LintResult()
    for p in paths:
        one = lint_card(p, select=select, ignore=ignore, config=config, local_files_only=local_files_only)
        total.findings.extend(one.findings)
        total.files.extend(one.files)
    return total
