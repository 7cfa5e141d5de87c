"""The reader's recognisers, each on real samples: numbers as cards write them, KL terms in the
card languages, and the printed output of the tools (kldcard.lint.read.numbers, .terms, .tools).

Samples are kept as the tools printed them (numbers and labels) or as the cards wrote the terms;
sources: issue 28 (an EXL3 Hugging Face card's model_diff line; two non-English cards' decimal-comma
rows), llama.cpp PR 19661 (the current llama-perplexity per-chunk rows), turboderp-org/exllamav3
eval/model_diff.py (its print format), tests/data/real_cards (index.yaml), and one real output per tool
grammar under tests/data/tool_samples (its index.yaml cites each)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers_reading import reading as first_reading

from kldcard.card.document import parse_card
from kldcard.lint.claims import find_claims
from kldcard.lint.markdown import scan
from kldcard.lint.read.numbers import KLD_VALUE, decimals_half_ulp, parse_int, parse_number
from kldcard.lint.read.terms import FULL_VOCABULARY, KL_TERMS, POSITION_WORDS, REFERENCE_AFTER, REFERENCE_NOUNS, VERSUS_WORDS
from kldcard.lint.read.tools import BY_NAME as GRAMMARS_BY_NAME
from kldcard.lint.reader import read_card
from kldcard.lint.runner import enabled_codes, lint_text
from kldcard.lint.tool_defaults import recognise


def claims(text: str):
    return read_card(parse_card(text.encode(), "README.md"))


# ---- numbers ---------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "value", "half_ulp"),
    [
        ("0.0231", 0.0231, 5e-5),
        ("0,1137", 0.1137, 5e-5),  # decimal comma (issue 28: "| KLD vs BF16 | 0,1137 |")
        ("1.2e-3", 1.2e-3, 5e-5),
        ("1,2·10⁻³", 1.2e-3, 5e-5),
        ("2.130e-05", 2.13e-5, 5e-9),
        ("12,5", 12.5, 0.05),
    ],
)
def test_numbers_as_written(text, value, half_ulp):
    (m,) = KLD_VALUE.finditer(f"KLD {text} nats")
    assert m.group(0) == text
    assert parse_number(text)[0] == pytest.approx(value) and decimals_half_ulp(text) == pytest.approx(half_ulp)


@pytest.mark.parametrize("text", ["204,800", "v0.2.8", "Qwen3.5", "5.0bpw", "12%", "Llama-3.1-8B", "1,234,567"])
def test_what_is_not_a_divergence(text):
    assert KLD_VALUE.findall(f"x {text} y") == []


@pytest.mark.parametrize(("text", "n"), [("204,800", 204800), ("204 800", 204800), ("204\u202f800", 204800),
                                         ("250k", 250000), ("~1.2M", 1200000), ("51100", 51100)])
def test_counts_as_written(text, n):
    assert parse_int(text) == n


@pytest.mark.parametrize("row", ["| KLD vs BF16 | 0,1137 |", "| **KLD vs F16** | 0,0023 |"])
def test_decimal_comma_rows_are_claims(row):
    (claim,) = claims(f"| Métrica | Valor |\n|---|---|\n{row}\n")
    assert claim.numbers[0].value in (0.1137, 0.0023)
    assert claim.disclosures[1].status == "incomplete" and claim.disclosures[1].value["dtype"] in ("BF16", "F16")


def test_bits_are_a_unit_to_report():
    (bits,) = claims("Q4_K_M: mean KLD 0.0331 bits.\n")
    (nats,) = claims("Q4_K_M: mean KLD 0.0229 nats.\n")
    assert (bits.numbers[0].unit, nats.numbers[0].unit) == ("bits", "nats")


# ---- KL terms in the card languages ------------------------------------------------------------------


@pytest.mark.parametrize(
    "term",
    ["KL散度", "相对熵", "KLダイバージェンス", "カルバック・ライブラー情報量", "KL 발산", "쿨백-라이블러 발산",
     "divergencia KL", "divergence KL", "KL-Divergenz", "KL-дивергенция", "дивергенция Кульбака — Лейблера",
     "divergência KL"],
)
def test_kl_terms_in_the_card_languages(term):
    (claim,) = claims(f"| Quant | {term} |\n|---|---|\n| Q4_K_M | 0,0123 |\n")
    assert claim.kind == "table" and claim.numbers[0].value == 0.0123


def test_every_listed_language_has_a_sample_above():
    assert set(KL_TERMS) == {"zh", "ja", "ko", "ru", "de"}


@pytest.mark.parametrize(("label", "stat"), [("平均 KLD", "mean"), ("KLD 中位数", "median"), ("KLD media", "mean"),
                                             ("KLD moyenne", "mean"), ("Median KLD", "median"), ("KLD (медиана)", "median")])
def test_statistic_words_label_the_number(label, stat):
    (claim,) = claims(f"| Quant | {label} |\n|---|---|\n| Q4_K_M | 0.0123 |\n")
    assert claim.numbers[0].statistic == stat and claim.disclosures[9].status == "stated"


# ---- disclosure words in the card languages (samples as tests/data/real_cards wrote them) ----------------


@pytest.mark.parametrize(
    "sentence",
    ["O card publica, contra BF16, um KLD médio de 0,125.",  # pt_flash_next_backend_report_quality
     "La KLD media frente a BF16 es 0,0213.", "KLD moyenne par rapport à F16 : 0,0023.",
     "Mittlere KLD gegenüber BF16: 0,0031.", "Средняя KLD против FP16: 0,0042.",
     "固定128位置のBF16比mean KLDは0.0265。",  # sllm_gdn_parallel_reeval_ja
     "BF16参照に対する平均KLDは0.0459。", "与参考模型相比，平均 KLD 为 0.0051。"],
)
def test_the_reference_in_the_card_languages(sentence):
    (claim,) = claims(sentence + "\n")
    assert claim.disclosures[1].status in ("stated", "incomplete"), claim.disclosures[1]


@pytest.mark.parametrize(
    "sentence",
    ["Scored against a non-NCCL reference, the mean KLD is 0.0023.",  # p100_nccl_limitations_kld
     "A mean KL divergence of 0.101 nats per token from the original.",  # modelq_nvfp4_quality_tasks
     "Mean KLD 0.0143 against the parent model.",  # electroglyph_eaft_uncensor_kld_compare
     "Comparing trained FP32 model vs QAT model outputs: mean KLD 0.0312.",  # tinyqat_gemma3_270m_readme
     "Mean KLD 0.0459 as KL(llama.cpp BF16 || candidate).",  # sllm_mx_scale_fix_plan_ja
     "Mean KLD 0.0081 with BF16 teacher logits."],  # brandonmusic_qwen3_30b_a3b_repro_audit
)
def test_the_reference_by_its_role(sentence):
    (claim,) = claims(sentence + "\n")
    assert claim.disclosures[1].status in ("stated", "incomplete"), claim.disclosures[1]


def test_the_original_paper_is_no_reference():
    (claim,) = claims("Mean KLD 0.0213, the figure from the original paper.\n")
    assert claim.disclosures[1].status == "missing", claim.disclosures[1]


def test_every_listed_reference_language_has_a_sample_above():
    assert set(VERSUS_WORDS) == {"es", "pt", "fr", "de", "ru"} and set(REFERENCE_AFTER) == {"ja", "zh", "ko"}
    assert set(REFERENCE_NOUNS) == {"zh", "ja", "ko"}


@pytest.mark.parametrize(
    ("sentence", "disclosure"),
    [("既存の2632位置でのBF16比KLDは0.12529。", 6),  # sllm_main_plan_kld_rows_ja
     ("Mean KLD 0.0213 over 10,240 held-out positions.", 6),  # vcruz305_k2_horizon_exl3_recipe
     ("Mean KLD 0.0184 over 40×512 tokens.", 6),  # quantize_budget_readme
     ("KLD調査と同じコーパス（2,632位置、全語彙）で平均KLDは0.0459。", 8),  # sllm_mx_scale_fix_plan_ja
     ("Mean KLD 0.0052 from full-vocab logits.", 8),  # hipfire_asym3_kv_quality_gate
     ("Mean KLD 0.0091 over all 248,077 tokenizer IDs.", 8),  # ja_qwen38_cross_engine_kld
     ("Mean KLD 0.0031 at 64k context.", 5), ("KLD 0.0042 with --max-seq 4096.", 5)],
)
def test_positions_vocabulary_and_context_as_cards_write_them(sentence, disclosure):
    (claim,) = claims(sentence + "\n")
    assert claim.disclosures[disclosure].status != "missing", claim.disclosures[disclosure]


def test_every_listed_position_and_vocabulary_language_is_a_pattern():
    assert {"zh/ja", "ko", "es", "pt", "de", "ru"} == set(POSITION_WORDS) and "ja" in FULL_VOCABULARY


@pytest.mark.parametrize(
    ("sentence", "engine", "version"),
    [("Measured with llama.cpp fc07d781e on an i7-1360P: mean KLD 0.0123.", "llama.cpp", "fc07d781e"),  # xbill9
     ("Mean KLD 0.0228 with oMLX 0.7.0rc1 on a Mac Studio.", "omlx", "0.7.0rc1")],  # omlx_glm53_flash
)
def test_engine_versions_and_commits(sentence, engine, version):
    (claim,) = claims(sentence + "\n")
    assert claim.disclosures[2].value["engine"] == engine and claim.disclosures[2].value["version"] == version


def test_a_measured_number_or_a_url_path_is_no_version():
    (claim,) = claims("The gate (KLD vs llama.cpp <= 0.03) passes: mean KLD 0.0086, see github.com/ggml-org/llama.cpp/assets/9072/86df116d.\n")
    # llama.cpp named in a measurement sentence is the engine without a version (R8'): incomplete, never stated
    d = claim.disclosures[2]
    assert d.status in ("missing", "incomplete") and "version" not in d.value, d


# ---- tool output -----------------------------------------------------------------------------------

EXL3 = """# Some-Model-exl3

