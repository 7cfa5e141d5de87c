"""full, json-lines, gitlab and junit outputs; --statistics, --exit-zero, KLDCARD_OUTPUT_FORMAT."""

from __future__ import annotations

import json

import jsonschema
import pytest
from helpers_lint import EXAMPLES, run_cli, run_subprocess
from junitparser import Failure, JUnitXml

CARDS = [EXAMPLES / "KLD206-model-index-mismatch.md", EXAMPLES / "KLD303-prose-eval-text-missing.md", EXAMPLES / "compliant.md"]

# GitLab publishes the Code Quality format as a documented subset of the Code Climate spec
# (https://docs.gitlab.com/ci/testing/code_quality/#code-quality-report-format), not as a JSON
# Schema; this schema states exactly what that page requires.
GITLAB_SCHEMA = {
    "type": "array",
    "items": {
        "type": "object",
        "required": ["description", "check_name", "fingerprint", "severity", "location"],
        "properties": {
            "description": {"type": "string", "minLength": 1},
            "check_name": {"type": "string", "minLength": 1},
            "fingerprint": {"type": "string", "minLength": 1},
            "severity": {"enum": ["info", "minor", "major", "critical", "blocker"]},
            "location": {
                "type": "object",
                "required": ["path", "lines"],
                "properties": {
                    "path": {"type": "string"},
                    "lines": {"type": "object", "required": ["begin"], "properties": {"begin": {"type": "integer", "minimum": 1}}},
                },
            },
        },
    },
}


def test_gitlab_report_validates_and_fingerprints_are_unique(capsys):
    rc, out, _ = run_cli(capsys, "lint", "-o", "gitlab", *CARDS)
    issues = json.loads(out)
    jsonschema.validate(issues, GITLAB_SCHEMA)
    assert rc == 1 and {i["check_name"] for i in issues} == {"KLD206", "KLD303"}
    assert len({i["fingerprint"] for i in issues}) == len(issues)
    assert {i["severity"] for i in issues} == {"major"}


def test_junit_report_parses_with_junitparser(tmp_path, capsys):
    out_file = tmp_path / "junit.xml"
    rc, _, _ = run_cli(capsys, "lint", "-o", "junit", "--output-file", out_file, *CARDS)
    xml = JUnitXml.fromfile(str(out_file))
    cases = {case.name: case for suite in xml for case in suite}
    assert rc == 1 and set(cases) == {str(c) for c in CARDS}
    assert cases[str(CARDS[2])].is_passed
    fail = [r for r in cases[str(CARDS[0])].result if isinstance(r, Failure)]
    assert len(fail) == 1 and fail[0].type == "KLD206"


def test_json_lines_one_object_per_finding(capsys):
    rc, out, _ = run_cli(capsys, "lint", "-o", "json-lines", *CARDS)
    rows = [json.loads(line) for line in out.splitlines()]
    assert rc == 1 and [r["rule_id"] for r in rows] == ["KLD206", "KLD303"]
    assert rows[0]["fixable"] is True and len(rows[0]["fingerprint"]) == 16


def test_full_output_shows_the_line_with_a_caret(capsys):
    rc, out, _ = run_cli(capsys, "lint", "-o", "full", CARDS[0])
    lines = out.splitlines()
    at = next(i for i, ln in enumerate(lines) if ln.startswith("142 |"))
    assert rc == 1 and lines[0].startswith(f"{CARDS[0]}:142:14: KLD206 [*] ")
    assert lines[at] == "142 |       value: 0.0125"
    assert lines[at + 1].index("^") == lines[at].index("0.0125")


def test_statistics_in_ruff_format(capsys):
    rc, out, _ = run_cli(capsys, "lint", "--statistics", *CARDS, EXAMPLES / "KLD207-cross-stack-comparison.md")
    lines = out.splitlines()
    assert rc == 1 and lines[0] == "2\tKLD207\t[ ] cross-stack-comparison"
    assert "1\tKLD206\t[*] model-index-mismatch" in lines and lines[-1] == "[*] fixable with `kldcard lint --fix`"
    rc, out, _ = run_cli(capsys, "lint", "--statistics", "-o", "json", *CARDS)
    assert {r["code"]: r["count"] for r in json.loads(out)} == {"KLD206": 1, "KLD303": 1}


def test_exit_zero_keeps_the_report(capsys):
    rc, out, _ = run_cli(capsys, "lint", "--exit-zero", CARDS[0])
    assert rc == 0 and "KLD206" in out


@pytest.mark.parametrize("fmt", ["gitlab", "junit"])
def test_output_format_from_environment(fmt):
    proc = run_subprocess("lint", CARDS[0], env={"KLDCARD_OUTPUT_FORMAT": fmt})
    assert proc.returncode == 1
    assert proc.stdout.lstrip().startswith("[" if fmt == "gitlab" else "<?xml")
    bad = run_subprocess("lint", CARDS[0], env={"KLDCARD_OUTPUT_FORMAT": "xml"})
    assert bad.returncode == 2 and "KLDCARD_OUTPUT_FORMAT" in bad.stderr
