"""KLD3xx rules on small cards written here: claim detection edge cases, locations, block checks."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kldcard.card.document import parse_card, read_card
from kldcard.errors import InputError
from kldcard.lint.prose import analyse, block_values, check_prose
from kldcard.lint.registry import RULES
from kldcard.lint.rules import prose as rules_prose  # noqa: F401  (the rules under test)
from kldcard.lint.runner import lint_card
from kldcard.schema import KldEvaluation

EXAMPLES = Path(__file__).parent.parent / "examples" / "cards"
PROSE_EXAMPLES = sorted(EXAMPLES.glob("KLD3*.md"))


def card(text: str, path: str = "README.md"):
    return parse_card(text.encode(), path)


def codes(text: str, block=None) -> list[str]:
    return [f.rule_id for f in check_prose(card(text), block)]


LLAMA_LOG = """====== KL divergence statistics ======
Mean    KLD:   0.031273 ±   0.000227
Maximum KLD:   5.371103
99.9%   KLD:   1.218321
99.0%   KLD:   0.362158
99.0%   KLD:   0.362158
Median  KLD:   0.014910
Minimum KLD:  -0.000043
"""


# ---- the registry ----------------------------------------------------------------------------


def test_kld3xx_rules_are_registered_with_full_documentation():
    prose = {c: r for c, r in RULES.items() if c.startswith("KLD3")}
    incomplete = [f"KLD33{n}" for n in (1, 2, 3, 4, 5, 6, 9)]  # D7 and D8 are read whole or not at all
    assert sorted(prose) == [f"KLD3{n:02d}" for n in range(1, 16)] + ["KLD320", *incomplete]
    for code, r in prose.items():
        assert r.group == "free-form cards"
        assert r.name.startswith("prose-") and r.name == r.name.lower()
        assert all(len(getattr(r, f)) > 20 for f in ("summary", "what", "why", "example", "fix")), code
    assert {c for c, r in prose.items() if r.severity == "error"} == {*(f"KLD30{n}" for n in range(1, 10)), "KLD314"}
    assert prose["KLD313"].severity == "info"
    assert all(prose[c].severity == "warning" for c in incomplete)


@pytest.mark.parametrize("path", PROSE_EXAMPLES, ids=lambda p: p.stem)
def test_each_prose_example_produces_exactly_its_rule(path):
    code, name = path.stem.split("-", 1)
    assert RULES[code].name == name
    found = lint_card(path).findings  # the full rule set, structured checker included
    assert found and {f.rule_id for f in found} == {code}
    c = read_card(path)
    assert {f.rule_id for f in check_prose(c, c.metadata.get("kld_evaluation"))} == {code}


def test_every_prose_rule_has_an_example_card():
    assert {p.stem.split("-", 1)[0] for p in PROSE_EXAMPLES} == {c for c in RULES if c.startswith("KLD3")}


# ---- what is and is not a claim ----------------------------------------------------------------


@pytest.mark.parametrize(
    "body",
    [
        "# Model\n\n## What is KLD?\n\nKL divergence measures how far two distributions are apart.\n",
        "Lower KLD is better. Our quants have lower KL divergence than the static ones.\n",
        "```python\nkl = F.kl_div(q, p, log_target=True)\nprint(f'KLD: {kl:.4f}')  # e.g. 0.0123\n```\n",
        "Trained with PPO and a KL penalty coefficient of 0.05 against the SFT policy.\n",
        "As a rule of thumb, a mean KLD below 0.01 is imperceptible.\n",
        "| Task | Score |\n|---|---|\n| KLD-QA accuracy | 0.742 |\n",
        "On the KLD held-out split the model reaches a perplexity of 4.21.\n",
        "See `kld_results.csv` for 0.5 GB of raw data.\n",
    ],
    ids=["heading", "no-number", "code", "kl-penalty", "rule-of-thumb", "kld-qa-column", "other-metric", "filename"],
)
def test_not_a_claim(body):
    assert analyse(card(body)).claims == []
    assert codes(body) == []


def test_table_claim_is_located_at_its_kld_header_cell():
    text = "---\nlicense: mit\n---\n\n# Q\n\n| Quant | PPL | Mean KLD |\n|---|---|---|\n| Q4_K_M | 6.1 | 0.0231 |\n"
    rep = analyse(card(text))
    assert [(c.kind, rep.doc.position(c.offset)) for c in rep.claims] == [("table", (7, 17))]
    assert [n.value for n in rep.claims[0].numbers] == [0.0231]  # not the PPL column
    assert rep.claims[0].labelled


def test_transposed_table_claim():
    rep = analyse(card("| Metric | Q4_K_M | Q8_0 |\n|---|---|---|\n| Mean KLD | 0.021 | 0.001 |\n| PPL | 6.2 | 6.1 |\n"))
    assert [(c.kind, rep.doc.position(c.offset)[0], [n.value for n in c.numbers]) for c in rep.claims] == [
        ("table", 3, [0.021, 0.001])
    ]


def test_pasted_llama_perplexity_block_is_one_claim_with_all_its_numbers():
    rep = analyse(card("Result (pre-#16321 build):\n\n```\n" + LLAMA_LOG + "```\n"))
    assert len(rep.claims) == 1
    c = rep.claims[0]
    assert (c.kind, c.tool, c.labelled, rep.doc.position(c.offset)) == ("tool-output", "llama-perplexity", True, (5, 1))
    assert [n.text for n in c.numbers][:3] == ["0.031273", "0.000227", "5.371103"]
    assert c.numbers[-1].value == -0.000043


def test_sentence_claims_one_per_line_with_the_number_column():
    rep = analyse(card("Intro.\n\nThe Q4_K_M has a KLD vs BF16 of 0.012, and the IQ3 a KL divergence of\n0.087.\n"))
    assert [rep.doc.position(c.offset) for c in rep.claims] == [(3, 33), (4, 1)]
    assert not any(c.labelled for c in rep.claims)


def test_html_table_claim_reads_only_the_kld_column():
    text = "<table>\n<tr><th>Quant</th><th>Size</th><th>Mean KLD</th></tr>\n<tr><td>Q4_K_M</td><td>5.1 GB</td><td>0.0274</td></tr>\n</table>\n"
    rep = analyse(card(text))
    assert [(c.kind, rep.doc.position(c.offset), [n.value for n in c.numbers]) for c in rep.claims] == [
        ("table", (2, 36), [0.0274])
    ]


def test_llama_perplexity_per_chunk_lines_are_an_unlabelled_running_value():
    lines = "".join(
        f"[{k}]  9.81 ±  0.25     0.041 ±  0.005       {v} ±  0.00131     7.412 ±  0.188 %    88.431 ±  0.502 %\n"
        for k, v in ((39, "0.05601"), (40, "0.05573"))
    )
    rep = analyse(card("Running KLD, -c 512:\n\n```\n" + lines + "```\n"))
    assert [(c.kind, c.labelled, rep.doc.position(c.offset)[0]) for c in rep.claims] == [("tool-output", False, 4)]
    assert [n.text for n in rep.claims[0].numbers] == ["0.05601", "0.00131", "0.05573", "0.00131"]


def test_list_items_continuing_a_kld_item_are_claims():
    rep = analyse(card("Results:\n\n- Mean KLD: 0.0188\n- Median: 0.0071\n- p99: 0.3120\n- Top-1 agreement: 0.93\n"))
    assert [(rep.doc.position(c.offset)[0], c.numbers[0].value) for c in rep.claims] == [(3, 0.0188), (4, 0.0071), (5, 0.312)]


def test_crlf_card_positions_count_lines_like_the_editor():
    text = "---\r\nlicense: mit\r\n---\r\n\r\n# Q\r\n\r\nMean KLD vs BF16: 0.0231.\r\n"
    (f,) = [f for f in check_prose(card(text)) if f.rule_id == "KLD302"]
    assert (f.line, f.column, f.pointer) == (7, 19, "")


# ---- disclosures, tool defaults, flags --------------------------------------------------------


def test_llama_perplexity_defaults_follow_the_ctx_override_and_ik_floor():
    body = (
        "Mean KLD vs BF16 on wiki.test.raw: see below.\n\n"
        "```\nik_llama.cpp/build/bin/llama-perplexity -m q.gguf --kl-divergence -f wiki.test.raw -c 2048\n```\n\n"
        + LLAMA_LOG
    )
    ev = analyse(card(body)).evidence
    assert ev is not None and ev.tool is not None and ev.tool.name == "ik_llama.cpp llama-perplexity"
    assert ev.disclosures[5].status == "stated"  # -c 2048 is on the card
    assert ev.disclosures[6].status == "inferred" and "1023 positions per 2048-token chunk" in ev.disclosures[6].text
    assert ev.disclosures[8].status == "inferred" and "24-nat floor" in ev.disclosures[8].text
    assert ev.disclosures[7].text.startswith("forward KL(base ‖ candidate)")
    assert {ev.disclosures[n].status for n in (1, 4)} == {"stated", "missing"}  # never inferred


def test_inferred_defaults_are_one_info_finding_on_the_tool_line():
    body = "Q4_K_M vs BF16 on wiki.test.raw, static quant (no imatrix), llama.cpp b6510 on an RTX 4090.\n\n```\n"
    body += "llama-perplexity -m q.gguf --kl-divergence -f wiki.test.raw\n" + LLAMA_LOG + "```\n"
    everything = check_prose(card(body))
    # "vs BF16" names no checkpoint and wiki.test.raw no source: stated in part, warnings of their own
    assert sorted(f.rule_id for f in everything if f.rule_id.startswith("KLD33")) == ["KLD331", "KLD333"]
    found = [f for f in everything if not f.rule_id.startswith("KLD33")]
    assert [(f.rule_id, f.severity, f.line) for f in found] == [("KLD313", "info", 4)]
    assert "D7 KL direction: forward KL(base ‖ candidate)" in found[0].message
    assert "255 positions per 512-token chunk" in found[0].message


def test_model_diff_two_way_table_direction_is_stated_and_rest_inferred():
    body = (
        "Measured with exllamav3 `eval/model_diff.py` against the original BF16 model.\n\n"
        "| bpw | KL-div (q→o) | KL-div (o→q) |\n|---|---|---|\n| 4.0 | 0.0231 | 0.0236 |\n"
    )
    rep = analyse(card(body))
    got = {n: rep.status(n) for n in range(1, 10)}
    # "measured with exllamav3": the runtime named without its version (issue 28: incomplete, not missing)
    assert got == {1: "incomplete", 2: "incomplete", 3: "inferred", 4: "missing", 5: "inferred", 6: "missing",
                   7: "stated", 8: "inferred", 9: "inferred"}  # fmt: skip


@pytest.mark.parametrize(
    ("sentence", "flagged"),
    [
        ("KLD is measured against the Q8_0 reference.", True),
        ("Reference: 6.0bpw.", True),
        ("We measure drift from the FP8 checkpoint, which serves as our reference.", True),
        ("KLD vs the BF16 GGUF.", False),
        ("Dynamic quants improve KLD compared with standard imatrix quants.", False),
    ],
)
def test_quantized_reference_flag(sentence, flagged):
    ev = analyse(card(f"{sentence}\n\nMean KLD: 0.0231 nats.\n")).evidence
    assert ev is not None
    assert any(f.kind == "quantized-reference" for f in ev.flags) is flagged


@pytest.mark.parametrize(
    ("sentence", "flagged"),
    [
        ("For the KLD numbers the eval file was generated from the same imatrix calibration dataset.", True),
        ("The tool measures KLD on the same calibration dataset used for the imatrix.", True),
        ("The test set is a separate file from the same dataset repo and is not used for calibration.", False),
        ("The imatrix was computed on calibration_datav3.txt.", False),
        ("Calibration: 512 samples of NeelNanda/pile-10k.\n\nKLD over 512 pile-10k samples", True),
        ("imatrix from the train split of Salesforce/wikitext.\n\nKLD on the Salesforce/wikitext test split", False),
    ],
)
def test_eval_from_calibration_flag(sentence, flagged):
    found = codes(f"{sentence}\n\nMean KLD: 0.0231 nats.\n")
    assert ("KLD311" in found) is flagged


def test_unlabelled_number_needs_aggregation_named_elsewhere():
    # Aggregation named on the card: the bare number is the problem (KLD312 at its line).
    found = check_prose(card("We report token means with a bootstrap 95% CI.\n\nQ4_K_M reaches a KLD of 0.0231.\n"))
    assert [(f.rule_id, f.line) for f in found if f.rule_id in ("KLD309", "KLD312")] == [("KLD312", 3)]
    # Nothing on the card names a statistic: one card-level KLD309, no per-number noise.
    found = codes("Q4_K_M reaches a KLD of 0.0231.\n")
    assert "KLD309" in found and "KLD312" not in found


def test_enabled_limits_the_codes():
    found = check_prose(card("Q4_K_M reaches a KLD of 0.0231.\n"), enabled={"KLD301", "KLD307"})
    assert sorted(f.rule_id for f in found) == ["KLD301", "KLD307"]


def test_missing_disclosure_message_counts_the_claims():
    found = check_prose(card("A: KLD 0.02.\n\nB: KLD 0.03.\n\nC: KLD 0.04.\n"), enabled={"KLD307"})
    assert len(found) == 1 and found[0].line == 1
    assert "KLD claim (and 2 more claims) does not state the KL direction (D7)" in found[0].message


# ---- prose against a structured block (KLD314) -------------------------------------------------


def _block() -> dict:
    meta = read_card(EXAMPLES / "KLD314-prose-contradicts-block.md").metadata
    return meta["kld_evaluation"]


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("0.0231", True),
        ("0.023", True),  # rounding of the printed digits
        ("2.31e-2", True),
        ("0.02", True),
        ("0.312", True),  # a percentile in the block
        ("0.0232", False),
        ("0.025", False),
        ("0.03", False),
    ],
)
def test_prose_numbers_must_match_the_block_within_printed_rounding(text, ok):
    found = check_prose(card(f"Q4_K_M: mean KLD {text} nats.\n"), _block())
    assert (found == []) is ok
    if not ok:
        assert [(f.rule_id, f.severity, f.line, f.column) for f in found] == [("KLD314", "error", 1, 18)]
        assert f"KLD {text} in the text matches no value" in found[0].message
        assert "nats at /kld_evaluation/candidates/0/results/kld/" in found[0].message


def test_block_check_accepts_the_validated_model_and_skips_disclosure_rules():
    model = KldEvaluation.model_validate(_block())
    assert dict(block_values(model)) == dict(block_values(_block()))
    text = "Q4_K_M: KLD 0.0231.\n"  # no disclosure in the prose: the block carries them
    assert check_prose(card(text), model) == []
    assert [f.rule_id for f in check_prose(card("Q4_K_M: KLD 0.0300.\n"), model)] == ["KLD314"]


def test_block_without_results_checks_nothing():
    assert check_prose(card("Mean KLD 0.5.\n"), {"candidates": "not a list"}) == []


# ---- robustness ------------------------------------------------------------------------------


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(
        st.sampled_from(
            ["KLD", "Mean KLD:", "| KLD |", "|---|", "| 0.021 |", "```", "0.5", "KL(", "vs BF16", "\n", " ", "-c 512",
             "llama-perplexity", "====== KL divergence statistics ======", "±", "#", "- ", "Q8_0", "\r\n", "é",
             "<tr><th>KLD</th></tr>", "<td>0.5</td>", "- Median: 0.5", "[1] 1.0 ± 0.1 0.1 ± 0.1 0.1 ± 0.1 1.0 ± 0.1 %",
             "(", ")", "calibration", "imatrix from a/b.txt"]
        ),  # fmt: skip
        max_size=40,
    )
)
def test_arbitrary_card_text_never_crashes_and_locates_inside_the_file(parts):
    text = "".join(parts)
    try:
        c = card(text)
    except InputError:
        return
    n_lines = len(text.splitlines()) or 1
    for f in check_prose(c) + check_prose(c, _block()):
        assert 1 <= f.line <= n_lines and f.column >= 1


def test_example_block_is_valid_yaml_for_the_schema():
    KldEvaluation.model_validate(yaml.safe_load((EXAMPLES / "KLD314-prose-contradicts-block.md").read_text().split("---")[1])["kld_evaluation"])


# ---- issue 16: real-world phrasings --------------------------------------------------------------


def test_kld_heading_with_only_an_image_is_its_own_finding():
    text = "# Card\n\n## KL divergence vs BF16\n\n![KLD per quant](kld.png)\n\n## Speed\n\n![ppl vs size](ppl.png)\n"
    found = check_prose(card(text))
    assert [(f.rule_id, f.line) for f in found] == [("KLD315", 3)]
    # numbers next to the chart: a claim, not KLD315; a perplexity chart under a KLD heading: nothing
    assert "KLD315" not in codes(text.replace("![KLD per quant](kld.png)", "![KLD](kld.png)\n\nMean KLD 0.021 vs BF16."))
    assert check_prose(card("## KL-divergence\n\n![ppl_vs_size_mistral7B](x.png)\n")) == []


def test_labelled_reference_and_windows_lists_are_disclosures():
    """The issue's rejected card: a bold-labelled reference and a windows item."""
    text = (
        "| Quant | Mean KLD |\n|---|---|\n| Q4_K_M | 0.0231 |\n\n"
        "- **Reference**: `org/Model-24B`, BF16 safetensors at commit `75e4c1d`\n"
        "- **Windows**: 120 windows of 2,048 tokens, stride 512\n"
        "- **Scored positions**: all after the first\n"
    )
    got = codes(text)
    assert "KLD301" not in got and "KLD305" not in got and "KLD306" not in got