```
 -- KL divergence (3.0bpw-h6, original):  0.23334818
```
"""

MODEL_DIFF_FORMAT = """```
 -- KL divergence (A, B):  0.01842000
 -- KL divergence (B, A):  0.01913700
 -- KL divergence (A, B), per-token: median 0.00412345   p90 0.03456789
```
"""

LLAMA_CURRENT_ROWS = """```
chunk             PPL               ln(PPL(Q)/PPL(base))          KL Divergence              Δp RMS            Same top p
 126      15.4685 ±    0.2900       0.16302 ±    0.00940       0.61048 ±    0.00686    21.256 ±  0.182 %    70.401 ±  0.255 %

chunk             PPL               ln(PPL(Q)/PPL(base))          KL Divergence              Δp RMS            Same top p
 127      15.6189 ±    0.2919       0.16244 ±    0.00938       0.61218 ±    0.00683    21.253 ±  0.181 %    70.307 ±  0.254 %
```
"""


def test_exllamav3_model_diff_line_with_the_cards_labels():
    """Issue 28: an EXL3 card whose only numbers are this line was missed entirely."""
    (claim,) = claims(EXL3)
    assert claim.kind == "tool-output" and claim.tool == "exllamav3 model_diff"
    assert [n.value for n in claim.numbers] == [0.23334818]
    assert claim.disclosures[1].value == {"quantized": False}  # the reference is "original"
    assert claim.disclosures[5].status == "inferred"  # the tool's documented defaults, the tool printed


def test_exllamav3_model_diff_print_format():
    (claim,) = claims(MODEL_DIFF_FORMAT)
    assert [(n.value, n.statistic) for n in claim.numbers] == [
        (0.01842, None), (0.019137, None), (0.00412345, "median"), (0.03456789, "p90")]
    assert recognise(scan(MODEL_DIFF_FORMAT, 1).scanned).name == "exllamav3 model_diff"


def test_llama_perplexity_current_chunk_rows():
    (claim,) = claims(LLAMA_CURRENT_ROWS)
    assert claim.tool == "llama-perplexity" and [n.value for n in claim.numbers] == [0.61048, 0.00686, 0.61218, 0.00683]
    assert recognise(scan(LLAMA_CURRENT_ROWS, 1).scanned).name == "llama-perplexity"


# The tool prints "<function>: X seconds per pass - ETA" as an info log line without its newline and the rows on its
# output stream; a paste of both streams glues the progress line to the first row (real-holdout-18/b llamacpp_pr23492,
# where this was the card's only KL output). The format strings are tools/perplexity/perplexity.cpp's.
GLUED_ROWS = """```
chunk             PPL               ln(PPL(Q)/PPL(base))          KL Divergence              Δp RMS            Same top p
kl_divergence: 4.10 seconds per pass - ETA    1      11.2040 ±    2.9010      -0.00031 ±    0.00190       0.00024 ±    0.00003     0.298 ±  0.031 %    99.102 ±  0.601 %
   2      12.0871 ±    2.1006       0.00012 ±    0.00144       0.00021 ±    0.00002     0.287 ±  0.022 %    99.315 ±  0.402 %
```
"""


@pytest.mark.parametrize("eta", ["", " 1 hours 2.50 minutes", " 0.35 minutes"])
def test_llama_perplexity_first_row_glued_to_its_progress_line(eta):
    (claim,) = claims(GLUED_ROWS.replace("ETA ", "ETA" + eta + " "))
    assert claim.tool == "llama-perplexity" and [n.value for n in claim.numbers] == [0.00024, 0.00003, 0.00021, 0.00002]


def test_llama_perplexity_glued_row_with_the_logs_timestamp():
    # a log written with timestamps and levels ("0.00.412.345 I ...") glues the same way
    (claim,) = claims(GLUED_ROWS.replace("kl_divergence: 4.10", "0.02.897.074 I kl_divergence: 4.10"))
    assert [n.value for n in claim.numbers] == [0.00024, 0.00003, 0.00021, 0.00002]


def test_llama_perplexity_progress_line_alone_is_no_row():
    # the progress line with its ETA and nothing after it (the streams kept apart) holds no KL figure
    assert claims("```\nkl_divergence: 4.10 seconds per pass - ETA 0.35 minutes\n```\n") == []


def test_llama_perplexity_statistics_block_numbers_carry_their_line_label():
    from pathlib import Path

    log = (Path(__file__).parent / "data" / "llamacpp" / "log-current.txt").read_text(encoding="utf-8")
    readings = claims("```\n" + log + "```\n")
    block = next(r for r in readings if r.text.startswith("Mean KLD"))
    stats = {n.statistic for n in block.numbers}
    assert {"mean", "se", "max", "median", "min", "p99.9", "p99"} <= stats


# ---- what a tool fixes beside what the card states in part (tool_defaults.fixed_by_tool) --------------------------


def test_llama_perplexitys_fixed_stride_completes_a_stated_window_length():
    """'-c 4096' under llama-perplexity: the chunks do not overlap whatever the options, so the stride is the card's
    window and nothing is asked for; the tool's part is its own evidence and key."""
    d = first_reading("Q4_K_M, `llama-perplexity --kl-divergence -c 4096 -f wiki.test.raw`: Mean KLD 0.0231 vs BF16.\n", 5)
    assert (d.status, d.value, d.inferred_keys, d.needs) == ("stated", {"n_ctx": 4096, "stride": 4096}, ("stride",), ())
    assert d.evidence[-1].tool == "llama-perplexity" and d.to_json()["inferred_keys"] == ["stride"]


