"""``kldcard lint --fix`` / ``--diff`` on real cards: the fixed findings go, nothing else changes."""

from __future__ import annotations

import difflib
import json
import shutil

import pytest
from helpers_lint import EXAMPLES, run_cli

from kldcard.card.fixes import respell_exponent
from kldcard.card.yaml import loads_as_yaml11_float
from kldcard.lint.runner import lint_card


def _copy(tmp_path, name):
    dst = tmp_path / "README.md"
    shutil.copyfile(EXAMPLES / name, dst)
    return dst


def _changed_lines(before: bytes, after: bytes) -> list[str]:
    return [
        ln for ln in difflib.unified_diff(before.decode().splitlines(True), after.decode().splitlines(True), n=0)
        if ln[:1] in "+-" and not ln.startswith(("+++", "---"))
    ]


@pytest.mark.parametrize("text,expected", [("1e-3", "1.0e-03"), ("213e-4", "213.0e-04"), ("2.5E5", "2.5e+05"), (".5e-3", "0.5e-03"), ("-3e10", "-3.0e+10")])
def test_respell_exponent_keeps_the_value_and_loads_as_a_float(text, expected):
    out = respell_exponent(text)
    assert out == expected and float(out) == float(text) and loads_as_yaml11_float(out)
    assert respell_exponent("0.001") is None


def test_fix_respells_a_yaml11_exponent_and_changes_only_that_line(tmp_path, capsys):
    card = _copy(tmp_path, "KLD007-invalid-value.md")
    before = card.read_bytes()
    assert [f.rule_id for f in lint_card(card).findings] == ["KLD007"]
    rc, out, err = run_cli(capsys, "lint", "--fix", card)
    assert rc == 0 and "fixed 1 finding" in err and "All checks passed" in out
    assert _changed_lines(before, card.read_bytes()) == ["-        mean: 213e-4\n", "+        mean: 213.0e-04\n"]


def test_fix_respells_a_model_index_exponent_value(tmp_path, capsys):
    card = _copy(tmp_path, "KLD004-metric-value-not-float.md")
    before = card.read_bytes()
    rc, _, _ = run_cli(capsys, "lint", "--fix", card)
    assert rc == 0 and lint_card(card).findings == []
    assert _changed_lines(before, card.read_bytes()) == ["-      value: 213e-4\n", "+      value: 213.0e-04\n"]


def test_fix_regenerates_model_index_from_the_block(tmp_path, capsys):
    card = _copy(tmp_path, "KLD206-model-index-mismatch.md")
    before = card.read_bytes()
    rc, out, _ = run_cli(capsys, "lint", "--fix", "-o", "json", card)
    after = card.read_bytes()
    assert rc == 0 and json.loads(out)["errors"] == []
    # only model-index changed: the text before it and the body after the front matter are byte-identical
    head = before.index(b"model-index:")
    assert after[:head] == before[:head]
    tail = before.index(b"\n---\n", head)
    assert after[after.index(b"\n---\n", head) :] == before[tail:]
    assert b"value: 0.021300" in after and b"value: 0.0125" not in after


def test_fix_never_invents_a_disclosure(tmp_path, capsys):
    # a model-index number without a valid block to regenerate it from stays as it is
    card = _copy(tmp_path, "KLD008-model-index-without-block.md")
    before = card.read_bytes()
    rc, _, _ = run_cli(capsys, "lint", "--fix", card)
    assert rc == 1 and card.read_bytes() == before


def test_fix_respells_a_misspelled_section_marker(tmp_path, capsys):
    card = _copy(tmp_path, "compliant.md")
    text = card.read_text(encoding="utf-8")
    card.write_text(text.replace("<!-- kldcard:end -->", "<!-- kldcard: end -->"), encoding="utf-8")
    before = card.read_bytes()
    assert [f.rule_id for f in lint_card(card).findings] == ["KLD005"]
    assert lint_card(card).findings[0].fixable
    rc, out, _ = run_cli(capsys, "lint", "--diff", card)
    assert rc == 1 and "-<!-- kldcard: end -->" in out and "+<!-- kldcard:end -->" in out and card.read_bytes() == before
    rc, _, _ = run_cli(capsys, "lint", "--fix", card)
    assert rc == 0 and card.read_text(encoding="utf-8") == text