def test_quantized_baseline_is_the_quantized_reference_rule_not_a_missing_reference():
    text = "I'm using the `Q8_0` as the baseline for my PPL/KLD.\n\n| Quant | Mean KLD |\n|---|---|\n| IQ2_K | 0.0874 |\n"
    got = codes(text)
    assert "KLD310" in got and "KLD301" not in got


def test_vs_the_bf16_weights_of_a_repo_names_the_reference():
    assert "KLD301" not in codes("Mean KLD 0.021 vs the BF16 weights of org/Model at revision 75e4c1d.\n")


@pytest.mark.parametrize(
    "text, line",
    [
        # transposed metric table, KLD as a row label in the second cell, HTML in the cells
        ("| 区分 | 項目 | Base | Q4 |\n|---|---|---|---|\n| **基礎性能** | KL Divergence <br><small>…</small> | 0.00 (基準) | **0.034** |\n", 3),
        # pasted llama-perplexity output as quoted list items
        ("> - ====== KL divergence statistics ======\n> - Mean    KLD:   0.014594 ±   0.000064\n> - Maximum KLD:   2.906263\n", 2),
        # columns named KLD 99.9%, μKLD, Max KLD
        ("| Quant | μKLD | KLD 99.9% | Max KLD |\n|---|---|---|---|\n| Q4 | 0.02 | 0.3 | 5.1 |\n", 1),
        # a table without its separator row, as mirrors store it
        ("| Model | Method | KLD |\n| a/b | AWQ | 0.0051 |\n| c/d | GPTQ | 0.0073 |\n", 1),
        # a fixed-width result table
        ("```\nModel          Mean KLD   Median KLD\n--------------------------------\nq4             0.024057   0.004778\n```\n", 2),
        # the first (2024) llama-perplexity block: "Average:" under "===== KL-divergence statistics"
        ("```\n===== KL-divergence statistics\nAverage:   0.010623 ±   0.000065\nMedian :   0.005517\n```\n", 3),
        # result lines in a fenced block ("baseline (n=256):  KLD 0.219408  PPL 9.9299"), one claim per block
        ("```\nPhase 1 baseline (n=256):  KLD 0.219408  PPL 9.9299\nPhase 3 MMQ      (n=256):  KLD 0.261245\n```\n", 2),
    ],
)
def test_claims_in_real_world_layouts_are_found(text, line):
    rep = analyse(card(text))
    assert [rep.doc.position(c.offset)[0] for c in rep.claims] == [line]