def test_llama_perplexitys_fixed_positions_leave_only_the_count_to_ask():
    # "over 20 chunks" is the card's (D6 counts a chunk count); the second half of each is the tool's; the count needs
    # the chunks' length, which the card does not give (the tool's default 512 is not the card's word)
    d = first_reading("Q4_K_M, from llama-perplexity --kl-divergence over 20 chunks: Mean KLD 0.0231 vs BF16.\n", 6)
    assert (d.status, d.value, d.inferred_keys) == ("incomplete", {"scheme": "second-half"}, ("scheme",))
    assert d.needs == ("give the number of scored positions",)
    assert [e.tool for e in d.evidence] == [None, "llama-perplexity"] and d.evidence[0].text == "20 chunks"


CLAIM_OVER_CHUNKS = ("Q4_K_M, from `llama-perplexity --kl-divergence` over 20 chunks with a context of 1024 tokens: "
                     "Mean KLD 0.0231 vs BF16.\n")


def test_the_tools_fixed_positions_are_counted_over_the_claims_own_chunks():
    """The count of scored positions is the card's chunks times the second half of the card's own length (20 x 511),
    and no evidence quotes the default 512 the card's 1024 replaces; no warning asks for the count."""
    d5, d6 = first_reading(CLAIM_OVER_CHUNKS, 5), first_reading(CLAIM_OVER_CHUNKS, 6)
    assert d5.value == {"n_ctx": 1024, "chunks": 20} and d5.status == "stated"
    assert (d6.status, d6.value, d6.inferred_keys) == ("stated", {"scheme": "second-half", "count": 20 * 511}, ("scheme", "count"))
    assert not any("512" in e.text for e in (*d5.evidence, *d6.evidence)), (d5.evidence, d6.evidence)
    out = lint_text(("# Card\n\n" + CLAIM_OVER_CHUNKS).encode(), "README.md", enabled_codes()).findings
    assert not any(f.rule_id in ("KLD335", "KLD336") for f in out)
    assert any(f.rule_id == "KLD313" and "10220 over 20 chunks" in f.message for f in out)


