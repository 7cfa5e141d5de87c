"""Lint cards: read, run the structured and prose checkers, apply suppressions, collect findings.

This is the library entry point behind ``kldcard lint`` (:func:`lint_card`, :func:`lint_paths`).
A card without a ``kld_evaluation`` block and without KLD claims in its prose has no findings.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import replace
from typing import Any

from kldcard.card import hub
from kldcard.card.document import Card, parse_card, read_bytes
from kldcard.card.fixes import Fix, apply_fixes
from kldcard.lint.config import LintConfig
from kldcard.lint.fixes import plan
from kldcard.lint.findings import Finding, LintResult, merge_groups
from kldcard.lint.markdown import Doc, scan
from kldcard.lint.placeholders import todo_pointers
from kldcard.lint.prose import analyse, check_prose
from kldcard.lint.ranking_check import check_ranking
from kldcard.lint.registry import select_codes
from kldcard.lint.structured import check_structured, unique_sorted
from kldcard.lint.suppressions import parse_directives, suppress

__all__ = ["enabled_codes", "fix_text", "lint_card", "lint_paths", "lint_text"]


def enabled_codes(
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    config: LintConfig | None = None,
    *,
    extend_select: list[str] | None = None,
    file: str | None = None,
) -> set[str]:
    """Rule codes in force: ``select`` replaces the config's select, ``extend_select`` and ``ignore``
    add to the config's; for ``file``, the config's per-file ignores apply too."""
    cfg = config or LintConfig()
    base = select if select else cfg.select
    extend = [*cfg.extend_select, *(extend_select or [])]
    ignored = [*cfg.ignore, *(ignore or []), *(cfg.ignored_for(file) if file else [])]
    codes = select_codes(base, ignored)
    if extend:
        codes |= select_codes(extend, ignored)
    return codes


def lint_card(
    path_or_url: str | os.PathLike[str],
    *,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    extend_select: list[str] | None = None,
    config: LintConfig | None = None,
    local_files_only: bool = False,
    cache: hub.CardCache | None = None,
) -> LintResult:
    """Lint one card: a local file or ``hf://OWNER/NAME[@REVISION]``.

    ``select``/``ignore`` take rule codes or prefixes (``KLD1``). Raises
    :class:`~kldcard.errors.InputError` when the card cannot be read (missing, a directory, binary,
    not UTF-8, malformed YAML, front matter that is not a mapping) and
    :class:`~kldcard.errors.UsageError` for an unknown rule code. The file is only read, never written.
    """
    name = str(path_or_url)
    limit = (config or LintConfig()).max_card_bytes
    if not hub.is_hub_spec(name):
        enabled = enabled_codes(select, ignore, config, extend_select=extend_select, file=name)
        return lint_text(read_bytes(path_or_url, limit), name, enabled)
    spec = name
    cache = cache or hub.CardCache(local_files_only=local_files_only)
    local, commit = cache.fetch(spec)
    name = f"{hub.parse_spec(spec)}/README.md"
    enabled = enabled_codes(select, ignore, config, extend_select=extend_select, file=name)
    card = parse_card(read_bytes(local, limit), name)
    # the card's sidecar is next to it in the repo: fetched from the same commit, then checked as locally
    side = _hub_sidecar_name(card.metadata)
    if side is not None and enabled & {"KLD011", "KLD012"}:
        card.repo_files[side] = cache.fetch_file(spec, side, commit)
    return _lint_parsed(card, enabled)


def _hub_sidecar_name(metadata: dict[str, Any]) -> str | None:
    """The sidecar a card names (``kld_evaluation.sidecar.file``) when it is a plain path inside the repo."""
    block = metadata.get("kld_evaluation")
    side = block.get("sidecar") if isinstance(block, dict) else None
    file = side.get("file") if isinstance(side, dict) else None
    if not isinstance(file, str) or not file or "\\" in file or file.startswith("/"):
        return None
    parts = file.split("/")
    return None if any(p in ("", ".", "..") for p in parts) else file


def lint_text(data: bytes, name: str, enabled: set[str]) -> LintResult:
    """Lint card bytes already read (``name`` is what findings call the file)."""
    return _lint_parsed(parse_card(data, name), enabled)


def _lint_parsed(card: Card, enabled: set[str]) -> LintResult:
    name = card.path
    findings, block = check_structured(card, enabled)
    doc = scan(card.body, card.body_line)  # one scan (~0.3 s on a 1 MiB card) for the prose checks and the subjects
    report = analyse(card, doc, reading=block is None)  # the claims (and their reading), once
    draft = isinstance(block, dict) and bool(todo_pointers(block))  # placeholders only (KLD013)
    prose = [] if draft else [f for f in check_prose(card, block, enabled, doc, report, merge=False) if f.rule_id in enabled]
    prose += [] if draft else check_ranking(card, doc, report.readings, enabled)
    kept, hidden = suppress(card, _plain_subjects(card, unique_sorted([*findings, *prose]), doc), parse_directives(card),
                            enabled)
    readings = {name: report.readings} if block is None and report.readings else {}
    return LintResult(findings=unique_sorted(_mark_fixable(card, _merged(card, kept, doc))), files=[name],
                      suppressed=hidden, sources={name: card.text}, readings=readings)


def lint_paths(
    paths: Iterable[str | os.PathLike[str]],
    *,
    select: list[str] | None = None,
    ignore: list[str] | None = None,
    extend_select: list[str] | None = None,
    config: LintConfig | None = None,
    local_files_only: bool = False,
) -> LintResult:
    """Lint several cards into one result; stops at the first card that cannot be read (InputError)."""
    total = LintResult()
    for p in paths:
        total.extend(
            lint_card(p, select=select, ignore=ignore, extend_select=extend_select, config=config, local_files_only=local_files_only)
        )
    return total


# --------------------------------------------------------------------------------------------


def _normalise(text: str) -> str:
    return " ".join(text.split())


def _resolve(data: Any, pointer: str) -> tuple[bool, Any]:
    for raw in pointer.split("/")[1:]:
        part = raw.replace("~1", "/").replace("~0", "~")
        if isinstance(data, dict) and part in data:
            data = data[part]
        elif isinstance(data, list) and part.isdigit() and int(part) < len(data):
            data = data[int(part)]
        else:
            return False, None
    return True, data


def _with_subjects(card: Card, findings: list[Finding], doc: Doc, *, skip_groups: bool = False) -> list[Finding]:
    """Each finding with the text it is about (:attr:`Finding.text`): for a front-matter finding its
    pointer and the value there; for a body finding the sentence (or table row) at its position
    (``doc``: the card's body, scanned)."""
    out = []
    for f in findings:
        if skip_groups and f.group:
            out.append(f)
            continue
        if f.pointer:
            found, value = _resolve(card.metadata, f.pointer)
            shown = json.dumps(value, sort_keys=True, ensure_ascii=False, default=str) if found else "<absent>"
            text = f"{f.pointer}={shown}"
        else:
            i = f.line - doc.first_line
            table = next((t for t in doc.tables if t.header <= i <= max([t.header + 1, *t.rows])), None)
            if table is not None:
                # a table claim is its column: the whole table, so that any changed number is new
                text = "\n".join(doc.lines[table.header : max([table.header + 1, *table.rows]) + 1])
            elif 0 <= i < len(doc.lines):
                start, end = doc.sentence_at(doc.starts[i] + min(f.column - 1, len(doc.lines[i])))
                text = doc.text[start:end]
            else:
                text = f.message
        out.append(replace(f, text=_normalise(text)))
    return out


def _plain_subjects(card: Card, findings: list[Finding], doc: Doc) -> list[Finding]:
    """The findings with their subjects, except the members of groups (one per claim: thousands on a
    long card), which get theirs once merged (:func:`_merged`)."""
    return _with_subjects(card, findings, doc, skip_groups=True)


def _merged(card: Card, kept: list[Finding], doc: Doc) -> list[Finding]:
    """Grouped findings merged after suppression (each at its first kept claim), with their subjects."""
    grouped = merge_groups([f for f in kept if f.group])
    return [*(f for f in kept if not f.group), *_with_subjects(card, grouped, doc)]


def _mark_fixable(card: Card, findings: list[Finding]) -> list[Finding]:
    fixes = plan(card, findings)
    if not fixes:
        return findings
    return [replace(f, fixable=True) if any(fx.resolves(f) for fx in fixes) else f for f in findings]


def fix_text(data: bytes, name: str, enabled: set[str], *, max_passes: int = 4) -> tuple[bytes, list[Fix]]:
    """Card bytes with every safe fix for its findings applied, and the fixes (all passes).

    A fix can make another possible (a respelled ``mean: 1e-3`` lets the block validate, and then
    model-index can be regenerated from it), so lint and fix repeat until nothing is left to fix.
    The byte-order mark and line endings are kept; bytes outside the fixed spans are unchanged.
    """
    bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
    applied: list[Fix] = []
    for _ in range(max_passes):
        card = parse_card(data, name)
        findings, block = check_structured(card, enabled)
        doc = scan(card.body, card.body_line)
        draft = isinstance(block, dict) and bool(todo_pointers(block))
        prose = [] if draft else [f for f in check_prose(card, block, enabled, doc, merge=False) if f.rule_id in enabled]
        kept, _ = suppress(card, _plain_subjects(card, unique_sorted([*findings, *prose]), doc), parse_directives(card), enabled)
        planned = plan(card, _merged(card, kept, doc))
        if not planned:
            break
        fixes = [p.fix for p in planned]
        applied += fixes
        data = bom + apply_fixes(card.text, fixes).encode("utf-8")
    return data, applied
