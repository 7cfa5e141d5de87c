"""Follow-up hardening of `kldcard comparable` (a review after issue 24): blocks the linter rejects are not
read, impossible values are named, one rule for "not stated", CARD#LINE anywhere in a claim, the size
option the error names, every printed number says what it is, `lint --explain` never silently dropped,
and hostile inputs are one line, exit 2."""

from __future__ import annotations

import copy
import json
import os

import pytest
from helpers_lint import COMPLIANT, EXAMPLES, front_matter, run_cli, write_card

BODY = COMPLIANT.read_text(encoding="utf-8").split("---\n", 2)[2]
V1 = COMPLIANT.parent.parent.parent / "tests" / "data" / "compare_v1"


def _one_line_exit_2(rc: int, out: str, err: str) -> None:
    assert rc == 2 and out == "", out
    assert err.startswith("kldcard: error: ") and err.count("\n") == 1 and "Traceback" not in err, err


def _mean(value) -> dict:
    meta = front_matter(COMPLIANT)
    meta["kld_evaluation"]["candidates"][0]["results"]["kld"]["mean"] = value
    return meta


# 1. a block the linter rejects is not read -------------------------------------------------------------

@pytest.mark.parametrize(("card", "rule"), [
    ("KLD003-unsupported-schema-version.md", "KLD003"),  # schema_version: 2
    ("KLD006-candidate-without-results.md", "KLD006"),  # no results
    ("KLD007-invalid-value.md", "KLD007"),  # mean: '213e-4' (a string)
    ("KLD001-block-not-mapping.md", "KLD001"),
    ("KLD101-missing-reference-checkpoint.md", "KLD101"),  # revision: main (a value the schema refuses)
])
def test_a_block_the_linter_rejects_is_unusable_input_naming_the_rule(capsys, card, rule):
    rc, out, err = run_cli(capsys, "comparable", COMPLIANT, EXAMPLES / card)
    _one_line_exit_2(rc, out, err)
    assert f"{rule} (line " in err and "kldcard lint rejects its kld_evaluation block" in err


def test_one_rejected_candidate_is_left_out_on_one_line_and_the_others_compared(tmp_path, capsys):
    meta = front_matter(COMPLIANT)
    bad = copy.deepcopy(meta["kld_evaluation"]["candidates"][0])
    bad["name"] = "IQ4_XS"
    bad["results"]["kld"]["mean"] = "213e-4"
    meta["kld_evaluation"]["candidates"].append(bad)
    card = write_card(tmp_path / "two.md", meta, BODY)
    rc, out, _ = run_cli(capsys, "comparable", COMPLIANT, card)
    assert rc == 0 and "verdict: comparable" in out
    lines = [line for line in out.splitlines() if line.startswith("not read: ")]
    assert len(lines) == 1 and lines[0].startswith("not read: B IQ4_XS: KLD007 (line ")
    assert "IQ4_XS" not in out.split("not read: ")[0]  # not in any column
    rc, out, _ = run_cli(capsys, "comparable", COMPLIANT, card, "-o", "json")
    data = json.loads(out)
    assert [(u["input"], u["label"], u["rule"]) for u in data["unreadable"]] == [("B", "IQ4_XS", "KLD007")]


def test_a_disclosure_the_block_leaves_out_is_not_stated_not_a_rejection(tmp_path, capsys):
    meta = front_matter(COMPLIANT)
    del meta["kld_evaluation"]["direction"]["log_base"]  # KLD107 "is missing": the unit is not stated
    card = write_card(tmp_path / "b.md", meta, BODY)
    rc, out, _ = run_cli(capsys, "comparable", card)
    assert rc == 0 and "Q4_K_M 0.0213 unit not stated" in out and "not read" not in out


# 2. a KL divergence is >= 0 ----------------------------------------------------------------------------

@pytest.mark.parametrize(("value", "says"), [
    (-0.01, "-0.01 is negative: a KL divergence is >= 0"),
    (250.0, "250 nats is implausible for a quantization's mean KL divergence (more than 100 nats"),
    (float("nan"), "nan is not a finite number"),
    (float("inf"), "inf is not a finite number"),
])
def test_impossible_means_are_named_and_not_ranked(tmp_path, capsys, value, says):
    card = write_card(tmp_path / "b.md", _mean(value), BODY)
    rc, out, _ = run_cli(capsys, "comparable", COMPLIANT, card)
    assert f"value: B Q4_K_M: {says}" in out
    assert "ranking: no ranking: a value that cannot be a mean KL divergence" in out
    rc, out, _ = run_cli(capsys, "comparable", card, COMPLIANT, "-o", "json")
    assert json.loads(out)["implausible_values"] and '"implausible": null' in out  # COMPLIANT's is possible


def test_a_plausible_mean_is_not_flagged(capsys):
    rc, out, _ = run_cli(capsys, "comparable", COMPLIANT, COMPLIANT)
    assert rc == 0 and "value:" not in out


# 3. "not stated": one rule, by card content ------------------------------------------------------------