def test_another_runs_log_line_does_not_count_the_positions():
    # llama-imatrix prints the same "computing over N chunks, n_ctx=M" line for its calibration run: the KL claim's
    # positions are not counted over those 125 chunks
    card = ("```\ncompute_imatrix: computing over 125 chunks, n_ctx=512, batch_size=2048, n_seq=4\n```\n\n"
            "KL divergence from `llama-perplexity --kl-divergence` over 20 chunks: Mean KLD 0.0231 vs BF16.\n")
    d6 = first_reading(card, 6)
    assert d6.value.get("count") != 125 * 255 and "125" not in " ".join(e.text for e in d6.evidence)


def test_a_scheme_of_the_cards_own_is_not_counted_as_the_tools():
    # the card names its own positions: the tool's second half does not complete them, nor count them
    d = first_reading("Q4_K_M via llama-perplexity over 20 chunks of 512 tokens, every position after the first 256: "
                      "Mean KLD 0.0231 vs BF16.\n", 6)
    assert (d.status, d.value.get("scheme"), d.value.get("count"), d.inferred_keys) == ("incomplete", "all", None, ())
    assert all(e.tool is None for e in d.evidence)


def test_a_stated_text_is_not_given_the_tools_default_texts_source():
    # model_diff's default text is wikitext-2; a card that names another keeps its own, incomplete, reading
    text = ("EXL3 4.0bpw via exllamav3's model_diff.py, measured on the C4 validation split.\n\n"
            "-- KL divergence (4.0bpw, original):  0.01230000\n")
    d = first_reading(text, 3)
    assert (d.status, d.value, d.inferred_keys) == ("incomplete", {"name": "c4"}, ())


