"""Reporters: format a :class:`LintResult` as text, json, github annotations or SARIF 2.1.0
(and, from :mod:`kldcard.lint.report_formats`, full, json-lines, gitlab and junit).

Reporters only format; they never decide what is a finding. ``fail_on`` (the lowest severity that
fails the run) only sets the json ``status`` and the text summary, so that they agree with the
exit code.
"""

from __future__ import annotations

import json
import os
from pathlib import PurePath
from typing import Any
from urllib.parse import quote

from kldcard import __version__
from kldcard.errors import json_printable, printable
from kldcard.lint.findings import SEVERITY_RANK, Finding, LintResult
from kldcard.lint.registry import all_rules
from kldcard.lint.report_formats import render_full, render_gitlab, render_json_lines, render_junit

FORMATS = ("text", "full", "json", "json-lines", "github", "gitlab", "junit", "sarif")
RULE_DOCS_URL = "https://github.com/kldcard/kldcard/blob/main/docs/rules/{code}.md"
SARIF_SCHEMA_URI = "https://docs.oasis-open.org/sarif/sarif/v2.1.0/errata01/os/schemas/sarif-schema-2.1.0.json"
REPORT_SCHEMA_ID = "https://github.com/kldcard/kldcard/blob/main/schemas/lint-report.schema.json"


def failing(result: LintResult, fail_on: str = "info") -> list[Finding]:
    """Findings at or above ``fail_on`` (error, warning or info)."""
    return [f for f in result.findings if SEVERITY_RANK[f.severity] >= SEVERITY_RANK[fail_on]]


def render(result: LintResult, fmt: str, *, fail_on: str = "info", color: bool = False) -> str:
    if fmt == "text":
        return render_text(result, fail_on=fail_on, color=color)
    if fmt == "json":
        return render_json(result, fail_on=fail_on)
    if fmt == "github":
        return render_github(result)
    if fmt == "sarif":
        return render_sarif(result)
    if fmt == "full":
        return render_full(result, summary_line(result, fail_on))
    if fmt == "json-lines":
        return render_json_lines(result)
    if fmt == "gitlab":
        return render_gitlab(result)
    if fmt == "junit":
        return render_junit(result)
    raise ValueError(f"unknown output format {fmt!r}")


