"""The reading of free-form cards (kldcard.lint.reader): per claim and disclosure a status, a value
and the evidence; honest verdicts (KLD30x only when nothing was found, KLD33x when found in part);
``kldcard lint --explain`` and the JSON ``reading`` field, on real cards (tests/data/real_cards)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from helpers_lint import ROOT, run_cli
from helpers_reading import card, reading

from kldcard.card.document import read_card
from kldcard.lint.prose import check_prose
from kldcard.lint.reader import read_card as read_claims_of
from kldcard.lint.reading import STATUSES, VALUE_KEYS
from kldcard.lint.reporters import report_schema

REAL = Path(__file__).parent / "data" / "real_cards" / "cards"


def codes(text: str) -> set[str]:
    return {f.rule_id for f in check_prose(card(text))}


# ---- the reading's shape on every real card ---------------------------------------------------


@pytest.mark.parametrize("path", sorted(REAL.glob("*.md")), ids=lambda p: p.stem)
def test_every_real_card_reads_into_the_contract(path):
    """Nine readings per claim; only known value keys; evidence for all but missing; needs for incomplete."""
    c = read_card(path)
    for claim in read_claims_of(c):
        assert sorted(claim.disclosures) == list(range(1, 10))
        for n, d in claim.disclosures.items():
            assert d.status in STATUSES
            assert set(d.value) <= set(VALUE_KEYS[n]) | ({"direction", "unit"} if n == 7 else set()), (n, d.value)
            assert bool(d.evidence) == (d.status != "missing"), (n, d)
            assert (d.status == "incomplete") <= bool(d.needs), (n, d)
            for e in d.evidence:
                assert (e.line is not None) or e.key is not None
                if e.line is not None and e.tool is None:  # a quoted span is on that line of the file
                    line = c.text.splitlines()[e.line - 1]
                    assert e.text.rstrip("…")[:20] in " ".join(line.split()), (path.name, e)
        json.dumps(claim.to_json())  # plain JSON types


# ---- honest verdicts: incomplete, never "does not state" -----------------------------------------

BASE = "Mean KLD 0.0231 ± 0.0002 (token mean) for Q4_K_M.\n"


def test_reference_named_in_front_matter_only_is_incomplete_not_missing():
    text = "---\nbase_model: google/gemma-3-12b-it\nbase_model_relation: quantized\n---\n" + BASE
    d = reading(text, 1)
    assert d.status == "incomplete" and d.value == {"repo": "google/gemma-3-12b-it"}
    assert d.evidence[0].key == "/base_model"
    found = check_prose(card(text))
    assert "KLD301" not in {f.rule_id for f in found}
    msg = next(f.message for f in found if f.rule_id == "KLD331")
    assert "names google/gemma-3-12b-it as the reference (front matter /base_model)" in msg
    assert "pin its revision" in msg and "give its dtype" in msg
    assert next(f for f in found if f.rule_id == "KLD331").severity == "warning"


def test_a_finetune_base_model_is_not_the_reference():
    text = "---\nbase_model: google/gemma-3-12b-it\nbase_model_relation: finetune\n---\n" + BASE
    assert reading(text, 1).status == "missing" and "KLD301" in codes(text)


@pytest.mark.parametrize(
    ("n", "sentence", "status", "value"),
    [
        (1, "KLD vs the BF16 weights.", "incomplete", {"dtype": "BF16", "quantized": False}),
        (1, "Reference: Qwen/Qwen3-8B@b968826d9c46dd6066d109eabc6255188de91218 (BF16).", "stated",
         {"repo": "Qwen/Qwen3-8B", "revision": "b968826d9c46dd6066d109eabc6255188de91218", "dtype": "BF16", "quantized": False}),
        (2, "Measured with llama.cpp on an RTX 4090.", "incomplete", {"engine": "llama.cpp", "device": "RTX 4090"}),
        (2, "Both models were evaluated with llama.cpp.", "incomplete", {"engine": "llama.cpp"}),  # issue 28
        (2, "Measured with llama.cpp b6510 on an RTX 4090.", "stated", {"engine": "llama.cpp", "version": "b6510", "device": "RTX 4090"}),
        (3, "Evaluated on wiki.test.raw.", "incomplete", {"name": "wiki.test.raw"}),
        (3, "Evaluated on the wikitext-2-raw-v1 test split.", "stated",
         {"name": "wikitext-2-raw-v1", "source": "Salesforce/wikitext wikitext-2-raw-v1 test"}),
        (4, "The imatrix was computed from calibration_datav3.txt.", "incomplete", {"dataset": "calibration_datav3.txt"}),
        (4, "The imatrix was computed from calibration_datav3.txt (300k tokens).", "stated",
         {"dataset": "calibration_datav3.txt", "size": "300k tokens"}),
        (4, "Static quants, no imatrix.", "stated", {"none": True}),
        (5, "Scored with 512 tokens per chunk.", "incomplete", {"n_ctx": 512}),
        (5, "Scored with 512 tokens per chunk, --chunks 250.", "stated", {"n_ctx": 512, "chunks": 250}),
        (6, "Over 204,800 total positions.", "incomplete", {"count": 204800}),
        (6, "All positions scored, 204,800 total positions.", "stated", {"scheme": "all", "count": 204800}),
        (9, "Bootstrap confidence intervals over windows.", "incomplete", {"uncertainty": "Bootstrap"}),
    ],
)
def test_incomplete_and_complete_per_disclosure(n, sentence, status, value):
    text = f"Q4_K_M reaches a KLD of 0.0231. {sentence}\n"
    d = reading(text, n)
    assert (d.status, {k: v for k, v in d.value.items() if k in value}) == (status, value)
    found = codes(text)
    assert f"KLD30{n}" not in found
    assert (f"KLD33{n}" in found) == (status == "incomplete")


def test_a_kld_value_in_the_sentence_is_not_the_engine_version():
    # the version follows the engine's name; "0.0231" is the claim's own number
    d = reading("Q4_K_M reaches a KLD of 0.0231, measured with llama.cpp on an RTX 4090.\n", 2)
    assert d.status == "incomplete" and "version" not in d.value
    d = reading("Q4_K_M reaches a KLD of 0.0231, measured with llama.cpp b6510 on an RTX 4090.\n", 2)
    assert d.status == "stated" and d.value["version"] == "b6510"


def test_d7_and_d8_are_read_whole():
    text = "Mean KLD 0.0231, forward KL(P_ref ‖ P_q4km) in nats, over the full vocabulary.\n"
    assert reading(text, 7).value == {"direction": "forward", "unit": "nats"}
    assert reading(text, 8).value == {"scheme": "full"}
    assert reading("Mean KLD 0.02 from top-20 logprobs.\n", 8).value == {"scheme": "top-k", "k": 20}


def test_nearest_evidence_wins_and_a_card_wide_statement_applies_to_every_claim():
    text = (
        "All numbers are on the wikitext-2-raw-v1 test split.\n\n"
        "## Small\n\nMean KLD 0.031 vs Qwen/Qwen3-8B (BF16).\n\n"
        "## Large\n\nMean KLD 0.012 vs Qwen/Qwen3-32B (BF16).\n"
    )
    small, large = read_claims_of(card(text))
    assert (small.disclosures[1].value["repo"], large.disclosures[1].value["repo"]) == ("Qwen/Qwen3-8B", "Qwen/Qwen3-32B")
    assert small.disclosures[3].evidence == large.disclosures[3].evidence  # the card-wide statement
    assert small.disclosures[3].evidence[0].line == 1


def test_a_summary_claim_reads_the_protocol_stated_under_a_later_heading():
    text = (
        "Q4_K_M reaches a mean KLD of 0.0231 against BF16.\n\n# Model\n\n## Evaluation\n\n"
        "Reference: Qwen/Qwen3-8B@b968826d9c46dd6066d109eabc6255188de91218.\n\n| Quant | Mean KLD |\n|---|---|\n| Q4_K_M | 0.0231 |\n"
    )
    summary, table = read_claims_of(card(text))
    assert summary.disclosures[1].status == table.disclosures[1].status == "stated"
    assert summary.disclosures[1].evidence[0].line == 1  # its own words first, the rest filled in


def test_bits_are_a_unit_not_an_error():
    (claim,) = read_claims_of(card("Mean KLD 0.0331 bits, KL(P_ref ‖ P_q) for Q4_K_M.\n"))
    assert claim.numbers[0].unit == "bits" and claim.disclosures[7].value["unit"] == "bits"


# ---- --explain and the JSON reading --------------------------------------------------------------

EXPLAINED = REAL / "artefact2_gguf_overview_gist_fork.md"


def _where(needle: str) -> tuple[int, int]:
    """1-based line and column of the first ``needle`` in the explained card (the file may be re-rendered)."""
    for n, line in enumerate(EXPLAINED.read_text(encoding="utf-8").splitlines(), 1):
        if needle in line:
            return n, line.index(needle) + 1
    raise AssertionError(needle)


def test_explain_prints_the_reading_table_with_evidence(capsys):
    rc, out, err = run_cli(capsys, "lint", "--explain", str(EXPLAINED))
    assert rc == 1 and err == ""
    lines = out.splitlines()
    assert lines[0].endswith("1 KLD claim read")
    assert any(line.startswith("  D3 evaluation text") and "incomplete" in line and "name=wiki.test.raw" in line for line in lines)
    line, col = _where("wiki.test")
    assert f"      evidence: {line}:{col} 'wiki.test'" in lines
    assert any(line.startswith("  D5 context length") and "inferred" in line for line in lines)
    assert any("llama-perplexity default: -c 512" in line for line in lines)
    assert any(line.startswith("  D1 reference checkpoint") and "missing" in line for line in lines)
    assert "KLD333" in out  # the findings follow the table
    assert all(ch == "\n" or ch >= " " for ch in out if ord(ch) < 32 or ord(ch) == 127)


def test_explain_shows_front_matter_evidence(tmp_path, capsys):
    path = tmp_path / "README.md"
    path.write_text("---\nbase_model: org/model\n---\nMean KLD 0.021 for Q4_K_M.\n", encoding="utf-8")
    rc, out, _ = run_cli(capsys, "lint", "--explain", str(path))
    assert "      evidence: front matter /base_model 'org/model'" in out.splitlines()


def test_explain_strips_control_characters_from_the_card(tmp_path, capsys):
    path = tmp_path / "README.md"
    path.write_bytes("Mean KLD 0.021 vs the BF16\x1b[31m model\u202e.\n".encode())
    rc, out, _ = run_cli(capsys, "lint", "--explain", str(path))
    assert "\x1b" not in out and "\u202e" not in out


def test_json_carries_the_reading_and_matches_the_schema(capsys):
    import jsonschema

    rc, out, _ = run_cli(capsys, "lint", "-o", "json", str(EXPLAINED))
    report = json.loads(out)
    jsonschema.validate(report, report_schema())
    (claim,) = report["reading"][str(EXPLAINED)]
    d3 = claim["disclosures"][2]
    assert d3["disclosure"] == "D3" and d3["status"] == "incomplete"
    line, col = _where("wiki.test")
    assert d3["evidence"] == [{"text": "wiki.test", "line": line, "column": col}]
    assert claim["tool"] == "llama-perplexity" and claim["numbers"][0]["candidate"] == "IQ1_S"


def test_json_lines_finding_carries_its_reading(capsys):
    rc, out, _ = run_cli(capsys, "lint", "-o", "json-lines", str(EXPLAINED))
    rows = {r["rule_id"]: r for r in map(json.loads, out.splitlines())}
    assert rows["KLD333"]["reading"]["status"] == "incomplete"
    assert rows["KLD301"]["reading"]["status"] == "missing"
    assert rows["KLD313"]["reading"] is None


def test_a_structured_card_has_no_prose_reading(capsys):
    rc, out, _ = run_cli(capsys, "lint", "-o", "json", str(ROOT / "examples" / "cards" / "compliant.md"))
    assert json.loads(out)["reading"] == {}


def test_line_numbers_count_only_the_files_line_breaks(tmp_path, capsys):
    """A form feed or U+2028 inside a line is no line break: the claim's finding and its evidence keep the file's
    line numbers (str.splitlines would split there and shift every later line)."""
    path = tmp_path / "README.md"
    path.write_bytes("# Card\n\nPage one\x0cpage two, and a\u2028separator.\nMean KLD 0.021 on wiki.test.raw.\n".encode())
    rc, out, _ = run_cli(capsys, "lint", "-o", "json", str(path))
    (claim,) = json.loads(out)["reading"][str(path)]
    assert claim["line"] == 4
    assert claim["disclosures"][2]["evidence"][0]["line"] == 4  # D3 'wiki.test.raw'