@pytest.mark.parametrize(
    ("options", "rows", "length"), [("", 100, 2048), (" -l 4096", 100, 4096), (" -r 50 --length 1024", 50, 1024)]
)
def test_model_diffs_rows_and_length_options_replace_its_defaults(options, rows, length):
    """exllamav3 model_diff's -r (rows, default 100) and -l (tokens per row, default 2048) on the card's command line
    are what its run used: the inferred D5 never contradicts the card's own options."""
    text = (f"EXL3 4.0bpw, `python eval/model_diff.py -ma q -mb orig{options}`:\n\n"
            "-- KL divergence (4.0bpw, original):  0.01230000\n")
    d = first_reading(text, 5)
    assert d.status == "inferred" and d.value == {"n_ctx": length, "chunks": rows, "stride": length}, d


def test_another_programs_rows_and_length_are_not_model_diffs():
    # convert.py's -r / -l before the script on one line: model_diff ran with its defaults
    text = ("EXL3, `python convert.py -i in -o out -r 200 -l 8192 && python eval/model_diff.py -ma out -mb in`:\n\n"
            "-- KL divergence (4.0bpw, original):  0.01230000\n")
    assert first_reading(text, 5).value == {"n_ctx": 2048, "chunks": 100, "stride": 2048}


@pytest.mark.parametrize("placeholder", ["$BASE", "<path-to-bf16>", "{base_dir}"])
def test_a_placeholder_after_mb_names_no_reference(placeholder):
    text = (f"`python eval/model_diff.py -ma $QUANT -mb {placeholder} -r 20`\n\n"
            "-- KL divergence (A, B):  0.01842000\n")
    assert first_reading(text, 1).status == "missing"


def test_model_diffs_model_b_is_the_reference():
    """model_diff prints KL(A, B) with B the reference: its -mb on the command that names the script is D1, in part."""
    out = "\n\n-- KL divergence (A, B):  0.01842000\n-- KL divergence (B, A):  0.01913700\n"
    d = first_reading("`python eval/model_diff.py -ma ./q4-exl3 \\\n    -mb Qwen/Qwen3-8B -r 20`" + out, 1)
    assert d.status == "incomplete" and d.value.get("repo") == "Qwen/Qwen3-8B" and d.evidence[0].text == "-mb Qwen/Qwen3-8B"
    # the same option of another program names no reference
    d = first_reading("`python tools/merge.py -ma ./a -mb Qwen/Qwen3-8B`, then model_diff.py on the merge." + out, 1)
    assert d.status == "missing", d


def test_a_tool_named_in_prose_only_is_not_its_printed_output():
    doc = scan("We compared with a script similar to model_diff but our own.\n", 1)
    assert find_claims(doc) == []


# ---- tools named, without defaults to infer ------------------------------------------------------------


def test_mlx_quant_fidelity_report_is_named_in_the_reading():
    from pathlib import Path

    text = (Path(__file__).parent / "data" / "real_cards" / "cards" / "mlx_quant_fidelity_pypi.md").read_text(encoding="utf-8")
    readings = claims(text)
    assert readings and {r.tool for r in readings} == {"mlx-quant-fidelity"}
    assert all(r.disclosures[5].status != "inferred" for r in readings)  # named, no defaults inferred
    kl = next(r for r in readings if any(n.statistic == "p99" for n in r.numbers))
    assert {n.statistic for n in kl.numbers} >= {"mean", "median", "p99", "max"} and {n.unit for n in kl.numbers} == {"nats"}


@pytest.mark.parametrize(
    ("words", "tool"),
    [
        ("Scored with `pip install quant-fidelity-suite` receipts.", "quant-fidelity-suite"),
        ("Run `python eval/qbench.py -m model` for the table.", "exllamav3 qbench"),
        ("Quantized with NVIDIA TensorRT Model Optimizer (nvidia-modelopt 0.29).", "TensorRT Model Optimizer"),
        ("This model was made with heretic v1.0.1 (p-e-w/heretic).", "heretic"),
        ("Scores from lm_eval --tasks wikitext.", "lm-evaluation-harness"),
        ("Logit check run in MaxText against the HF checkpoint.", "MaxText"),
        ("Computed with llama_kl.py against the f16 logits.", "llama_kl.py"),
    ],
)
def test_tools_named_on_the_card(words, tool):
    (claim,) = claims(f"{words}\n\n| Quant | KLD |\n|---|---|\n| Q4_K_M | 0.0123 |\n")
    assert claim.tool == tool


def test_a_logit_check_log_line_with_an_exponent_is_a_claim():
    (claim,) = claims("```\nstep 0: max abs logit diff 0.0123\nKL divergence: 3.1e-06\n```\n")
    assert claim.kind == "tool-output" and claim.numbers[0].value == 3.1e-06