def test_same_top_p_column_names_llama_perplexity():
    rep = analyse(card("| Quant | KLD | Same top p |\n|---|---|---|\n| Q4 | 0.034 | 90.6% |\n"))
    assert rep.evidence is not None and rep.evidence.tool is not None
    assert rep.evidence.tool.name == "llama-perplexity"
    assert rep.evidence.disclosures[7].status == "inferred"


def test_interpretation_scale_is_not_a_claim():
    text = "| Mean KLD | Quality |\n|---|---|\n| < 0.01 | Near-lossless |\n| 0.01 - 0.05 | Good |\n| > 0.1 | Poor |\n"
    assert analyse(card(text)).claims == []


def test_relative_kld_measurements_are_claims_without_a_number():
    rep = analyse(card("Our Q3_K_XL quant reduces the KL Divergence by 7.5% whilst adding 2% of disk space.\n"))
    assert [(c.kind, c.numbers, c.labelled) for c in rep.claims] == [("sentence", [], False)]
    assert analyse(card("The new recipe gives 2.3x lower mean KL than the old one.\n")).claims[0].labelled


def test_code_that_assigns_a_kl_value_is_not_a_result_line():
    assert analyse(card("```python\nkld = 0.5\nprint(kl_coef)\n```\n\nMean KLD is computed per token.\n")).claims == []


