"""--select / --ignore by code and prefix, [tool.kldcard] in pyproject.toml, rule listing, usage errors."""

from __future__ import annotations

import json

import pytest
from helpers_lint import COMPLIANT, EXAMPLES, FAILING, front_matter, run_cli, write_card

from kldcard.errors import UsageError
from kldcard.lint.config import find_pyproject, load_config
from kldcard.lint.registry import all_rules
from kldcard.lint.runner import enabled_codes, lint_card


@pytest.fixture
def many_rules_card(tmp_path):
    """A card breaking KLD103, KLD105, KLD201 and KLD202 at once."""
    meta = front_matter(COMPLIANT)
    ke = meta["kld_evaluation"]
    del ke["evaluation_text"]["sha256"]
    del ke["context"]["stride"]
    ke["reference"]["dtype"] = "q8_0"
    ke["candidates"][0]["results"]["kld"]["mean"] = -0.0213
    meta["model-index"][0]["results"][0]["metrics"][0]["value"] = -0.0213
    return write_card(tmp_path / "README.md", meta)


def _codes(capsys, *argv):
    rc, out, err = run_cli(capsys, "lint", "-o", "json", *argv)
    return rc, {e["rule_id"] for e in json.loads(out)["errors"]} if out else set(), err


def test_all_rules_by_default(many_rules_card, capsys):
    assert _codes(capsys, many_rules_card)[:2] == (1, {"KLD103", "KLD105", "KLD201", "KLD202"})


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (["--select", "KLD1"], {"KLD103", "KLD105"}),
        (["--select", "KLD103,KLD202"], {"KLD103", "KLD202"}),
        (["--select", "KLD103", "--select", "kld2"], {"KLD103", "KLD201", "KLD202"}),
        (["--ignore", "KLD2"], {"KLD103", "KLD105"}),
        (["--ignore", "KLD105", "--ignore", "KLD201"], {"KLD103", "KLD202"}),
        (["--select", "KLD2", "--ignore", "KLD202"], {"KLD201"}),
        (["--select", "ALL"], {"KLD103", "KLD105", "KLD201", "KLD202"}),
    ],
)
def test_select_and_ignore_by_code_and_prefix(many_rules_card, capsys, args, expected):
    rc, codes, _ = _codes(capsys, *args, many_rules_card)
    assert (rc, codes) == (1, expected)


def test_ignoring_everything_found_exits_0(many_rules_card, capsys):
    rc, codes, _ = _codes(capsys, "--ignore", "KLD1,KLD2", many_rules_card)
    assert (rc, codes) == (0, set())


def test_fail_on_severity(capsys):
    card = EXAMPLES / "KLD202-quantized-reference.md"  # a warning only
    assert run_cli(capsys, "lint", card)[0] == 1
    assert run_cli(capsys, "lint", "--fail-on", "warning", card)[0] == 1
    rc, out, _ = run_cli(capsys, "lint", "--fail-on", "error", card)
    assert rc == 0
    assert "warning KLD202" in out and "passed (nothing at or above error)" in out
    rc, out, _ = run_cli(capsys, "lint", "-o", "json", "--fail-on", "error", card)
    assert rc == 0 and json.loads(out)["status"] == "ok"


def test_unknown_rule_code_is_a_usage_error(capsys):
    rc, out, err = run_cli(capsys, "lint", "--select", "KLD999", COMPLIANT)
    assert rc == 2 and out == ""
    assert err == "kldcard: error: unknown rule code or prefix 'KLD999'; see `kldcard lint --list-rules`\n"


def test_config_in_pyproject(tmp_path, monkeypatch, many_rules_card, capsys):
    project = tmp_path / "proj"
    (project / "models" / "m").mkdir(parents=True)
    (project / "pyproject.toml").write_text(
        '[project]\nname = "x"\n\n[tool.kldcard]\nselect = ["KLD1", "KLD2"]\nignore = ["KLD105"]\n'
        'output-format = "json"\nfail-on = "error"\n'
    )
    card = project / "models" / "m" / "README.md"
    card.write_bytes(many_rules_card.read_bytes())
    monkeypatch.chdir(project / "models" / "m")  # the nearest pyproject.toml is two levels up
    assert find_pyproject() == project / "pyproject.toml"
    cfg = load_config()
    assert (cfg.select, cfg.ignore, cfg.output_format, cfg.fail_on) == (["KLD1", "KLD2"], ["KLD105"], "json", "error")
    rc, out, _ = run_cli(capsys, "lint", "README.md")
    report = json.loads(out)  # output-format from the config
    assert rc == 1 and {e["rule_id"] for e in report["errors"]} == {"KLD103", "KLD201", "KLD202"}
    # the command line wins: --select replaces, --ignore adds, -o and --fail-on override
    rc, out, _ = run_cli(capsys, "lint", "-o", "text", "--select", "KLD2", "--ignore", "KLD201", "README.md")
    assert rc == 0 and "KLD202" in out and "KLD201" not in out and "KLD103" not in out
    # library API: the same config object
    assert {f.rule_id for f in lint_card(card, config=cfg).findings} == {"KLD103", "KLD201", "KLD202"}