# ---- front matter: a Hub model-index result with a KL metric (a fidelity receipt) -------------------

MODEL_INDEX = """---
base_model: zai-org/GLM-5.3-Flash-BF16
base_model_relation: quantized
model-index:
- name: GLM-5.3-Flash-TR3-8bpw
  results:
  - task: {type: text-generation}
    dataset:
      type: brandonmusic/GLM-5.3-Flash-BF16-Teacher-Logits
      name: panel25 subset
      split: streaming
      revision: 95f4fdd94bf29989db2e0d1054e4931f55edb6aa
      args: {contexts: 25, scored_positions: 51175, context_length: 2048}
    metrics:
    - type: kl_divergence
      value: 0.012384191023436866
      args: {units: nats, direction: reference_to_candidate, estimator: full_vocabulary_fp64}
---
# GLM-5.3-Flash-TR3-8bpw

Mean KLD 0.0124 nats.
"""  # the shape of tests/data/real_cards/dev2/cards/malaiwah_glm53_flash_tr3_8bpw_card.md's front matter


def test_a_model_index_kl_result_is_evidence_by_its_keys():
    (claim,) = claims(MODEL_INDEX)
    d = claim.disclosures
    assert d[3].status == "stated" and d[3].evidence[0].key == "/model-index/0/results/0/dataset/type"
    assert d[5].value == {"n_ctx": 2048, "chunks": 25} and d[5].status == "stated"
    assert d[6].value == {"count": 51175} and d[7].value["direction"] == "forward" and d[8].value == {"scheme": "full"}


def test_a_model_index_without_a_kl_metric_says_nothing():
    (claim,) = claims(MODEL_INDEX.replace("type: kl_divergence", "type: accuracy"))
    assert all(claim.disclosures[n].status == "missing" for n in (3, 5, 6, 7, 8))


# ---- real tool output, one sample per grammar (tests/data/tool_samples, sources in its index.yaml) ---------

SAMPLES = Path(__file__).parent / "data" / "tool_samples"


def sample(name: str):
    return claims((SAMPLES / name).read_text(encoding="utf-8"))


def test_every_sample_is_cited_and_every_grammar_has_one():
    import yaml

    from kldcard.lint.read.tools import GRAMMARS

    index = yaml.safe_load((SAMPLES / "index.yaml").read_text(encoding="utf-8"))["samples"]
    assert set(index) == {p.name for p in SAMPLES.iterdir() if p.name != "index.yaml"}
    assert all(entry.get("source") and entry.get("author") for entry in index.values())
    assert {g.name for g in GRAMMARS} <= {entry["tool"] for entry in index.values()}


def test_heretic_pareto_menu():
    (claim,) = sample("heretic_pareto_menu.txt")
    assert claim.kind == "tool-output" and claim.tool == "heretic"
    values = [n.value for n in claim.numbers]
    assert len(values) == 16 and values[0] == 0.1055 and values[-1] == 0.0011  # not the refusal counts
    d = claim.disclosures  # Heretic's defaults live in its source and config (heretic.py cites them): named, not inferred
    assert {n: d[n].status for n in (3, 6, 7, 8)} == dict.fromkeys((3, 6, 7, 8), "missing")
    assert GRAMMARS_BY_NAME["heretic"].defaults and not GRAMMARS_BY_NAME["heretic"].infer


def test_heretic_model_card_table():
    (claim,) = sample("heretic_card_performance.md")
    assert claim.kind == "table" and claim.tool == "heretic" and [n.value for n in claim.numbers] == [0.0535]
    assert claim.disclosures[7].status == "missing" and claim.disclosures[8].status == "missing"


def test_a_heretic_trial_line_from_its_print_format():
    """evaluator.py prints "  * KL divergence: {:.4f}" under "  * Obtaining first-token probability distributions"."""
    text = "```\n* Evaluating...\n  * Obtaining first-token probability distributions...\n  * KL divergence: 0.0874\n  * Counting model refusals...\n  * Refusals: 20/100\n```\n"
    (claim,) = claims(text)
    assert claim.tool == "heretic" and [n.value for n in claim.numbers] == [0.0874]


def test_heretic_named_without_its_output_is_named_but_the_word_alone_infers_nothing():
    (named,) = claims("Abliterated with `pip install heretic-llm`.\n\n| Model | KL divergence |\n|---|---|\n| ours | 0.16 |\n")
    assert named.tool == "heretic" and named.disclosures[6].status == "missing"
    (word,) = claims("A heretic take on quantization.\n\n| Model | KLD |\n|---|---|\n| Q4_K_M | 0.0123 |\n")
    assert word.tool is None and word.disclosures[6].status == "missing"


