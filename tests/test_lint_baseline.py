"""Baselines keyed by file, rule and the claim's text: moved claims stay baselined, changed numbers do not."""

from __future__ import annotations

import json

from helpers_lint import EXAMPLES, run_cli

KLD303 = EXAMPLES / "KLD303-prose-eval-text-missing.md"
ROW = "| Q4_K_M | 0.0231 [0.0224, 0.0238] | 0.0087 | 0.3120 |"


def _setup(tmp_path, capsys):
    card = tmp_path / "README.md"
    card.write_bytes(KLD303.read_bytes())
    base = tmp_path / "kldcard-baseline.json"
    rc, _, err = run_cli(capsys, "lint", "--write-baseline", base, card)
    assert rc == 0 and "wrote 1 finding" in err
    doc = json.loads(base.read_text(encoding="utf-8"))
    assert doc["format"] == "kldcard-baseline/1" and [e["rule"] for e in doc["findings"]] == ["KLD303"]
    assert "line" not in doc["findings"][0]
    return card, base


def test_baselined_finding_is_not_reported(tmp_path, capsys):
    card, base = _setup(tmp_path, capsys)
    rc, out, err = run_cli(capsys, "lint", "--baseline", base, "-o", "json", card)
    assert (rc, json.loads(out)["errors"], err) == (0, [], "")


def test_moved_claim_stays_baselined(tmp_path, capsys):
    card, base = _setup(tmp_path, capsys)
    text = card.read_text(encoding="utf-8")
    card.write_text(text.replace("## KL divergence\n", "## KL divergence\n\nSome words first.\n\nAnd more.\n\n"), encoding="utf-8")
    rc, out, _ = run_cli(capsys, "lint", "-o", "json", card)
    moved = json.loads(out)["errors"][0]["line"]
    rc, out, err = run_cli(capsys, "lint", "--baseline", base, "-o", "json", card)
    assert moved > 9 and rc == 0 and json.loads(out)["errors"] == [] and err == ""


def test_changed_number_is_a_new_finding_and_the_old_entry_is_stale(tmp_path, capsys):
    card, base = _setup(tmp_path, capsys)
    card.write_text(card.read_text(encoding="utf-8").replace(ROW, ROW.replace("0.0231", "0.0199")), encoding="utf-8")
    rc, out, err = run_cli(capsys, "lint", "--baseline", base, "-o", "json", card)
    assert rc == 1 and [e["rule_id"] for e in json.loads(out)["errors"]] == ["KLD303"]
    assert "no longer occurs" in err and "KLD303" in err


def test_fixed_card_reports_stale_entries_and_passes(tmp_path, capsys):
    card, base = _setup(tmp_path, capsys)
    card.write_bytes((EXAMPLES / "compliant.md").read_bytes())
    rc, _, err = run_cli(capsys, "lint", "--baseline", base, card)
    assert rc == 0 and "no longer occurs" in err


def test_bad_baseline_is_a_usage_error(tmp_path, capsys):
    bad = tmp_path / "b.json"
    bad.write_text("{}", encoding="utf-8")
    rc, _, err = run_cli(capsys, "lint", "--baseline", bad, KLD303)
    assert rc == 2 and "not a kldcard baseline" in err


KLD312 = EXAMPLES / "KLD312-prose-unlabelled-kld-number.md"
SENTENCE = "In short, Q4_K_M reaches a KLD of 0.0231 against BF16."


def test_prose_claim_moved_and_rewrapped_stays_baselined_changed_number_does_not(tmp_path, capsys):
    card = tmp_path / "README.md"
    text = KLD312.read_text(encoding="utf-8")
    card.write_text(text, encoding="utf-8")
    base = tmp_path / "b.json"
    run_cli(capsys, "lint", "--write-baseline", base, card)
    # the sentence moves to the top of the body and is wrapped over two lines
    moved = text.replace(SENTENCE, "").replace("\n# ", "\n" + SENTENCE.replace(" against", "\nagainst") + "\n\n# ", 1)
    card.write_text(moved, encoding="utf-8")
    rc, out, _ = run_cli(capsys, "lint", "-o", "json", card)
    assert [e["rule_id"] for e in json.loads(out)["errors"]] == ["KLD312"]
    rc, out, _ = run_cli(capsys, "lint", "--baseline", base, "-o", "json", card)
    assert rc == 0 and json.loads(out)["errors"] == []
    card.write_text(moved.replace("0.0231", "0.0233", 1), encoding="utf-8")
    rc, out, err = run_cli(capsys, "lint", "--baseline", base, "-o", "json", card)
    assert rc == 1 and [e["rule_id"] for e in json.loads(out)["errors"]] == ["KLD312"] and "no longer occurs" in err


def test_front_matter_finding_moved_keeps_its_baseline(tmp_path, capsys):
    src = EXAMPLES / "KLD206-model-index-mismatch.md"
    card = tmp_path / "README.md"
    text = src.read_text(encoding="utf-8")
    card.write_text(text, encoding="utf-8")
    base = tmp_path / "b.json"
    run_cli(capsys, "lint", "--write-baseline", base, card)
    card.write_text(text.replace("license: llama3.1\n", "license: llama3.1\nlanguage:\n- en\n- fr\n", 1), encoding="utf-8")
    rc, out, _ = run_cli(capsys, "lint", "--baseline", base, "-o", "json", card)
    assert rc == 0 and json.loads(out)["errors"] == []
    card.write_text(text.replace("value: 0.0125", "value: 0.0126"), encoding="utf-8")
    rc, out, _ = run_cli(capsys, "lint", "--baseline", base, "-o", "json", card)
    assert rc == 1 and [e["rule_id"] for e in json.loads(out)["errors"]] == ["KLD206"]
