"""Inline suppressions (markdownlint-style directives, front-matter comments), the unused-suppression
rule KLD009, malformed directives KLD010 and per-file ignores, on the real example cards."""

from __future__ import annotations

import json

from helpers_lint import EXAMPLES, run_cli

from kldcard.lint.config import LintConfig, parse_table
from kldcard.lint.runner import lint_card

KLD303 = EXAMPLES / "KLD303-prose-eval-text-missing.md"
KLD202 = EXAMPLES / "KLD202-quantized-reference.md"
TABLE_ROW = "| Q4_K_M | 0.0231 [0.0224, 0.0238] | 0.0087 | 0.3120 |"


def _card(tmp_path, text: str, name: str = "README.md"):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def _codes(path, **kw):
    return sorted(f.rule_id for f in lint_card(path, **kw).findings)


def _before_row(directive: str) -> str:
    return KLD303.read_text(encoding="utf-8").replace(TABLE_ROW, directive + "\n" + TABLE_ROW)


def test_example_card_fails_with_kld303_without_directive():
    assert _codes(KLD303) == ["KLD303"]


def test_disable_next_line_suppresses_the_finding_on_the_next_line(tmp_path):
    finding = lint_card(KLD303).findings[0]
    lines = KLD303.read_text(encoding="utf-8").splitlines()
    text = "\n".join([*lines[: finding.line - 1], "<!-- kldcard-disable-next-line KLD303 -- quoted from upstream -->", *lines[finding.line - 1 :]]) + "\n"
    p = _card(tmp_path, text)
    result = lint_card(p)
    assert result.findings == [] and result.suppressed == 1


def test_disable_next_line_for_another_line_is_unused_kld009(tmp_path):
    p = _card(tmp_path, KLD303.read_text(encoding="utf-8").replace("# Qwen3-8B Q4_K_M GGUF", "<!-- kldcard-disable-next-line KLD303 -->\n# Qwen3-8B Q4_K_M GGUF"))
    found = lint_card(p).findings
    assert sorted(f.rule_id for f in found) == ["KLD009", "KLD303"]
    unused = next(f for f in found if f.rule_id == "KLD009")
    assert unused.line == 6 and "kldcard-disable-next-line KLD303" in unused.message


def test_disable_enable_range_with_a_prefix(tmp_path):
    text = KLD303.read_text(encoding="utf-8").replace("## KL divergence", "## KL divergence\n\n<!-- kldcard-disable KLD3 -->")
    assert _codes(_card(tmp_path, text)) == []
    # re-enabled before the claim: the finding is back, and the disable suppressed nothing
    enabled = text.replace("<!-- kldcard-disable KLD3 -->", "<!-- kldcard-disable KLD3 -->\n<!-- kldcard-enable KLD303 -->")
    assert _codes(_card(tmp_path, enabled, "b.md")) == ["KLD009", "KLD303"]


def test_disable_file_and_disable_line(tmp_path):
    text = KLD303.read_text(encoding="utf-8") + "\n<!-- kldcard-disable-file KLD303 -- numbers quoted from the upstream card -->\n"
    assert _codes(_card(tmp_path, text)) == []
    line = KLD303.read_text(encoding="utf-8")
    finding = lint_card(KLD303).findings[0]
    lines = line.splitlines()
    lines[finding.line - 1] += " <!-- kldcard-disable-line KLD303 -->"
    # (the comment changes the header cell's text, so other prose rules may see it; KLD303 is gone)
    assert "KLD303" not in _codes(_card(tmp_path, "\n".join(lines) + "\n", "b.md"))


def test_directives_inside_code_fences_and_code_spans_are_text(tmp_path):
    text = KLD303.read_text(encoding="utf-8").replace(
        "## KL divergence", "## KL divergence\n\n```md\n<!-- kldcard-disable-file KLD303 -->\n```\n\nWrite `<!-- kldcard-disable-file -->` to silence a card."
    )
    assert _codes(_card(tmp_path, text)) == ["KLD303"]


def test_front_matter_comment_on_the_line_suppresses_a_pointer_finding(tmp_path):
    text = KLD202.read_text(encoding="utf-8")
    assert _codes(KLD202) == ["KLD202"]
    line = lint_card(KLD202).findings[0].line
    lines = text.splitlines()
    lines[line - 1] += "  # kldcard: ignore KLD202 -- upstream only publishes Q8_0"
    p = _card(tmp_path, "\n".join(lines) + "\n")
    result = lint_card(p)
    assert result.findings == [] and result.suppressed == 1
    # the same text inside a quoted string is not a comment
    quoted = text.replace("license: llama3.1", 'license: "llama3.1 # kldcard: ignore KLD202"', 1)
    assert "kldcard: ignore" in quoted
    assert _codes(_card(tmp_path, quoted, "q.md")) == ["KLD202"]