def test_maxtext_logit_checker():
    (claim,) = sample("maxtext_logit_checker.txt")
    assert claim.kind == "tool-output" and claim.tool == "MaxText forward_pass_logit_checker"
    assert [(n.value, n.statistic) for n in claim.numbers] == [(0.000409, "mean"), (0.003497, "max")]
    d = claim.disclosures
    assert d[7].status == "stated" and d[7].value["direction"] == "forward"  # "D_KL(P_golden || Q_model)" on the line
    assert d[8].status == d[6].status == d[3].status == "missing"  # the checker's defaults: in its source only


def test_mlx_quant_fidelity_report():
    (claim,) = sample("mlx_quant_fidelity.md")
    assert claim.tool == "mlx-quant-fidelity"
    assert [(n.value, n.statistic, n.unit) for n in claim.numbers] == [
        (0.0002, "mean", "nats"), (0.0001, "median", "nats"), (0.0015, "p99", "nats"), (0.1129, "max", "nats")]
    assert claim.disclosures[3].status == "stated" and claim.disclosures[6].value["count"] == 51100  # its own protocol line
    assert all(claim.disclosures[n].status != "inferred" for n in range(1, 10))  # no documented defaults


def test_llama_perplexity_first_version_chunk_table_and_block():
    readings = sample("llama_perplexity_pr5081_block.txt")
    chunks, block = readings  # the rows on both sides of the paste's "..." are one run, claimed at their header
    assert chunks.text.startswith("chunk") and chunks.tool == "llama-perplexity" and chunks.kind == "tool-output"
    assert [n.value for n in chunks.numbers[:4]] == [0.01145, 0.00153, 0.01388, 0.00164]
    assert 3.9734 not in [n.value for n in chunks.numbers] and chunks.numbers[-2].value == 0.01062  # not the bare PPL
    assert [(n.value, n.statistic) for n in block.numbers] == [(0.010623, "mean"), (0.000065, "se"), (0.005517, "median")]
    assert block.disclosures[7].status == "inferred" and block.disclosures[8].value["floor"] == 16


def test_llama_perplexity_statistics_block_as_stored():
    (claim,) = sample("llama_perplexity_current_block.txt")
    assert claim.tool == "llama-perplexity" and claim.numbers[0].value == 0.042532
    stats = [n.statistic for n in claim.numbers]
    assert stats[0] == "mean" and {"max", "p99.9", "p99", "median", "min"} <= set(stats)
    assert claim.numbers[-1].value == -0.000021


def test_ik_llama_statistics_block():
    """ik_llama.cpp's block has mainline's labels; its defaults differ (a vocabulary floor of 24, not 16)."""
    (claim,) = sample("ik_llama_pr817_block.txt")
    assert claim.tool == "llama-perplexity" and claim.kind == "tool-output"
    assert recognise(scan((SAMPLES / "ik_llama_pr817_block.txt").read_text(encoding="utf-8"), 1).scanned).name == "ik_llama.cpp llama-perplexity"
    assert [(n.value, n.statistic) for n in claim.numbers[:3]] == [(0.017475, "mean"), (0.000763, "se"), (11.152802, "max")]
    assert claim.numbers[-1].value == -0.000423 and claim.numbers[-1].statistic == "min"
    assert claim.disclosures[8].value == {"scheme": "floor", "floor": 24} and claim.disclosures[8].status == "inferred"
    assert claim.disclosures[2].value["engine"] == "ik_llama.cpp"  # "ik_llama's llama-perplexity": the fork ran it


def test_llama_kl_py_run():
    running, summary = sample("llama_kl_pr5076.txt")
    assert running.tool == summary.tool == "llama_kl.py" and running.kind == summary.kind == "tool-output"
    assert len(running.numbers) == 13 and running.numbers[-1].value == 0.4387  # not the top1 agreement
    assert [(n.value, n.statistic) for n in summary.numbers] == [(0.438655, "mean"), (1.052, "p90"), (1.654, "p95"), (3.744, "p99")]
    d = summary.disclosures  # the script's own defaults (llama_kl.py cites them) are in its source only
    assert d[7].status == d[5].status == d[8].status == "missing"


def test_printed_output_outranks_a_mention_of_llama_perplexity():
    text = (SAMPLES / "llama_kl_pr5076.txt").read_text(encoding="utf-8")
    mentioned = "Checked against llama-perplexity --kl-divergence as well.\n\n" + text
    assert {r.tool for r in claims(mentioned)} == {"llama_kl.py"}
    printed = text + "\n```\n====== KL divergence statistics ======\nMean    KLD:   0.438100 ±   0.006000\n```\n"
    assert recognise(scan(printed, 1).scanned).name == "llama-perplexity"  # its own block: its defaults


def test_a_top_level_kl_bullet_is_no_heretic_trial_line():
    (claim,) = claims("Results:\n\n* KL divergence: 0.16\n* Refusals: 3/100\n")
    assert claim.kind != "tool-output" and claim.numbers[0].value == 0.16