def test_fix_moves_a_marker_sharing_its_line_and_drops_a_repeat(tmp_path, capsys):
    card = _copy(tmp_path, "compliant.md")
    text = card.read_text(encoding="utf-8")
    lines = text.split("\n")
    end = lines.index("<!-- kldcard:end -->")
    shared = "\n".join([*lines[: end - 1], lines[end - 1] + " <!-- kldcard:end -->", *lines[end + 1 :]])
    card.write_text(shared, encoding="utf-8")
    assert [f.rule_id for f in lint_card(card).findings] == ["KLD005"]
    run_cli(capsys, "lint", "--fix", card)
    fixed = card.read_text(encoding="utf-8")
    assert lint_card(card).findings == [] and fixed.replace("\n<!-- kldcard:end -->", " <!-- kldcard:end -->") == shared.replace(" <!-- kldcard:end -->", " <!-- kldcard:end -->")
    card.write_text(text.replace("<!-- kldcard:start schema=1 -->", "<!-- kldcard:start schema=1 -->\n\n<!-- kldcard:start schema=1 -->"), encoding="utf-8")
    run_cli(capsys, "lint", "--fix", card)
    assert card.read_text(encoding="utf-8") == text


def test_unbalanced_marker_without_a_safe_fix_is_left_alone(tmp_path, capsys):
    card = _copy(tmp_path, "KLD005-unbalanced-section-markers.md")
    before = card.read_bytes()
    rc, out, _ = run_cli(capsys, "lint", "--diff", card)
    assert (rc, out) == (0, "") and card.read_bytes() == before


def test_fix_keeps_crlf_and_bom(tmp_path, capsys):
    card = tmp_path / "README.md"
    src = (EXAMPLES / "KLD007-invalid-value.md").read_bytes().replace(b"\n", b"\r\n")
    card.write_bytes(b"\xef\xbb\xbf" + src)
    run_cli(capsys, "lint", "--fix", card)
    assert card.read_bytes() == b"\xef\xbb\xbf" + src.replace(b"mean: 213e-4", b"mean: 213.0e-04")


RENDER_DATA = EXAMPLES.parent.parent / "tests" / "data" / "render"
ALL_CARDS = sorted([*EXAMPLES.glob("*.md"), *RENDER_DATA.glob("*.md")])


@pytest.mark.parametrize("src", ALL_CARDS, ids=lambda p: p.name)
def test_fix_clears_exactly_the_fixable_findings(src, tmp_path, capsys):
    """On every real card: after --fix the findings marked fixable are gone and every other finding
    is still there, word for word; a card without fixable findings is not touched. A finding the
    fixed value used to mask (a respelled number now checked for its direction arg) may appear, at
    the fixed place only."""
    card = tmp_path / src.name
    shutil.copyfile(src, card)
    before = lint_card(card).findings
    data = card.read_bytes()
    run_cli(capsys, "lint", "--fix", card)
    after = lint_card(card).findings
    remaining = sorted((f.rule_id, f.message) for f in before if not f.fixable)
    now = sorted((f.rule_id, f.message) for f in after)
    assert all(r in now for r in remaining)
    fixed_at = [f.pointer.rsplit("/", 1)[0] for f in before if f.fixable and f.pointer]
    for f in after:
        if (f.rule_id, f.message) not in remaining:
            assert not f.fixable and any(f.pointer.startswith(p) for p in fixed_at), f
    if not any(f.fixable for f in before):
        assert card.read_bytes() == data


def test_fix_on_a_hand_written_model_index_keeps_comments_and_other_results(tmp_path, capsys):
    card = tmp_path / "README.md"
    shutil.copyfile(RENDER_DATA / "model_index_existing.md", card)
    before = card.read_bytes()
    rc, out, _ = run_cli(capsys, "lint", "--fix", card)
    # no kld_evaluation block: the value is respelled, nothing is regenerated or invented (KLD008 stays)
    assert rc == 1 and "KLD008" in out and "KLD004" not in out
    assert _changed_lines(before, card.read_bytes()) == ["-      value: 1e-3\n", "+      value: 1.0e-03\n"]
