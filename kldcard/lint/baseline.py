"""Baselines: accept today's findings, fail only on new ones (``--write-baseline`` / ``--baseline``).

An entry is keyed by file, rule and :attr:`~kldcard.lint.findings.Finding.fingerprint` (a hash of
the normalised text the finding is about: the claim's sentence, or a front-matter pointer and its
value), never by line number, which moves whenever a card is edited. Moving a claim keeps it
baselined; changing its number makes it a new finding. Entries carry a count, so a second
identical finding in the same file is new.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from kldcard import __version__
from kldcard.errors import InputError, UsageError
from kldcard.files import loads_json, read_text
from kldcard.lint.findings import Finding, LintResult

FORMAT = "kldcard-baseline/1"

Key = tuple[str, str, str]  # (file, rule, fingerprint)


def _key(f: Finding) -> Key:
    return (f.file.replace("\\", "/"), f.rule_id, f.fingerprint)


@dataclass(frozen=True)
class StaleEntry:
    file: str
    rule_id: str
    fingerprint: str
    count: int
    message: str


def baseline_text(result: LintResult) -> str:
    """The baseline file for ``result`` (stable order, one entry per key with its count)."""
    counts = Counter(_key(f) for f in result.findings)
    example = {_key(f): f.message for f in result.findings}
    entries = [
        {"file": k[0], "rule": k[1], "fingerprint": k[2], "count": n, "message": example[k]}
        for k, n in sorted(counts.items())
    ]
    doc = {"format": FORMAT, "kldcard": __version__, "findings": entries}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def load_baseline(path: str | os.PathLike[str]) -> dict[Key, tuple[int, str]]:
    p = Path(path)
    if not p.exists():
        raise UsageError(f"{p}: baseline not found; create it with --write-baseline {p}")
    try:
        # a FIFO or device is refused before it is opened; deep nesting, 1e400, huge integers are one line
        doc = loads_json(read_text(p, "baseline"), f"{p}: cannot read baseline")
    except InputError as exc:
        raise UsageError(str(exc)) from None
    if not isinstance(doc, dict) or doc.get("format") != FORMAT or not isinstance(doc.get("findings"), list):
        raise UsageError(f"{p}: not a kldcard baseline (expected \"format\": \"{FORMAT}\")")
    out: dict[Key, tuple[int, str]] = {}
    for e in doc["findings"]:
        try:
            key = (_string(e["file"]), _string(e["rule"]), _string(e["fingerprint"]))
            count = e.get("count", 1)
            if not isinstance(count, int) or isinstance(count, bool) or not 0 <= count < 2**63:
                raise ValueError(count)
            out[key] = (count, _string(e.get("message", "")))
        except (KeyError, TypeError, ValueError, AttributeError):
            raise UsageError(f"{p}: malformed baseline entry {_short(e)}") from None
    return out


def _string(value: object) -> str:
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise TypeError(type(value).__name__)
    return str(value)


def _short(entry: object) -> str:
    """An entry as JSON, cut to one readable line (it may be large or deep)."""
    text = json.dumps(entry, ensure_ascii=True, default=str)
    return text if len(text) <= 120 else text[:117] + "..."


def apply_baseline(result: LintResult, baseline: dict[Key, tuple[int, str]]) -> tuple[LintResult, list[StaleEntry]]:
    """(``result`` without the baselined findings, the baseline entries of linted files that no
    longer occur)."""
    left = {k: n for k, (n, _) in baseline.items()}
    kept = []
    for f in result.findings:
        k = _key(f)
        if left.get(k, 0) > 0:
            left[k] -= 1
        else:
            kept.append(f)
    linted = {f.replace("\\", "/") for f in result.files}
    stale = [
        StaleEntry(k[0], k[1], k[2], n, baseline[k][1]) for k, n in sorted(left.items()) if n > 0 and k[0] in linted
    ]
    out = LintResult(findings=kept, files=list(result.files), suppressed=result.suppressed, sources=result.sources)
    return out, stale
