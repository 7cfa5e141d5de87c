"""The learnt second reading (kldcard.lint.read.learnt): where no rule reads a disclosure but the card's words
say it, the reading is ``incomplete`` with the line and the probability as evidence, never a value; on real cards."""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from helpers_lint import run_cli
from helpers_prose import REAL, REAL2

from kldcard.card.document import read_card
from kldcard.lint.prose import analyse, check_prose
from kldcard.lint.read import learnt
from kldcard.lint.read.complete import CAN_BE_INCOMPLETE
from kldcard.lint.reporters import report_schema
from kldcard.lint.scaffold import scaffold_block

ROOT = Path(__file__).resolve().parent.parent
# real cards (renderings; sources in their index.yaml) whose disclosure no rule reads and the model does
AWQ_REPACK = REAL2 / "cards" / "native_awq_gptq_repack_kld_control.md"  # D1: "F16/BF16 ... reference" (labelled S)
BUDGET = REAL2 / "cards" / "quantize_budget_readme.md"  # D2: "build llama.cpp ..." (labelled M + incomplete)


def _trainer():
    spec = importlib.util.spec_from_file_location("train_reader", ROOT / "scripts" / "train_reader.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_weights_were_trained_on_the_labelled_corpus_as_it_is():
    """A changed label or card changes what the model should have learnt: retrain (scripts/train_reader.py)."""
    trainer = _trainer()
    rows = trainer.texts(set())
    recorded = learnt.model()["trained_on"]
    assert recorded == {"texts": len(rows), "digest": trainer.digest(rows)}, "run: python scripts/train_reader.py"
    assert sys.modules.get("numpy") is not None  # the trainer, not the linter, loads numerics


def test_learnt_readings_exist_only_where_an_incomplete_finding_does():
    kept = {int(n) for n in learnt.model()["disclosures"]}
    assert kept and kept <= set(CAN_BE_INCOMPLETE)
    assert kept == set(learnt.DISCLOSURES)  # what the rule docs (KLD33n) say has a learnt reading
    for m in learnt.model()["disclosures"].values():
        assert 0.5 <= m["threshold"] < 1 and len(m["weights"]) <= 3000


@pytest.mark.parametrize(("path", "n"), [(AWQ_REPACK, 1), (BUDGET, 2)])
def test_a_disclosure_no_rule_reads_is_incomplete_with_the_line_as_evidence(path, n):
    card = read_card(path)
    rules = analyse(card, learnt=False)
    assert rules.status(n) == "missing"  # what the rules alone would report as KLD30n
    report = analyse(card)
    d = report.readings[0].disclosures[n]
    assert report.status(n) == "incomplete" and d.value == {}
    (e,) = d.evidence
    assert e.learnt is not None and e.learnt > learnt.model()["disclosures"][str(n)]["threshold"]
    assert e.text and e.text[:20] in path.read_text(encoding="utf-8").splitlines()[e.line - 1]
    assert d.needs[0].startswith("state it in a form a reader can check")
    codes = {f.rule_id: f.message for f in check_prose(card)}
    assert f"KLD30{n}" not in codes and "seems to state the" in codes[f"KLD33{n}"]
    assert f"p={e.learnt:.2f}" in codes[f"KLD33{n}"]


def test_a_card_that_does_not_say_it_keeps_its_missing_verdict(tmp_path):
    """The look-alike: a short card with a KLD number and nothing else is not given a runtime by its words."""
    path = tmp_path / "README.md"
    path.write_text("# Q4_K_M\n\nMean KLD 0.021 for Q4_K_M.\n", encoding="utf-8")
    report = analyse(read_card(path))
    assert all(report.status(n) == "missing" for n in (1, 2, 3, 6))
    assert {"KLD301", "KLD302", "KLD303", "KLD306"} <= {f.rule_id for f in check_prose(read_card(path))}


def test_every_learnt_reading_on_the_first_real_set_points_at_a_line_of_its_card():
    for path in sorted((REAL / "cards").glob("*.md")):
        report = analyse(read_card(path))
        lines = path.read_text(encoding="utf-8").splitlines()
        for claim in report.readings:
            for d in claim.disclosures.values():
                for e in d.evidence:
                    if e.learnt is not None:
                        assert d.status == "incomplete" and d.value == {} and e.line is not None
                        assert 1 <= e.line <= len(lines)


def test_explain_and_json_show_the_learnt_evidence(capsys):
    import jsonschema

    rc, out, _ = run_cli(capsys, "lint", "--explain", str(AWQ_REPACK))
    row = next(i for i, line in enumerate(out.splitlines()) if line.startswith("  D1 reference checkpoint"))
    assert "incomplete" in out.splitlines()[row]
    assert "learnt reading, p=" in out.splitlines()[row + 1]
    rc, out, _ = run_cli(capsys, "lint", "-o", "json", str(AWQ_REPACK))
    report = json.loads(out)
    jsonschema.validate(report, report_schema())
    d1 = report["reading"][str(AWQ_REPACK)][0]["disclosures"][0]
    assert d1["status"] == "incomplete" and d1["value"] == {} and 0 < d1["evidence"][0]["learnt"] <= 1


def test_the_scaffold_invents_no_value_for_a_learnt_reading():
    """The learnt D1 reading has no value, so the scaffold's reference stays a TODO placeholder."""
    from kldcard.lint.placeholders import is_todo
    from kldcard.lint.reader import read_card as read_claims_of

    readings = read_claims_of(read_card(AWQ_REPACK))
    assert readings[0].disclosures[1].evidence[0].learnt is not None
    reference = scaffold_block(readings)["reference"]
    assert is_todo(reference["model"]) and is_todo(reference["revision"]), reference


def test_features_read_numbers_as_people_write_them():
    assert learnt.tokens("KLD 0,1137 at 512 tokens, 7 runs, 12345678") == ["kld", "<dec>", "at", "512", "tokens", "<n1>", "runs", "<long>"]
    assert {"kl", "散度", "kl 散度"} <= learnt.features("KL 散度")  # CJK runs as character pairs
    assert learnt.features("wiki test") == {"wiki", "test", "wiki test"}


def test_a_weights_file_of_other_features_is_refused(tmp_path, monkeypatch):
    stale = tmp_path / "w.json"
    stale.write_text(json.dumps({"features": learnt.FEATURES + 1, "disclosures": {}}), encoding="utf-8")
    monkeypatch.setattr(learnt, "WEIGHTS", stale)
    learnt.model.cache_clear()
    try:
        with pytest.raises(RuntimeError, match="train_reader"):
            learnt.model()
    finally:
        learnt.model.cache_clear()