SILENT = "# Model\n\nMean KLD vs BF16 on wikitext-2 test, 512 ctx: Q4_K_M {a}, Q8_0 {b}.\n"


def test_one_card_alone_twice_or_as_a_copy_gives_one_verdict_and_two_cards_cannot_tell(tmp_path, capsys):
    card, copy_, other = tmp_path / "a.md", tmp_path / "copy.md", tmp_path / "other.md"
    card.write_text(SILENT.format(a="0.0213", b="0.0031"), encoding="utf-8")
    copy_.write_bytes(card.read_bytes())
    other.write_text(SILENT.format(a="0.0250", b="0.0040"), encoding="utf-8")
    verdicts = {}
    for args in ((card,), (card, card), (card, copy_), (other, card)):
        rc, out, _ = run_cli(capsys, "comparable", *args)
        verdicts[len(set(a.read_bytes() for a in args)), len(args)] = (rc, out.split("verdict: ")[1].split(":")[0])
    assert verdicts[1, 1] == verdicts[1, 2] == (0, "comparable, with caveats")
    assert verdicts[2, 2] == (1, "cannot tell")


# 4. CARD#LINE anywhere in a claim; a bad line spec says what is wrong --------------------------------

CLAIMS = ("# Model\n\nSome intro.\n\nWe measured KL divergence against the BF16 model\non wikitext-2 test at context 512:\n"
          "mean KLD 0.0213 nats for Q4_K_M.\n\n| quant | mean KLD |\n|---|---|\n| Q4_K_M | 0.0213 |\n| Q5_K_M | 0.0150 |\n")


@pytest.mark.parametrize(("line", "labels"), [(5, ["line 7"]), (6, ["line 7"]), (9, ["Q4_K_M", "Q5_K_M"]),
                                              (10, ["Q4_K_M", "Q5_K_M"])])
def test_any_line_of_a_multi_line_claim_picks_it(tmp_path, capsys, line, labels):
    card = tmp_path / "c.md"
    card.write_text(CLAIMS, encoding="utf-8")
    rc, out, err = run_cli(capsys, "comparable", f"{card}#{line}", "-o", "json")
    assert err == "", err
    assert [n["label"] for c in json.loads(out)["columns"] for n in c["numbers"]] == labels


@pytest.mark.parametrize(("spec", "says"), [("#x", "'x' after '#' is not a line number"),
                                           ("#", "'' after '#' is not a line number"),
                                           ("#3", "no KLD claim at line 3")])
def test_a_bad_line_spec_names_the_claims_lines(tmp_path, capsys, spec, says):
    card = tmp_path / "c.md"
    card.write_text(CLAIMS, encoding="utf-8")
    rc, out, err = run_cli(capsys, "comparable", f"{card}{spec}")
    _one_line_exit_2(rc, out, err)
    assert says in err and "its KLD claims are at lines 5-7 (line 7), 9-12 (Q4_K_M, Q5_K_M)" in err
    assert "no such file" not in err


def test_a_block_candidate_by_any_of_its_lines_and_a_wrong_name_lists_the_names(tmp_path, capsys):
    lines = COMPLIANT.read_text(encoding="utf-8").splitlines()
    inside = [i for i, t in enumerate(lines, 1) if "engine_version" in t][-1]  # in candidates[0].runtime
    rc, out, err = run_cli(capsys, "comparable", f"{COMPLIANT}#{inside}")
    assert rc == 0 and "Q4_K_M 0.0213 nats" in out, err
    rc, out, err = run_cli(capsys, "comparable", f"{COMPLIANT}::Q9")
    _one_line_exit_2(rc, out, err)
    assert "(its candidates: 'Q4_K_M')" in err


# 5. the size limit names an option comparable has -----------------------------------------------------

def test_max_card_bytes_is_an_option_of_comparable(tmp_path, capsys):
    rc, out, err = run_cli(capsys, "comparable", COMPLIANT, "--max-card-bytes", "100")
    _one_line_exit_2(rc, out, err)
    assert "--max-card-bytes raises it" in err
    rc, out, err = run_cli(capsys, "comparable", COMPLIANT, "--max-card-bytes", str(COMPLIANT.stat().st_size))
    assert rc == 0 and err == ""
    rc, out, err = run_cli(capsys, "comparable", COMPLIANT, "--max-card-bytes", "0")
    _one_line_exit_2(rc, out, err)


# 6. every printed KLD says what it is -----------------------------------------------------------------

def test_every_number_printed_says_unit_statistic_direction_and_positions(capsys):
    what = "token-mean of KL(P_ref ‖ P_cand) per token; positions: llama-perplexity 142,800 positions; vocabulary: full"
    rc, out, _ = run_cli(capsys, "comparable", COMPLIANT, COMPLIANT)
    legend = out.split("\n\n")[0].splitlines()
    assert legend[0].endswith("Q4_K_M 0.0213 nats") and legend[1].strip() == what
    assert "  A Q4_K_M: 0.0213 nats, token-mean of KL(P_ref ‖ P_cand) per token [0.0209, 0.0217]" in out
    rc, out, _ = run_cli(capsys, "comparable", COMPLIANT, "-o", "markdown")
    assert "Q4_K_M 0.0213 nats; " + what in out
    rc, out, _ = run_cli(capsys, "comparable", COMPLIANT, "-o", "json")
    number = json.loads(out)["columns"][0]["numbers"][0]
    assert number["unit_as_read"] == "nats" and number["what"] == what


