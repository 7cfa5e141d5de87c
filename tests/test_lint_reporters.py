"""Output formats: text, json (against its published schema), github annotations, SARIF 2.1.0."""

from __future__ import annotations

import json
import re

import jsonschema
import pytest
from helpers_lint import (
    COMPLIANT,
    DATA,
    EXAMPLES,
    FAILING,
    ROOT,
    run_cli,
    run_subprocess,
)

from kldcard.lint.findings import Finding, LintResult
from kldcard.lint.reporters import render_github, render_text

TWO_BAD = [EXAMPLES / "KLD201-negative-mean-kld.md", EXAMPLES / "KLD202-quantized-reference.md"]


def _validator(schema_path):
    schema = json.loads(schema_path.read_text(encoding="utf-8"))
    cls = jsonschema.validators.validator_for(schema)
    cls.check_schema(schema)
    return cls(schema, format_checker=cls.FORMAT_CHECKER)


def test_text_format_lines_and_summary(capsys):
    rc, out, _ = run_cli(capsys, "lint", *TWO_BAD, COMPLIANT)
    assert rc == 1
    lines = out.splitlines()
    pattern = re.compile(r"^(?P<file>[^:]+):(?P<line>\d+):(?P<col>\d+): (?P<sev>error|warning|info) (?P<code>KLD\d{3}) .+ \[/[^\]]+\]$")
    assert all(pattern.match(line) for line in lines[:-1]), lines
    assert lines[-1] == "Found 3 findings (2 errors, 1 warning) in 2 of 3 cards: failed."
    assert "\033[" not in out  # not a terminal: no colour


def test_text_colour_only_on_terminal_and_never_with_no_color(monkeypatch):
    result = LintResult([Finding("README.md", 3, 4, "KLD103", "error", "evaluation text incomplete", "/kld_evaluation")], ["README.md"])
    assert "\033[31merror" in render_text(result, color=True)
    from kldcard.lint.reporters import use_color

    class Tty:
        def isatty(self):
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    assert use_color(Tty())
    monkeypatch.setenv("NO_COLOR", "1")
    assert not use_color(Tty())


def test_json_output_of_an_unreadable_card_says_error_not_ok(capsys, tmp_path):
    """A card that cannot be read is no pass: exit 2, and the JSON report's status says so (issue-28 review)."""
    missing = tmp_path / "nonexist.md"
    rc, out, _ = run_cli(capsys, "lint", "-o", "json", str(missing), str(COMPLIANT))
    report = json.loads(out)
    assert rc == 2 and report["status"] == "error" and str(missing) in report["unreadable"]
    assert not list(_validator(ROOT / "schemas" / "lint-report.schema.json").iter_errors(report))


def test_json_output_validates_against_published_schema(capsys):
    validator = _validator(ROOT / "schemas" / "lint-report.schema.json")
    rc, out, _ = run_cli(capsys, "lint", "-o", "json", *FAILING)
    assert rc == 1
    report = json.loads(out)
    validator.validate(report)
    assert list(report) == ["status", "files", "errors", "reading"]
    assert len(report["files"]) == len(FAILING) and report["status"] == "fail"
    assert list(report["errors"][0]) == ["rule_id", "severity", "message", "file", "pointer", "line", "column"]
    rc, out, _ = run_cli(capsys, "lint", "-o", "json", COMPLIANT)
    assert rc == 0 and json.loads(out) == {"status": "ok", "files": [str(COMPLIANT)], "errors": [], "reading": {}}
    validator.validate(json.loads(out))
    # the schema really constrains: a report with a bad rule id fails it
    with pytest.raises(jsonschema.ValidationError):
        validator.validate({**report, "errors": [{**report["errors"][0], "rule_id": "E501"}]})


def test_sarif_output_validates_against_sarif_2_1_0_schema(capsys):
    validator = _validator(DATA / "sarif-2.1.0-rtm.5.json")
    rc, out, _ = run_cli(capsys, "lint", "-o", "sarif", *TWO_BAD)
    assert rc == 1
    log = json.loads(out)
    validator.validate(log)
    run = log["runs"][0]
    rules = run["tool"]["driver"]["rules"]
    assert {"id", "name", "shortDescription", "helpUri"} <= set(rules[0])
    assert all(r["helpUri"].endswith(f"docs/rules/{r['id']}.md") for r in rules)
    levels = {r["ruleId"]: r["level"] for r in run["results"]}
    assert levels == {"KLD201": "error", "KLD202": "warning"}
    for res in run["results"]:
        assert rules[res["ruleIndex"]]["id"] == res["ruleId"]
        region = res["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] > 1 and region["startColumn"] >= 1
        assert res["locations"][0]["physicalLocation"]["artifactLocation"]["uri"].endswith(".md")
    # an empty run is valid SARIF too
    rc, out, _ = run_cli(capsys, "lint", "-o", "sarif", COMPLIANT)
    assert rc == 0
    validator.validate(json.loads(out))
    assert json.loads(out)["runs"][0]["results"] == []
    # the schema really constrains: a result without a message fails it
    del log["runs"][0]["results"][0]["message"]
    with pytest.raises(jsonschema.ValidationError):
        validator.validate(log)


def test_github_annotations(capsys):
    rc, out, _ = run_cli(capsys, "lint", "-o", "github", *TWO_BAD)
    assert rc == 1
    lines = out.splitlines()
    assert len(lines) == 3
    assert re.fullmatch(r"::error file=[^,]+KLD201-negative-mean-kld\.md,line=\d+,col=\d+,title=KLD201::.+", lines[0])
    assert lines[2].startswith("::warning ") and "title=KLD202::" in lines[2]


def test_github_escapes_newlines_and_property_separators():
    f = Finding("dir,x/READ:ME.md", 2, 1, "KLD103", "info", "100% sure\nsecond line", "")
    out = render_github(LintResult([f], [f.file]))
    assert out == "::notice file=dir%2Cx/READ%3AME.md,line=2,col=1,title=KLD103::100%25 sure%0Asecond line\n"


def test_output_file_is_written_and_stdout_stays_empty(tmp_path, capsys):
    target = tmp_path / "report.sarif"
    rc, out, _ = run_cli(capsys, "lint", "-o", "sarif", "--output-file", target, TWO_BAD[0])
    assert rc == 1 and out == ""
    assert json.loads(target.read_text())["version"] == "2.1.0"
    assert [p.name for p in tmp_path.iterdir()] == ["report.sarif"]  # no temp file left behind


def test_no_color_env_in_a_real_process():
    proc = run_subprocess("lint", TWO_BAD[0], env={"NO_COLOR": "1"})
    assert proc.returncode == 1 and "\033[" not in proc.stdout
