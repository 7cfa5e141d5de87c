"""`kldcard comparable` on structured cards rendered by kldcard that differ in exactly one disclosure.

Each case edits one field of the compliant example card's ``kld_evaluation`` block (the card kldcard
renders) and compares the edited card with the original: the edited row gets the expected verdict,
every other row is ``same``, and the overall verdict and exit code follow the rule's kind.
"""

from __future__ import annotations

import copy
import json

import pytest
from helpers_lint import COMPLIANT, front_matter, run_cli, write_card

from kldcard.comparable import comparable
from kldcard.lint.quantity import RULES

BODY = COMPLIANT.read_text(encoding="utf-8").split("---\n", 2)[2]


def _edit(meta: dict, path: str, value) -> dict:
    meta = copy.deepcopy(meta)
    node = meta["kld_evaluation"]
    *parents, last = path.split("/")
    for p in parents:
        node = node[int(p)] if p.isdigit() else node[p]
    if value is _DELETE:
        del node[last]
    else:
        node[last] = value
    return meta


_DELETE = object()

# (case, edited field, new value, row, row verdict, overall verdict)
CASES = [
    ("reference-dtype", "reference/dtype", "q8_0", "reference", "differs", "not comparable"),
    ("reference-dtype-spelling", "reference/dtype", "bfloat16", "reference", "compatible", "comparable"),
    ("runtime-build", "candidates/0/runtime/engine_version", "b4600", "runtime", "differs", "comparable"),
    ("text-content", "evaluation_text/sha256", "0" * 64, "text", "differs", "not comparable"),
    ("text-renamed-same-sha", "evaluation_text/name", "wiki.test.raw", "text", "compatible", "comparable"),
    ("calibration-other-set", "candidates/0/calibration/dataset", "other/calibration", "calibration", "differs",
     "comparable"),
    ("context-length", "context/n_ctx", 8192, "context", "differs", "not comparable"),
    ("positions-scheme", "positions/scheme", "all", "positions", "differs", "not comparable"),
    ("direction-unstated", "direction/reported", ["reverse"], "direction", "unknown", "cannot tell"),
    # without log_base the block's numbers have no unit: nats and bits are ln 2 apart
    ("direction-unit-unstated", "direction/log_base", _DELETE, "direction", "unknown", "cannot tell"),
    ("truncation-top-k", "vocabulary/truncation", "floor", "truncation", "differs", "not comparable"),
    ("statistic-median", "aggregation/statistic", "median", "statistic", "differs", "not comparable"),
    ("uncertainty-method", "aggregation/uncertainty/method", "se-iid", "uncertainty", "differs", "comparable"),
]


@pytest.mark.parametrize(("case", "field", "value", "row", "verdict", "overall"), CASES, ids=[c[0] for c in CASES])
def test_one_disclosure_changed(tmp_path, case, field, value, row, verdict, overall):
    meta = _edit(front_matter(COMPLIANT), field, value)
    if case == "truncation-top-k":
        meta["kld_evaluation"]["vocabulary"]["floor_nats"] = 16.0
    edited = write_card(tmp_path / f"{case}.md", meta, BODY)
    result = comparable([str(COMPLIANT), str(edited)])
    rows = {r.rule.row: r.verdict for r in result.verdict.rows}
    assert rows.pop(row) == verdict
    assert set(rows.values()) == {"same"}, rows
    assert result.verdict.overall == overall
    assert result.exit_code == (0 if overall == "comparable" else 1)


def test_every_row_of_the_table_is_exercised_by_a_case():
    assert {c[3] for c in CASES} == {r.row for r in RULES}
    assert {c[4] for c in CASES} == {"differs", "compatible", "unknown"}


def test_overall_sentence_names_the_difference_with_both_values(tmp_path, capsys):
    meta = _edit(_edit(front_matter(COMPLIANT), "reference/dtype", "q8_0"), "context/n_ctx", 8192)
    edited = write_card(tmp_path / "b.md", meta, BODY)
    rc, out, err = run_cli(capsys, "comparable", COMPLIANT, edited)
    assert rc == 1 and err == ""
    assert "verdict: not comparable: different reference (bf16 vs q8_0) and context (512 vs 8192)" in out


def test_cannot_tell_names_the_card_and_what_it_leaves_out(tmp_path, capsys):
    meta = front_matter(COMPLIANT)
    del meta["kld_evaluation"]["evaluation_text"]
    del meta["kld_evaluation"]["positions"]
    edited = write_card(tmp_path / "b.md", meta, BODY)
    rc, out, _ = run_cli(capsys, "comparable", COMPLIANT, edited)
    assert rc == 1
    assert "verdict: cannot tell: B does not say which text or which positions" in out


def test_runtime_difference_is_a_caveat_not_a_verdict(tmp_path, capsys):
    meta = _edit(front_matter(COMPLIANT), "candidates/0/runtime/engine_version", "b4600")
    edited = write_card(tmp_path / "b.md", meta, BODY)
    rc, out, _ = run_cli(capsys, "comparable", COMPLIANT, edited)
    assert rc == 0
    assert "verdict: comparable, with caveats: runtime differs (b4500 vs b4600): a cross-stack difference is part" in out