def test_signed_relative_kld_change_is_an_unlabelled_claim_not_a_percentile():
    rep = analyse(card("# MMQ adds +19% KLD vs the dot2 baseline\n\nDetails below.\n"))
    assert [(c.kind, c.numbers, c.labelled) for c in rep.claims] == [("sentence", [], False)]


@pytest.mark.parametrize(
    "table",
    [
        "| Quant | PPL | KL-div |\n|---|---|---|\n| 4.0bpw | 5.81 | 0.0717 |\n| Original | 5.41 | |\n",
        "| Quant | PPL | KLD |\n|---|---|---|\n| f16 | 6.23 | - |\n| q8_0 | 6.23 | 0.0014 |\n",
    ],
)
def test_a_tables_own_reference_row_names_the_reference(table):
    assert "KLD301" not in codes(table)


def test_a_bf16_row_with_a_measured_kld_is_not_a_reference_row():
    assert "KLD301" in codes("| Cache | KLD |\n|---|---|\n| f16/f16/f16 | 0.0002 |\n| f16 | 0.0007 |\n")


def test_comparing_mean_kld_to_a_baseline_names_it():
    text = "A sweep comparing mean KLD to the BF16 baseline.\n\n- IQ4_XS (KLD 0.0127) is the best 4-bit option.\n"
    assert "KLD301" not in codes(text)


def test_a_baseline_precision_and_a_chunk_count_in_words_are_disclosures():
    text = (
        "Protocol: four chunks of wiki.test.raw, baseline `f16`/`f16` saved with --save-all-logits.\n\n"
        "| Cache | Mean KLD |\n|---|---:|\n| q4 | 0.0013 |\n"
    )
    ev = analyse(card(text)).evidence
    assert ev is not None and ev.disclosures[1].status == "stated" and ev.disclosures[6].status == "stated"