def test_model_diff_label_spelt_out_names_the_tool():
    # exllamav3 model_diff's "KL-div (q→o)" column label, written with the words it abbreviates: the tool is named,
    # so its documented defaults are inferred (the text, the context, the direction and the vocabulary)
    text = "Measured under exllamav3 v0.0.22:\n\n| bpw | KL-div (quant→orig) | PPL |\n|---|---|---|\n| 2.0 | 0.41 | 9.1 |\n"
    for n in (3, 5, 7, 8):
        d = first_reading(text, n)
        assert d.status == "inferred" and d.evidence[0].tool == "exllamav3 model_diff", d


@pytest.mark.parametrize(
    ("sentence", "engine"),
    [
        ("Numbers from ik_llama's llama-perplexity, KLD against the BF16 logits.", "ik_llama.cpp"),
        ("Numbers from llama-perplexity b6500, KLD against the BF16 logits.", "llama.cpp"),
    ],
)
def test_a_tool_both_engines_ship_runs_in_the_one_the_sentence_names(sentence, engine):
    from kldcard.lint.read.values import runtime

    assert runtime("llama-perplexity", sentence)["engine"] == engine


def test_quant_fidelity_suite_receipt_as_the_page_store_keeps_it():
    """The receipt's rows flattened one per line: the mean row and the tail row are one claim, the "top-1
    agreement" row between them is the record's (no KLD), and the tail's four numbers are paired with their labels."""
    (claim,) = sample("quant_fidelity_suite_drowzeys_keys_glm53.txt")
    assert claim.kind == "tool-output" and claim.tool == "quant-fidelity-suite"
    assert [(n.value, n.statistic, n.unit) for n in claim.numbers] == [
        (0.10233258694757999, "mean", "nats"), (0.007512645535868924, "median", "nats"),
        (0.47124999949160773, "p95", "nats"), (1.6232298221454846, "p99", "nats"), (10.579389872756519, "max", "nats")]
    d = claim.disclosures
    assert d[7].status == "stated" and d[7].value["direction"] == "forward"  # KL(reference ‖ candidate) on the row
    assert d[6].value["count"] == 51175 and d[3].status == "stated"  # the receipt's own panel and root dataset rows
    assert all(d[n].status != "inferred" for n in range(1, 10))  # no documented defaults


def test_quant_fidelity_suite_tail_row_from_its_print_format():
    """The renderer's rows (``render``: "KL(reference ‖ candidate), mean tokenwise, nats", "KL median / p95 / p99 / max
    a / b / c / d"), flattened and pasted without the suite's name: its printed label names it, each number its label's."""
    text = "```\nKL(reference ‖ candidate), mean tokenwise, nats 0.05\nKL median / p95 / p99 / max 0.004 / 0.21 / 0.9 / 7.5\n```\n"
    (claim,) = claims(text)
    assert claim.tool == "quant-fidelity-suite"
    assert [(n.value, n.statistic) for n in claim.numbers] == [(0.05, "mean"), (0.004, "median"), (0.21, "p95"), (0.9, "p99"), (7.5, "max")]


def test_slash_lists_pair_only_when_their_lengths_agree():
    from kldcard.lint.read.slash_pairs import paired_label

    line = "KL median / p95 0.01 / 0.4"
    assert paired_label(line, line.index("0.4")) == "p95" and paired_label(line, line.index("0.01")) == "median"
    assert paired_label("KL mean / p99 / max 0.01 / 0.4", 21) is None  # three labels, two numbers


def test_qbench_model_lines_from_its_print_format():
    """exllamav3 eval/qbench: each model's line is one number read (the kld column, its mean); the buckets,
    the reference's ppl-only line and an INVALID model sit between them in the same record (one claim)."""
    (claim,) = sample("qbench_print_format.txt")
    assert claim.kind == "tool-output" and claim.tool == "exllamav3 qbench"
    assert [n.value for n in claim.numbers] == [0.000412, 0.02138, 0.0611]  # not ppl, median, p90 or a bucket
    d = claim.disclosures  # defaults documented in its source only (qbench.py cites them): named, not inferred
    assert all(d[n].status != "inferred" for n in range(1, 10))
    assert GRAMMARS_BY_NAME["exllamav3 qbench"].defaults and not GRAMMARS_BY_NAME["exllamav3 qbench"].infer
    assert recognise(scan(SAMPLES.joinpath("qbench_print_format.txt").read_text(encoding="utf-8"), 1).scanned).name == "exllamav3 qbench"


def test_a_ppl_only_listing_is_not_qbench():
    text = "```\n -- 4.0bpw                      ppl    9.4518\n -- 3.0bpw                      ppl    9.8120\n```\n"
    assert claims(text) == []
    assert recognise(scan(text, 1).scanned) is None
