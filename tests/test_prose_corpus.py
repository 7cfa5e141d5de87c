"""The prose linter against the hand-labelled corpus: claims, disclosures, flags, and clean negatives."""

from __future__ import annotations

import pytest
from helpers_prose import (
    CORPUS,
    claim_lines,
    flags,
    labels,
    report,
    score,
    statuses,
    table,
)

from kldcard.card.document import read_card
from kldcard.lint.prose import check_prose
from kldcard.lint.runner import lint_card

LABELS = labels()
WITH_CLAIMS = sorted(n for n, lab in LABELS.items() if lab["claims"])
WITHOUT_CLAIMS = sorted(n for n, lab in LABELS.items() if not lab["claims"])


def test_corpus_is_labelled_completely():
    on_disk = {p.name for p in CORPUS.glob("*.md")}
    assert on_disk == set(LABELS)
    assert len(on_disk) >= 25
    assert len(WITHOUT_CLAIMS) >= 5  # cards with no KLD at all, and tricky negatives
    for name in WITH_CLAIMS:
        lab = LABELS[name]
        assert set(lab["D"]) == set(range(1, 10)), name
        assert set(lab["D"].values()) <= {"S", "I", "M"}, name
        assert lab["D"][1] != "I" and lab["D"][4] != "I", f"{name}: D1 and D4 are never inferred"
        assert set(lab["flags"]) <= {"quantized-reference", "eval-from-calibration", "unlabelled-number"}, name


def test_per_disclosure_precision_and_recall_meet_the_targets():
    s = score()
    print("\n" + table())  # quoted in the README; run `pytest -s` or `python tests/helpers_prose.py`
    for n in range(1, 10):
        assert s.precision(n) >= 0.95, f"D{n} precision {s.precision(n):.2f}\n{table()}"
        assert s.recall(n) >= 0.90, f"D{n} recall {s.recall(n):.2f}\n{table()}"


@pytest.mark.parametrize("name", WITH_CLAIMS)
def test_claims_are_found_on_the_labelled_lines(name):
    assert claim_lines(report(name)) == LABELS[name]["claims"]


@pytest.mark.parametrize("name", WITH_CLAIMS)
def test_flags_match_the_labels(name):
    assert flags(report(name)) == set(LABELS[name]["flags"])


@pytest.mark.parametrize("name", WITH_CLAIMS)
def test_stated_inferred_missing_match_the_labels(name):
    want = {n: LABELS[name]["D"][n] for n in range(1, 10)}
    assert statuses(report(name)) == want


@pytest.mark.parametrize("name", WITHOUT_CLAIMS)
def test_cards_without_kld_claims_get_zero_findings(name):
    assert report(name).claims == []
    assert check_prose(read_card(CORPUS / name)) == []
    assert lint_card(CORPUS / name).findings == []


@pytest.mark.parametrize("name", WITH_CLAIMS)
def test_every_card_with_a_gap_fails_the_lint(name):
    """The CI use: a free-form card that lacks a disclosure produces an error-level KLD3xx finding."""
    lab = LABELS[name]
    findings = lint_card(CORPUS / name).findings
    errors = {f.rule_id for f in findings if f.severity == "error"}
    missing = {f"KLD30{n}" for n, v in lab["D"].items() if v == "M"}
    assert errors == missing
    assert all(f.rule_id.startswith("KLD3") and f.pointer == "" for f in findings)
    info = [f for f in findings if f.rule_id == "KLD313"]
    inferred = [n for n, v in lab["D"].items() if v == "I"]
    assert len(info) == (1 if inferred else 0)  # one info finding listing every inferred item
    for n in inferred:
        assert f"D{n} " in info[0].message
