"""Cases a review of `kldcard comparable` found (issue 24/28 merge): hostile JSON is one line, and a scaffold's
TODO placeholders are "not stated", never values that differ."""

from __future__ import annotations

from helpers_lint import COMPLIANT, run_cli


def test_results_json_with_a_huge_integer_is_one_line_exit_2(capsys, tmp_path):
    big = tmp_path / "big.json"
    big.write_text('{"a": ' + "9" * 5000 + "}", encoding="utf-8")
    rc, out, err = run_cli(capsys, "comparable", str(big), str(COMPLIANT))
    assert rc == 2 and "Traceback" not in err and "4,300 digits" in err


def test_results_json_with_nan_is_refused(capsys, tmp_path):
    bad = tmp_path / "nan.json"
    bad.write_text('{"format": "kldcard-compare-result", "forward_kl": {"mean": NaN}}', encoding="utf-8")
    rc, _, err = run_cli(capsys, "comparable", str(bad), str(COMPLIANT))
    assert rc == 2 and "unusable JSON" in err


def test_a_scaffolded_card_against_its_original_is_cannot_tell_not_different(capsys, tmp_path):
    text = "# Card\n\nMean KLD 0.05 vs BF16 on wikitext-2, 512 ctx.\n"
    original, scaffolded = tmp_path / "original.md", tmp_path / "scaffolded.md"
    original.write_text(text, encoding="utf-8")
    scaffolded.write_text(text, encoding="utf-8")
    rc, _, _ = run_cli(capsys, "lint", "--fix", "--scaffold", str(scaffolded))
    assert "kld_evaluation:" in scaffolded.read_text(encoding="utf-8") and "TODO" in scaffolded.read_text(encoding="utf-8")
    rc, out, _ = run_cli(capsys, "comparable", str(scaffolded), str(original))
    assert rc == 1 and "cannot tell" in out and "TODO" not in out.split("verdict:")[1]
