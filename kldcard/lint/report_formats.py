"""More report formats: ``full`` (ruff's source excerpt with a caret), ``json-lines``, ``gitlab``
(GitLab Code Quality) and ``junit`` (JUnit XML), plus ruff-style ``--statistics``.

Formatting only, like :mod:`kldcard.lint.reporters`.
"""

from __future__ import annotations

import hashlib
import json
from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from collections import Counter
from typing import Any
from xml.etree import ElementTree as ET

from kldcard.errors import json_printable, printable
from kldcard.lint.findings import Finding, LintResult
from kldcard.lint.registry import all_rules

_NEWLINE = re.compile(r"\r\n|\r|\n")


def render_full(result: LintResult, summary: str) -> str:
    """Each finding, then the card's lines around it with a caret under the column (ruff's ``full``)."""
    out = []
    lines_of = {name: _NEWLINE.split(text) for name, text in result.sources.items()}
    for f in result.findings:
        fix = " [*]" if f.fixable else ""
        out.append(printable(f"{f.file}:{f.line}:{f.column}: {f.rule_id}{fix} {f.message}" + (f" [{f.pointer}]" if f.pointer else "")))
        lines = lines_of.get(f.file)
        if lines and 1 <= f.line <= len(lines):
            first, last = max(1, f.line - 1), min(len(lines), f.line + 1)
            width = len(str(last))
            gutter = " " * width
            out.append(f"{gutter} |")
            for n in range(first, last + 1):
                out.append(f"{n:>{width}} | {printable(lines[n - 1])}".rstrip())
                if n == f.line:
                    # under the same character once escapes (a tab shown as \t) have widened the line
                    out.append(f"{gutter} | {' ' * len(printable(lines[n - 1][: f.column - 1]))}^ {f.rule_id}")
            out.append(f"{gutter} |")
        out.append("")
    out.append(summary)
    return "\n".join(out) + "\n"


def finding_record(f: Finding) -> dict[str, Any]:
    return {
        "rule_id": f.rule_id,
        "severity": f.severity,
        "message": f.message,
        "file": f.file,
        "pointer": f.pointer,
        "line": f.line,
        "column": f.column,
        "fingerprint": f.fingerprint,
        "fixable": f.fixable,
        "reading": f.reading,  # the disclosure reading a KLD30x/KLD33x verdict was reached from, else null
    }


def render_json_lines(result: LintResult) -> str:
    """One JSON object per finding per line (the json format's keys, plus fingerprint and fixable)."""
    return "".join(json_printable(json.dumps(finding_record(f), ensure_ascii=False)) + "\n" for f in result.findings)


_GITLAB_SEVERITY = {"error": "major", "warning": "minor", "info": "info"}


def render_gitlab(result: LintResult) -> str:
    """GitLab Code Quality report (https://docs.gitlab.com/ci/testing/code_quality/): a JSON array of
    issues with description, check_name, fingerprint, severity and location.path/lines.begin."""
    seen: Counter[str] = Counter()
    issues = []
    for f in result.findings:
        # GitLab wants each fingerprint unique; two identical findings in one file get a suffix.
        base = f"{f.file}|{f.rule_id}|{f.fingerprint}"
        seen[base] += 1
        fp = f.fingerprint + (f"-{seen[base]}" if seen[base] > 1 else "")
        issues.append(
            {
                "description": f"{f.rule_id} {f.message}",
                "check_name": f.rule_id,
                "fingerprint": fp,
                "severity": _GITLAB_SEVERITY[f.severity],
                "location": {"path": f.file, "lines": {"begin": f.line}},
            }
        )
    for name, why in result.unreadable.items():
        digest = hashlib.sha256(f"{name}|unreadable|{why}".encode()).hexdigest()[:16]
        issues.append(
            {
                "description": f"card could not be linted: {why}",
                "check_name": "kldcard-input-error",
                "fingerprint": digest,
                "severity": "blocker",
                "location": {"path": name, "lines": {"begin": 1}},
            }
        )
    return json_printable(json.dumps(issues, indent=2, ensure_ascii=False)) + "\n"


def render_junit(result: LintResult) -> str:
    """JUnit XML: one test suite, one test case per card; each finding a ``<failure>`` of its card."""
    by_file: dict[str, list[Finding]] = {name: [] for name in result.files}
    for f in result.findings:
        by_file.setdefault(f.file, []).append(f)
    failures = sum(len(v) for v in by_file.values())
    tests, errors = str(len(by_file) + len(result.unreadable)), str(len(result.unreadable))
    suites = ET.Element("testsuites", name="kldcard", tests=tests, failures=str(failures), errors=errors)
    suite = ET.SubElement(suites, "testsuite", name="kldcard lint", tests=tests, failures=str(failures), errors=errors, skipped="0")
    # XML 1.0 cannot hold most control characters at all: every text from a card is printable()
    for name, findings in by_file.items():
        case = ET.SubElement(suite, "testcase", name=printable(name), classname="kldcard.lint")
        for f in findings:
            fail = ET.SubElement(case, "failure", message=printable(f"{f.rule_id} {f.message}"), type=f.rule_id)
            fail.text = printable(f"{f.file}:{f.line}:{f.column}: {f.severity} {f.rule_id} {f.message}"
                                  + (f" [{f.pointer}]" if f.pointer else ""))
    for name, why in result.unreadable.items():  # a card that could not be read or fetched
        case = ET.SubElement(suite, "testcase", name=printable(name), classname="kldcard.lint")
        ET.SubElement(case, "error", message=printable(why), type="InputError").text = printable(why)
    ET.indent(suites)
    return '<?xml version="1.0" encoding="UTF-8"?>\n' + ET.tostring(suites, encoding="unicode") + "\n"


def statistics(result: LintResult) -> list[dict[str, Any]]:
    """Count per rule, most frequent first (then by code): ``code``, ``name``, ``count``, ``fixable``."""
    rules = all_rules()
    counts = Counter(f.rule_id for f in result.findings)
    fixable = Counter(f.rule_id for f in result.findings if f.fixable)
    return [
        {"code": c, "name": rules[c].name if c in rules else c, "count": n, "fixable": fixable[c] > 0}
        for c, n in sorted(counts.items(), key=lambda cn: (-cn[1], cn[0]))
    ]


def render_statistics(result: LintResult, fmt: str = "text") -> str:
    """ruff's ``--statistics``: ``COUNT<TAB>CODE<TAB>[*] name`` lines, or a JSON list for json formats."""
    rows = statistics(result)
    if fmt in ("json", "json-lines"):
        return json.dumps(rows, indent=2) + "\n"
    if not rows:
        return ""
    cw = max(len(str(r["count"])) for r in rows)
    kw = max(len(r["code"]) for r in rows)
    any_fix = any(r["fixable"] for r in rows)
    out = []
    for r in rows:
        mark = ("[*] " if r["fixable"] else "[ ] ") if any_fix else ""
        out.append(f"{r['count']:>{cw}}\t{r['code']:<{kw}}\t{mark}{r['name']}")
    if any_fix:
        out.append("[*] fixable with `kldcard lint --fix`")
    return "\n".join(out) + "\n"
