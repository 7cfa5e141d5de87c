"""The example cards: compliant passes, each failing card fails with exactly its own rule."""

from __future__ import annotations

import json

import pytest
from helpers_lint import (
    COMPLIANT,
    EXAMPLES,
    FAILING,
    front_matter,
    run_cli,
    run_subprocess,
    write_card,
)

from kldcard.lint.registry import all_rules
from kldcard.lint.runner import lint_card


def test_compliant_card_exits_0_with_no_findings(capsys):
    rc, out, err = run_cli(capsys, "lint", COMPLIANT)
    assert (rc, err) == (0, "")
    assert "All checks passed (1 card, no findings)." in out
    assert lint_card(COMPLIANT).findings == []


def test_compliant_card_via_console_script_in_a_fresh_process():
    proc = run_subprocess("lint", COMPLIANT)
    assert proc.returncode == 0, proc.stderr
    assert proc.stderr == ""


@pytest.mark.parametrize("card", FAILING, ids=lambda p: p.stem)
def test_failing_example_exits_1_with_exactly_its_rule(card, capsys):
    code = card.stem.split("-", 1)[0]
    rc, out, err = run_cli(capsys, "lint", "-o", "json", card)
    assert rc == 1, out + err
    report = json.loads(out)
    # a control on another stack than the candidate is on another stack than the reference too (KLD207)
    companions = {"KLD210": {"KLD207"}}.get(code, set())
    assert {e["rule_id"] for e in report["errors"]} == {code} | companions
    assert report["status"] == "fail"
    for e in report["errors"]:
        assert e["line"] > 1 and e["column"] >= 1  # located inside the card, not at a default position


def test_every_structured_rule_has_an_example_card():
    rules = all_rules()
    structured = {c for c in rules if c[:4] in ("KLD0", "KLD1", "KLD2")}
    covered = {p.stem.split("-", 1)[0] for p in FAILING}
    assert structured <= covered, sorted(structured - covered)
    for p in FAILING:
        code, name = p.stem.split("-", 1)
        if code in rules:
            assert rules[code].name == name, f"{p.name}: rule {code} is named {rules[code].name}"


def test_structured_example_cards_carry_a_block_or_model_index():
    for p in [COMPLIANT, *(p for p in FAILING if p.name[:4] in ("KLD0", "KLD1", "KLD2"))]:
        meta = front_matter(p)
        assert "kld_evaluation" in meta or "model-index" in meta, p.name


def test_card_without_block_or_claims_has_no_findings(tmp_path):
    card = write_card(tmp_path / "README.md", {"license": "mit", "tags": ["text-generation"]}, "# A model\n\nIt writes text.\n")
    assert lint_card(card).findings == []
    bare = tmp_path / "bare.md"
    bare.write_text("# No front matter at all\n", encoding="utf-8")
    assert lint_card(bare).findings == []


def test_finding_points_at_the_offending_line(capsys):
    card = EXAMPLES / "KLD101-missing-reference-checkpoint.md"
    rc, out, _ = run_cli(capsys, "lint", card)
    line_no = next(i for i, line in enumerate(card.read_text().splitlines(), 1) if "revision: main" in line)
    assert rc == 1
    first = out.splitlines()[0]
    assert first.startswith(f"{card}:{line_no}:15: error KLD101 ")
    assert first.endswith("[/kld_evaluation/reference/revision]")


def test_incomplete_block_still_gets_consistency_findings(tmp_path):
    meta = front_matter(COMPLIANT)
    del meta["kld_evaluation"]["evaluation_text"]
    meta["kld_evaluation"]["reference"]["dtype"] = "q4_0"
    meta["kld_evaluation"]["candidates"][0]["results"]["kld"]["mean"] = -0.5
    meta["model-index"][0]["results"][0]["metrics"][0]["value"] = -0.5
    result = lint_card(write_card(tmp_path / "README.md", meta))
    assert {f.rule_id for f in result.findings} == {"KLD103", "KLD201", "KLD202"}


def test_several_pydantic_errors_become_several_findings(tmp_path):
    meta = front_matter(COMPLIANT)
    ke = meta["kld_evaluation"]
    del ke["context"]
    ke["vocabulary"]["truncation"] = "everything"
    ke["evaluation_text"]["source"] = {"dataset": "Salesforce/wikitext"}  # neither a dataset source nor a URL
    ke["candidates"][0]["runtime"]["backend"] = "cuda"
    del ke["candidates"][0]["runtime"]["sm_count"]
    result = lint_card(write_card(tmp_path / "README.md", meta))
    codes = sorted(f.rule_id for f in result.findings)
    assert codes == ["KLD102", "KLD103", "KLD105", "KLD108"], [(f.rule_id, f.message) for f in result.findings]
    source = next(f for f in result.findings if f.rule_id == "KLD103")
    assert source.pointer == "/kld_evaluation/evaluation_text/source"
    assert "DatasetSource or UrlSource" in source.message