def test_front_matter_comment_on_a_parent_key_covers_its_subtree(tmp_path):
    text = KLD202.read_text(encoding="utf-8").replace("  reference:\n", "  reference:  # kldcard: ignore KLD202\n", 1)
    assert _codes(_card(tmp_path, text)) == []


def test_unknown_code_and_misspelled_directive_are_kld010(tmp_path, capsys):
    text = KLD303.read_text(encoding="utf-8").replace("## KL divergence", "## KL divergence\n\n<!-- kldcard-disable KLD999 -->\n<!-- kldcard-disabel KLD303 -->")
    p = _card(tmp_path, text)
    rc, out, _ = run_cli(capsys, "lint", "-o", "json", p)
    errors = json.loads(out)["errors"]
    assert rc == 1
    assert [e["rule_id"] for e in errors] == ["KLD010", "KLD010", "KLD303"]
    assert "KLD999" in errors[0]["message"]


def test_unused_suppression_of_a_deselected_rule_is_not_reported(tmp_path):
    p = _card(tmp_path, KLD303.read_text(encoding="utf-8").replace("# Qwen3", "<!-- kldcard-disable-next-line KLD202 -->\n# Qwen3"))
    assert _codes(p) == ["KLD009", "KLD303"]
    assert _codes(p, ignore=["KLD202"]) == ["KLD303"]


def test_per_file_ignores_from_pyproject(tmp_path, capsys):
    legacy = tmp_path / "legacy" / "org-model"
    legacy.mkdir(parents=True)
    card = legacy / "README.md"
    card.write_bytes(KLD303.read_bytes())
    other = _card(tmp_path, KLD303.read_text(encoding="utf-8"), "new.md")
    pyproject = tmp_path / "pyproject.toml"
    pyproject.write_text('[tool.kldcard.per-file-ignores]\n"legacy/**/README.md" = ["KLD3"]\n', encoding="utf-8")
    rc, out, _ = run_cli(capsys, "lint", "--config", pyproject, "-o", "json", card, other)
    files = {e["file"] for e in json.loads(out)["errors"]}
    assert rc == 1 and files == {str(other)}
    cfg = parse_table({"per-file-ignores": {"*.md": ["KLD303"]}})
    assert cfg.ignored_for("a/b/new.md") == ["KLD303"] and LintConfig().ignored_for("x.md") == []


def test_extend_select_adds_to_select(capsys):
    rc, out, _ = run_cli(capsys, "lint", "--select", "KLD1", "-o", "json", KLD303)
    assert rc == 0 and json.loads(out)["errors"] == []
    rc, out, _ = run_cli(capsys, "lint", "--select", "KLD1", "--extend-select", "KLD303", "-o", "json", KLD303)
    assert rc == 1 and [e["rule_id"] for e in json.loads(out)["errors"]] == ["KLD303"]


KLD312 = EXAMPLES / "KLD312-prose-unlabelled-kld-number.md"
SENTENCE = "In short, Q4_K_M reaches a KLD of 0.0231 against BF16."


def test_disable_line_on_a_prose_claim(tmp_path):
    assert _codes(KLD312) == ["KLD312"]
    text = KLD312.read_text(encoding="utf-8")
    assert SENTENCE in text
    p = _card(tmp_path, text.replace(SENTENCE, SENTENCE + " <!-- kldcard-disable-line KLD312 -- a summary of the table above -->"))
    result = lint_card(p)
    assert result.findings == [] and result.suppressed == 1
    # the wrong code on that line suppresses nothing and is reported
    p = _card(tmp_path, text.replace(SENTENCE, SENTENCE + " <!-- kldcard-disable-line KLD311 -->"), "b.md")
    assert _codes(p) == ["KLD009", "KLD312"]


def test_bare_directive_covers_every_rule(tmp_path):
    text = KLD312.read_text(encoding="utf-8").replace(SENTENCE, "<!-- kldcard-disable-next-line -->\n" + SENTENCE)
    assert _codes(_card(tmp_path, text)) == []


def test_unused_front_matter_comment_is_kld009_also_with_crlf(tmp_path):
    text = KLD202.read_text(encoding="utf-8").replace("license: llama3.1\n", "license: llama3.1  # kldcard: ignore KLD201 -- nothing here\n", 1)
    p = tmp_path / "README.md"
    p.write_bytes(text.replace("\n", "\r\n").encode("utf-8"))
    found = lint_card(p).findings
    assert sorted(f.rule_id for f in found) == ["KLD009", "KLD202"]
    assert next(f for f in found if f.rule_id == "KLD009").line == 2
    # and a used one on CRLF lines suppresses
    line = next(f for f in found if f.rule_id == "KLD202").line
    lines = KLD202.read_text(encoding="utf-8").split("\n")
    lines[line - 1] += "  # kldcard: ignore KLD202"
    p.write_bytes("\r\n".join(lines).encode("utf-8"))
    assert lint_card(p).findings == []