def test_calibration_overlapping_the_text_is_flagged(tmp_path, capsys):
    meta = _edit(front_matter(COMPLIANT), "candidates/0/calibration/overlaps_evaluation_text", True)
    edited = write_card(tmp_path / "b.md", meta, BODY)
    rc, out, _ = run_cli(capsys, "comparable", COMPLIANT, edited)
    assert rc == 0
    assert "flag: calibration overlaps the evaluation text (B): that candidate was tuned on the text" in out


def test_json_carries_every_row_with_its_evidence(tmp_path, capsys):
    meta = _edit(front_matter(COMPLIANT), "context/n_ctx", 8192)
    edited = write_card(tmp_path / "b.md", meta, BODY)
    rc, out, _ = run_cli(capsys, "comparable", COMPLIANT, edited, "-o", "json")
    data = json.loads(out)
    assert rc == 1 and data["verdict"] == "not comparable"
    assert [r["row"] for r in data["rows"]] == [r.row for r in RULES]
    ctx = next(r for r in data["rows"] if r["row"] == "context")
    assert ctx["verdict"] == "differs" and ctx["detail"] == "512 vs 8192"
    ev = ctx["cells"]["B"]["evidence"][0]
    assert ev["key"] == "/kld_evaluation/context" and ev["line"] > 1
    assert ctx["cells"]["B"]["value"]["n_ctx"] == 8192


def test_markdown_is_a_table_for_a_hub_discussion(tmp_path, capsys):
    meta = _edit(front_matter(COMPLIANT), "positions/scheme", "all")
    edited = write_card(tmp_path / "b.md", meta, BODY)
    rc, out, _ = run_cli(capsys, "comparable", COMPLIANT, edited, "-o", "markdown")
    assert rc == 1
    assert out.startswith("**Are these KLD numbers comparable?** not comparable: different positions")
    assert "| disclosure | A | B | verdict |" in out
    assert "| D6 sampled positions | llama-perplexity 142,800 positions | all 142,800 positions | **differs** |" in out


def test_one_candidate_of_a_card_by_name_and_by_line(tmp_path, capsys):
    meta = front_matter(COMPLIANT)
    second = copy.deepcopy(meta["kld_evaluation"]["candidates"][0])
    second["name"] = "IQ4_XS"
    second["vocabulary"] = {**meta["kld_evaluation"]["vocabulary"], "truncation": "top-k", "top_k": 20,
                            "tail": "lumped"}
    meta["kld_evaluation"]["candidates"].append(second)
    card = write_card(tmp_path / "two.md", meta, BODY)
    rc, out, _ = run_cli(capsys, "comparable", card)  # within one card: the top-k candidate is another quantity
    assert rc == 1 and "not comparable: different truncation (full vs top-k k=20)" in out
    rc, out, _ = run_cli(capsys, "comparable", f"{card}::iq4_xs", COMPLIANT)
    assert rc == 1 and "IQ4_XS" in out and "Q4_K_M 0.0213" in out
    line = next(i for i, t in enumerate(card.read_text().splitlines(), 1) if "name: IQ4_XS" in t)
    rc, out, _ = run_cli(capsys, "comparable", f"{card}#{line}", f"{card}::Q4_K_M")
    assert rc == 1 and "different truncation" in out


@pytest.mark.parametrize("arg", ["missing.md", "{card}::NOPE", "{card}#9999", "{json}"])
def test_unusable_input_is_one_line_and_exit_2(tmp_path, capsys, arg):
    other = tmp_path / "other.json"
    other.write_text('{"format": "something-else"}')
    rc, out, err = run_cli(capsys, "comparable", COMPLIANT, arg.format(card=COMPLIANT, json=other))
    assert rc == 2 and out == ""
    assert err.startswith("kldcard: error: ") and err.count("\n") == 1 and "Traceback" not in err


def test_no_control_characters_from_a_card_reach_any_output(tmp_path, capsys):
    meta = _edit(front_matter(COMPLIANT), "evaluation_text/name", "wiki\x1b[31m\u202etext\x07\u2028x")
    meta["kld_evaluation"]["candidates"][0]["name"] = "Q4\x1b]0;pwned\x07_K_M"
    edited = write_card(tmp_path / "b.md", meta, BODY)
    for fmt in ("text", "json", "markdown"):
        _, out, _ = run_cli(capsys, "comparable", COMPLIANT, edited, "-o", fmt)
        bad = [c for c in out if c != "\n" and not c.isprintable()]
        assert bad == [], (fmt, bad)
        assert "\\u001b" not in out and "\\u202e" not in out


def test_help_names_every_json_key(capsys):
    from kldcard.cli.comparable import EPILOG

    _, out, _ = run_cli(capsys, "comparable", COMPLIANT, "-o", "json")
    data = json.loads(out)
    keys = set(data) | set(data["rows"][0]) | set(data["columns"][0]) | set(data["ranking"])
    keys |= set(data["columns"][0]["numbers"][0]) | set(next(iter(data["rows"][0]["cells"].values())))
    assert [k for k in sorted(keys) if k not in EPILOG] == []