def use_color(stream: Any) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (https://no-color.org)."""
    if os.environ.get("NO_COLOR"):
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


# --------------------------------------------------------------------------------------------


_COLORS = {"error": "\033[31m", "warning": "\033[33m", "info": "\033[36m"}
_BOLD, _DIM, _RESET = "\033[1m", "\033[2m", "\033[0m"


def render_text(result: LintResult, *, fail_on: str = "info", color: bool = False) -> str:
    """``README.md:12:3: error KLD103 message [pointer]`` lines and a one-line summary."""
    lines = []
    for f in result.findings:
        # file names, messages and pointers carry text from the card: no control character passes
        sev, code, where = f.severity, f.rule_id, f"{printable(f.file)}:{f.line}:{f.column}:"
        pointer = f" [{printable(f.pointer)}]" if f.pointer else ""
        if color:
            sev = f"{_COLORS[sev]}{sev}{_RESET}"
            code, where = f"{_BOLD}{code}{_RESET}", f"{_BOLD}{where}{_RESET}"
            pointer = f"{_DIM}{pointer}{_RESET}" if pointer else ""
        lines.append(f"{where} {sev} {code} {printable(f.message)}{pointer}")
    lines.append(summary_line(result, fail_on))
    return "\n".join(lines) + "\n"


def summary_line(result: LintResult, fail_on: str = "info") -> str:
    n_files = len(result.files)
    if not n_files:
        return "No cards linted."
    files = f"{n_files} card{'s' if n_files != 1 else ''}"
    if not result.findings:
        return f"All checks passed ({files}, no findings)."
    counts = {s: sum(f.severity == s for f in result.findings) for s in ("error", "warning", "info")}
    parts = [f"{n} {s}{'s' if n != 1 else ''}" for s, n in counts.items() if n]
    with_findings = len({f.file for f in result.findings})
    verdict = "failed" if failing(result, fail_on) else f"passed (nothing at or above {fail_on})"
    return f"Found {len(result.findings)} finding{'s' if len(result.findings) != 1 else ''} ({', '.join(parts)}) in {with_findings} of {files}: {verdict}."


# --------------------------------------------------------------------------------------------


def report_dict(result: LintResult, *, fail_on: str = "info") -> dict[str, Any]:
    # a card that could not be read is no pass: the run exits 2, and the report says so
    status = "error" if result.unreadable else ("fail" if failing(result, fail_on) else "ok")
    out = {
        "status": status,
        "files": list(result.files),
        "errors": [
            {
                "rule_id": f.rule_id,
                "severity": f.severity,
                "message": f.message,
                "file": f.file,
                "pointer": f.pointer,
                "line": f.line,
                "column": f.column,
            }
            for f in result.findings
        ],
        "reading": {file: [c.to_json() for c in claims] for file, claims in result.readings.items()},
    }
    if result.unreadable:  # only then, so that a clean run's keys stay as they were
        out["unreadable"] = dict(result.unreadable)
    return out


def render_json(result: LintResult, *, fail_on: str = "info") -> str:
    return json_printable(json.dumps(report_dict(result, fail_on=fail_on), indent=2, ensure_ascii=False)) + "\n"


_EVIDENCE = {
    "type": "object",
    "additionalProperties": False,
    "required": ["text"],
    "properties": {
        "text": {"type": "string", "description": "the quoted span (one line, at most 80 characters), or the tool default in words"},
        "line": {"type": "integer", "minimum": 1},
        "column": {"type": "integer", "minimum": 1},
        "key": {"type": "string", "description": "JSON pointer into the front matter (/base_model)"},
        "tool": {"type": "string", "description": "the tool whose documented default an inferred reading is"},
    },
}
DISCLOSURE_READING_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["disclosure", "name", "status", "value", "evidence", "needs"],
    "properties": {
        "disclosure": {"type": "string", "pattern": "^D[1-9]$"},
        "name": {"type": "string"},
        "status": {"enum": ["stated", "incomplete", "inferred", "missing"]},
        "value": {"type": "object", "description": "the normalised value read (keys per disclosure: kldcard.lint.reading.VALUE_KEYS)"},
        "evidence": {"type": "array", "items": _EVIDENCE},
        "needs": {"type": "array", "items": {"type": "string"}, "description": "what complete still lacks"},
        "inferred_keys": {
            "type": "array", "items": {"type": "string"},
            "description": "the keys of value that the named tool's documented default gives, not the card (absent when none)",
        },
    },
}
READING_SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["kind", "line", "column", "text", "tool", "numbers", "disclosures"],
    "properties": {
        "kind": {"enum": ["table", "tool-output", "sentence"]},
        "line": {"type": "integer", "minimum": 1},
        "column": {"type": "integer", "minimum": 1},
        "text": {"type": "string"},
        "tool": {"type": ["string", "null"]},
        "numbers": {
            "type": "array",
            "items": {
                "type": "object",
                "required": ["text", "value", "line", "column"],
                "properties": {
                    "text": {"type": "string"},
                    "value": {"type": "number"},
                    "line": {"type": "integer"},
                    "column": {"type": "integer"},
                    "unit": {"enum": ["nats", "bits", "percent"]},
                    "statistic": {"type": "string"},
                    "candidate": {"type": "string"},
                },
            },
        },
        "disclosures": {"type": "array", "items": DISCLOSURE_READING_SCHEMA, "minItems": 9, "maxItems": 9},
    },
}