def test_consistency_edge_cases(tmp_path):
    meta = front_matter(COMPLIANT)
    ke = meta["kld_evaluation"]
    ke["positions"] = {"scheme": "explicit", "explicit": [10, 511, 512], "n_scored": 3}
    ke["candidates"][0]["calibration"] = {
        "dataset": "Salesforce/wikitext",
        "sha256": ke["evaluation_text"]["sha256"],
        "n_tokens": 289077,
        "overlaps_evaluation_text": False,
    }
    ke["candidates"][0]["results"]["js"] = {"mean": 0.004}
    ke["candidates"][0]["results"]["n_positions"] = 3
    # more digits than the block's 0.0213: 0.02134 claims a different number
    meta["model-index"][0]["results"][0]["metrics"][0]["value"] = 0.02134
    result = lint_card(write_card(tmp_path / "README.md", meta))
    by_rule = {f.rule_id: f for f in result.findings}
    assert set(by_rule) == {"KLD203", "KLD204", "KLD205", "KLD206"}
    assert by_rule["KLD203"].pointer == "/kld_evaluation/positions/explicit/2"
    assert "same sha256" in by_rule["KLD205"].message


def test_model_index_rounding_matches_the_written_digits(tmp_path):
    meta = front_matter(COMPLIANT)
    meta["kld_evaluation"]["candidates"][0]["results"]["kld"]["mean"] = 0.021349
    assert lint_card(write_card(tmp_path / "a.md", meta)).findings == []  # 0.0213 is 0.021349 to 4 places
    meta["kld_evaluation"]["candidates"][0]["results"]["kld"]["mean"] = 0.02136
    assert [f.rule_id for f in lint_card(write_card(tmp_path / "b.md", meta)).findings] == ["KLD206"]


def test_model_index_metric_without_direction(tmp_path):
    meta = front_matter(COMPLIANT)
    del meta["model-index"][0]["results"][0]["metrics"][0]["args"]["direction"]
    findings = lint_card(write_card(tmp_path / "README.md", meta)).findings
    # the headline metric and the p99 metric that relied on it both lose their direction
    assert [(f.rule_id, f.pointer.rsplit("/", 1)[-1]) for f in findings] == [("KLD204", "0"), ("KLD204", "1")]


def test_markers_inside_code_fences_are_ignored(tmp_path):
    text = COMPLIANT.read_text() + "\n```md\n<!-- kldcard:start schema=1 -->\n```\n"
    (tmp_path / "README.md").write_text(text)
    assert lint_card(tmp_path / "README.md").findings == []
    (tmp_path / "dup.md").write_text(COMPLIANT.read_text() + "\n<!-- kldcard:start -->\n<!-- kldcard:end -->\n")
    assert [f.rule_id for f in lint_card(tmp_path / "dup.md").findings] == ["KLD005"]


def test_lint_paths_and_top_level_api():
    import kldcard
    from kldcard.lint.runner import lint_paths

    result = lint_paths([COMPLIANT, EXAMPLES / "KLD205-calibration-is-evaluation-text.md"], ignore=["KLD3"])
    assert result.files == [str(COMPLIANT), str(EXAMPLES / "KLD205-calibration-is-evaluation-text.md")]
    assert [f.rule_id for f in result.findings] == ["KLD205"]
    assert kldcard.lint_card is lint_card


def test_duplicate_keys_are_located_at_the_occurrence_yaml_keeps(tmp_path):
    text = COMPLIANT.read_text().replace(
        "    dtype: bf16\n", "    dtype: bf16\n    dtype: q4_0\n", 1
    )  # PyYAML keeps the last duplicate
    (tmp_path / "README.md").write_text(text)
    (finding,) = lint_card(tmp_path / "README.md").findings
    line = text.splitlines().index("    dtype: q4_0") + 1
    assert (finding.rule_id, finding.line, finding.column) == ("KLD202", line, 12)


def test_two_findings_of_one_rule_at_one_place_are_both_reported(tmp_path):
    meta = front_matter(COMPLIANT)
    results = meta["kld_evaluation"]["candidates"][0]["results"]
    del results["n_positions"], results["top1_agreement"]  # both resolve to the `results` key's line
    findings = lint_card(write_card(tmp_path / "README.md", meta)).findings
    assert [(f.rule_id, f.pointer.rsplit("/", 1)[-1]) for f in findings] == [("KLD007", "n_positions"), ("KLD007", "top1_agreement")]
    assert findings[0].line == findings[1].line


@pytest.mark.parametrize(("mean", "flagged"), [(".nan", True), (".NaN", True), ("-0.0213", True), (".inf", False)])
def test_kld201_flags_a_nan_mean_as_well_as_a_negative_one(tmp_path, mean, flagged):
    """A NaN mean is as impossible as a negative one; +inf is a possible KLD (a zero candidate probability)."""
    example = EXAMPLES / "KLD201-negative-mean-kld.md"
    text = example.read_text(encoding="utf-8")
    assert text.count("mean: -0.0213") == 1 and text.count("value: -0.0213") == 1
    card = tmp_path / "README.md"
    card.write_text(text.replace("mean: -0.0213", f"mean: {mean}").replace("value: -0.0213", "value: 0.0213"), "utf-8")
    pointers = {f.pointer for f in lint_card(card).findings if f.rule_id == "KLD201"}
    assert pointers == ({"/kld_evaluation/candidates/0/results/kld/mean"} if flagged else set())