def test_a_prose_number_without_a_unit_says_so(tmp_path, capsys):
    card = tmp_path / "a.md"
    card.write_text("# Model\n\nKLD of Q4_K_M: 0.0213.\n", encoding="utf-8")
    rc, out, _ = run_cli(capsys, "comparable", card)
    assert "0.0213 unit not stated" in out and "(statistic and direction not stated)" in out


# 7. lint --explain is honoured or refused, never silently dropped -------------------------------------

@pytest.mark.parametrize("argv", [("-o", "sarif"), ("-o", "github"), ("-o", "gitlab"), ("-o", "junit"),
                                  ("--statistics",), ("--diff",), ("--write-baseline", "{tmp}/b.json")])
def test_lint_explain_where_it_cannot_go_is_one_line_exit_2(tmp_path, capsys, argv):
    argv = [a.format(tmp=tmp_path) for a in argv]
    rc, out, err = run_cli(capsys, "lint", "--explain", *argv, EXAMPLES / "KLD301-prose-reference-missing.md")
    _one_line_exit_2(rc, out, err)
    assert "--explain" in err and not (tmp_path / "b.json").exists()


def test_lint_explain_with_json_carries_the_reading(capsys):
    rc, out, err = run_cli(capsys, "lint", "--explain", "-o", "json", EXAMPLES / "KLD301-prose-reference-missing.md")
    assert rc == 1 and err == "" and json.loads(out)["reading"]


# hostile inputs -------------------------------------------------------------------------------------

@pytest.mark.parametrize("kind", ["empty", "whitespace", "binary", "directory", "fifo", "huge-line", "utf16",
                                  "bad-utf8", "json-not-results"])
def test_hostile_inputs_are_one_line_exit_2(tmp_path, capsys, kind):
    path = tmp_path / f"{kind}.md"
    if kind == "directory":
        path.mkdir()
    elif kind == "fifo":
        os.mkfifo(path)
    else:
        path.write_bytes({"empty": b"", "whitespace": b" \r\n\t\n", "binary": b"\x7fELF\x00\x01\x02" * 100,
                          "huge-line": b"KLD 0.01 " + b"x" * (1 << 20), "utf16": "# Card\n".encode("utf-16"),
                          "bad-utf8": b"# Card\n\xff\xfe KLD 0.01\n", "json-not-results": b'{"a": 1}'}[kind])
    rc, out, err = run_cli(capsys, "comparable", path, COMPLIANT)
    _one_line_exit_2(rc, out, err)
    assert "nothing to lint" not in err


def test_stdin_dash_is_one_line(capsys):
    rc, out, err = run_cli(capsys, "comparable", "-", COMPLIANT)
    _one_line_exit_2(rc, out, err)
    assert "not standard input" in err


def test_bom_and_crlf_read_as_the_same_card(tmp_path, capsys):
    text = COMPLIANT.read_bytes()
    bom, crlf = tmp_path / "bom.md", tmp_path / "crlf.md"
    bom.write_bytes(b"\xef\xbb\xbf" + text)
    crlf.write_bytes(text.replace(b"\n", b"\r\n"))
    rc, out, err = run_cli(capsys, "comparable", bom, crlf, COMPLIANT)
    assert rc == 0 and err == "" and "verdict: comparable" in out


def test_a_results_json_with_a_bom_is_read(tmp_path, capsys):
    results = tmp_path / "q8.json"
    results.write_bytes(b"\xef\xbb\xbf" + (V1 / "candidate-q8_0.json").read_bytes())
    rc, out, err = run_cli(capsys, "comparable", results, V1 / "candidate-q4_k_m.json")
    assert rc == 0 and err == "" and "q8_0 0.00407853 nats" in out


def _table(path, rows: int):
    lines = ["# x", "", "Mean KLD vs BF16 on wikitext-2 test.", "", "| quant | ctx | mean KLD |", "|---|---|---|"]
    path.write_text("\n".join(lines + [f"| Q{i} | {512 + i} | 0.0{i % 9 + 1} |" for i in range(rows)]) + "\n",
                    encoding="utf-8")
    return path


def test_a_table_whose_every_row_reads_differently_is_capped_not_a_stall(tmp_path, capsys):
    rc, out, err = run_cli(capsys, "comparable", _table(tmp_path / "big.md", 2000))  # about 85 s before the cap
    _one_line_exit_2(rc, out, err)
    assert "2000 columns" in err and "at most 100" in err
    rc, out, _ = run_cli(capsys, "comparable", _table(tmp_path / "ok.md", 40))
    assert rc == 1 and "different context (512 vs 513 vs 514 vs 515 vs 516 vs ... vs 551 (40 values))" in out