def report_schema() -> dict[str, Any]:
    """JSON Schema of :func:`render_json`'s output (published as schemas/lint-report.schema.json)."""
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "$id": REPORT_SCHEMA_ID,
        "title": "kldcard lint report",
        "description": "Output of `kldcard lint -o json`. Keys are stable.",
        "type": "object",
        "additionalProperties": False,
        "required": ["status", "files", "errors"],
        "properties": {
            "status": {
                "enum": ["ok", "fail", "error"],
                "description": "error when a card could not be read (exit code 2); else fail when a finding is at or "
                "above the fail-on severity (exit code 1)",
            },
            "unreadable": {
                "type": "object",
                "additionalProperties": {"type": "string"},
                "description": "cards that could not be read or fetched: path or hf:// spec -> the one-line reason",
            },
            "files": {"type": "array", "items": {"type": "string"}, "description": "cards linted"},
            "errors": {
                "type": "array",
                "description": "all findings, sorted by file, line, column, rule",
                "items": {
                    "type": "object",
                    "additionalProperties": False,
                    "required": ["rule_id", "severity", "message", "file", "pointer", "line", "column"],
                    "properties": {
                        "rule_id": {"type": "string", "pattern": "^KLD[0-9]{3}$"},
                        "severity": {"enum": ["error", "warning", "info"]},
                        "message": {"type": "string", "minLength": 1},
                        "file": {"type": "string"},
                        "pointer": {
                            "type": "string",
                            "description": "RFC 6901 JSON pointer into the front matter; empty for body findings",
                            "pattern": "^(/.*)?$",
                        },
                        "line": {"type": "integer", "minimum": 1},
                        "column": {"type": "integer", "minimum": 1},
                    },
                },
            },
            "reading": {
                "type": "object",
                "description": "card file -> the reading of each KLD claim of a card without a kld_evaluation block "
                "(what `kldcard lint --explain` prints; docs/cli.md, 'The reading')",
                "additionalProperties": {"type": "array", "items": READING_SCHEMA},
            },
        },
    }


# --------------------------------------------------------------------------------------------


def _gh_data(text: str) -> str:
    # GitHub's own escapes for the three characters it decodes; any other control character (an
    # ESC sequence from a card) is shown escaped, as in the text reporters
    return printable(text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A"))


def _gh_prop(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def render_github(result: LintResult) -> str:
    """GitHub workflow commands: ``::error file=README.md,line=13,col=14,title=KLD103::message``."""
    level = {"error": "error", "warning": "warning", "info": "notice"}
    lines = [
        f"::{level[f.severity]} file={_gh_prop(f.file)},line={f.line},col={f.column},"
        f"title={_gh_prop(f.rule_id)}::{_gh_data(f.message + (f' [{f.pointer}]' if f.pointer else ''))}"
        for f in result.findings
    ]
    return "".join(line + "\n" for line in lines)


# --------------------------------------------------------------------------------------------


def _artifact_uri(path: str) -> str:
    if "://" in path:  # hf://owner/name/README.md stays as given
        return path
    p = PurePath(path)
    if p.is_absolute():
        return "file://" + quote(p.as_posix())
    return quote(p.as_posix())


def render_sarif(result: LintResult) -> str:
    """SARIF 2.1.0 with every registered rule in ``tool.driver.rules`` (stable ``ruleIndex``)."""
    rules = list(all_rules().values())
    index = {r.code: i for i, r in enumerate(rules)}
    level = {"error": "error", "warning": "warning", "info": "note"}
    driver = {
        "name": "kldcard",
        "version": __version__,
        "informationUri": RULE_DOCS_URL.rsplit("/rules/", 1)[0] + "/rules/README.md",
        "rules": [
            {
                "id": r.code,
                "name": r.name,
                "shortDescription": {"text": r.summary},
                "fullDescription": {"text": r.what},
                "help": {"text": r.why},
                "helpUri": RULE_DOCS_URL.format(code=r.code),
                "defaultConfiguration": {"level": level[r.severity]},
                "properties": {"tags": [r.group]},
            }
            for r in rules
        ],
    }
    results = []
    for f in result.findings:
        res: dict[str, Any] = {
            "ruleId": f.rule_id,
            "level": level[f.severity],
            "message": {"text": f.message},
            "locations": [
                {
                    "physicalLocation": {
                        "artifactLocation": {"uri": _artifact_uri(f.file)},
                        "region": {"startLine": f.line, "startColumn": f.column},
                    }
                }
            ],
        }
        if f.rule_id in index:
            res["ruleIndex"] = index[f.rule_id]
        if f.pointer:
            res["properties"] = {"pointer": f.pointer}
        results.append(res)
    log = {
        "$schema": SARIF_SCHEMA_URI,
        "version": "2.1.0",
        "runs": [{"tool": {"driver": driver}, "results": results, "columnKind": "unicodeCodePoints"}],
    }
    return json_printable(json.dumps(log, indent=2, ensure_ascii=False)) + "\n"