@pytest.mark.parametrize(
    ("toml", "message"),
    [
        ("[tool.kldcard]\nselct = ['KLD1']\n", "unknown key(s) selct"),
        ("[tool.kldcard]\nselect = 'KLD1'\n", "select must be a list"),
        ("[tool.kldcard]\nfail-on = 'fatal'\n", "fail-on must be one of"),
        ("[tool.kldcard\n", "invalid TOML"),
        ("[tool.kldcard]\nignore = ['XYZ']\n", "unknown rule code or prefix 'XYZ'"),
    ],
)
def test_bad_config_is_exit_2_with_one_line(tmp_path, monkeypatch, capsys, toml, message):
    (tmp_path / "pyproject.toml").write_text(toml)
    monkeypatch.chdir(tmp_path)
    rc, out, err = run_cli(capsys, "lint", COMPLIANT)
    assert rc == 2 and out == ""
    assert message in err and err.count("\n") == 1


def test_explicit_config_path(tmp_path, capsys):
    cfg = tmp_path / "lint.toml"
    cfg.write_text("[tool.kldcard]\nignore = ['KLD2']\n")
    rc, _, _ = run_cli(capsys, "lint", "--config", cfg, EXAMPLES / "KLD201-negative-mean-kld.md")
    assert rc == 0
    with pytest.raises(UsageError, match="not found"):
        load_config(tmp_path / "missing.toml")


def test_list_rules_and_show_rule(capsys):
    rc, out, _ = run_cli(capsys, "lint", "--list-rules")
    assert rc == 0
    assert [line.split()[0] for line in out.splitlines()] == list(all_rules())
    rc, out, _ = run_cli(capsys, "lint", "--show-rule", "kld204")
    assert rc == 0 and out.startswith("# KLD204 direction-unstated\n") and "## Use instead" in out
    rc, _, err = run_cli(capsys, "lint", "--show-rule", "KLD999")
    assert rc == 2 and "unknown rule" in err


def test_no_path_is_a_usage_error(capsys):
    rc, _, err = run_cli(capsys, "lint")
    assert rc == 2 and err.startswith("kldcard: error: no PATH given")


def test_multiple_files_one_result(capsys):
    rc, out, _ = run_cli(capsys, "lint", "-o", "json", COMPLIANT, *FAILING[:3])
    report = json.loads(out)
    assert rc == 1 and len(report["files"]) == 4
    assert {e["file"] for e in report["errors"]} == {str(p) for p in FAILING[:3]}


def test_config_extend_select_and_per_file_ignores_are_validated(tmp_path):
    good = tmp_path / "pyproject.toml"
    good.write_text(
        '[tool.kldcard]\nselect = ["KLD1"]\nextend-select = ["KLD303"]\n\n[tool.kldcard.per-file-ignores]\n"old/*.md" = ["KLD105"]\n',
        encoding="utf-8",
    )
    cfg = load_config(good)
    codes = enabled_codes(config=cfg)
    assert "KLD303" in codes and "KLD105" in codes and "KLD202" not in codes
    assert "KLD105" not in enabled_codes(config=cfg, file=str(tmp_path / "old" / "a.md"))
    bad = tmp_path / "bad.toml"
    bad.write_text('[tool.kldcard]\nper-file-ignores = ["KLD1"]\n', encoding="utf-8")
    with pytest.raises(UsageError, match="per-file-ignores must be a table"):
        load_config(bad)
    bad.write_text('[tool.kldcard.per-file-ignores]\n"*.md" = "KLD1"\n', encoding="utf-8")
    with pytest.raises(UsageError, match="must be a list of rule codes"):
        load_config(bad)
