"""D6, the scored positions, as cards write them beyond the main patterns (kldcard.lint.read.positions):
compound and step counts, schemes, the card languages; a scheme word outside a sentence about the
measurement is not evidence."""

from __future__ import annotations

import pytest
from helpers_reading import card, reading

from kldcard.lint.prose import check_prose

CLAIM = "Q4_K_M reaches a KLD of 0.0231"


@pytest.mark.parametrize(
    ("text", "value"),
    [
        (f"{CLAIM} on a sealed 25-window / 51,175-position panel.\n", {"count": 51175}),
        (f"{CLAIM} over 16,376 predicted tokens.\n", {"count": 16376}),
        ("Mean KLD per quarter over the 64 generated steps: 0.0231.\n", {"count": 64}),
        (f"{CLAIM}; 8 prompts × 128 tokens, 32 decode steps.\n", {"count": 32}),
        (f"{CLAIM} on 125 held-out rows.\n", {"count": 125}),
        (f"{CLAIM} (`probe --prompts all --gen-tokens 128`).\n", {"count": 128}),
        ("Q4_K_M 的 KLD 为 0.0231（229,348 个评分 token / 28 个窗口）。\n", {"count": 229348}),
        (f"{CLAIM} as last-logit KLD on one prompt.\n", {"scheme": "last-token"}),
        (f"{CLAIM}, from first-token probability distributions.\n", {"scheme": "first-token"}),
        (f"{CLAIM} on full-window KL divergence.\n", {"scheme": "all"}),
        (f"{CLAIM}, per-step KL over the matched prefix.\n", {"scheme": "matched-prefix"}),
        ("La KL media del primer token es 0,0224.\n", {"scheme": "first-token"}),
        ("La KL media es 0,0124 sobre 25 ventanas (51.175 posiciones).\n", {"count": 51175}),
        ("平均KLD 0.0231（2,632位置）。\n", {"count": 2632}),
        (f"{CLAIM} over 204\u202f800 positions.\n", {"count": 204800}),  # a thin space between thousands
        (f"{CLAIM} over ~1.2M scored tokens.\n", {"count": 1200000}),
        # a tool's "Label: value" lines: the count is the one after "Total positions:", not the KLD above it
        ("```text\ncontext: 2048\nstride: 512\nwindows: 1\nMean KLD: 0.0677374\nTotal positions: 2047\n```\n", {"count": 2047}),
        (f"{CLAIM}; 204,800 tokens scored.\n", {"count": 204800}),
        (f"{CLAIM}; 250k tokens were evaluated.\n", {"count": 250000}),
        (f"{CLAIM} over all tokens.\n", {"scheme": "all"}),
        (f"{CLAIM} over the last 256 tokens of each window.\n", {"scheme": "tail"}),
        (f"{CLAIM}; positions 512-1023 of each chunk.\n", {"scheme": "range"}),
        (f"{CLAIM}, scored on assistant tokens only.\n", {"scheme": "response-only"}),
        (f"{CLAIM}, averaged over 1,000 sequences.\n", {}),  # windows: no count of positions
        (f"{CLAIM}. Computed by forced decode of the generated tokens through the baseline.\n", {"scheme": "teacher-forced"}),
    ],
)
def test_position_forms_are_incomplete_with_their_value(text, value):
    d = reading(text, 6)
    assert (d.status, {k: v for k, v in d.value.items() if k in value}) == ("incomplete", value), d
    assert d.needs  # a count asks for the scheme, a scheme for the count
    assert "KLD306" not in {f.rule_id for f in check_prose(card(text))}


def test_a_scheme_and_a_count_are_stated():
    d = reading(f"{CLAIM} on the last token of each prompt, 4,096 positions in all.\n", 6)
    assert (d.status, d.value) == ("stated", {"scheme": "last-token", "count": 4096})


@pytest.mark.parametrize(
    "text",
    [
        # a recipe's first token, training steps: no measurement in the sentence
        f"{CLAIM}.\n\nThe direction is the mean difference of the first-token residuals.\n",
        f"{CLAIM}.\n\nThe adapter was trained for 500 steps.\n",
        f"{CLAIM}.\n\nRun 200 decode steps to warm the cache.\n",
        f"{CLAIM} over all tokens of the vocabulary.\n",  # D8, not D6
        f"{CLAIM}.\n\nThe adapter saw 1,000 sequences in training.\n",
        f"{CLAIM}, measured over 20 steps of the run.\n",  # tune-p: bare steps are an RL run's optimizer steps
    ],
)
def test_what_is_not_the_scored_positions_is_missing(text):
    assert reading(text, 6).status == "missing"


def test_a_number_of_the_line_above_is_not_a_count():
    text = "```text\nstride: 512\nwindows: 1\nMean KLD: 0.0677374\nTotal positions\n```\n"
    d = reading(text, 6)
    assert "count" not in d.value and all("512" not in e.text and "0.0677" not in e.text for e in d.evidence)


@pytest.mark.parametrize(
    ("text", "value"),
    [
        # tokens said to be scored (kldcard.lint.read.position_counts), in the card languages
        ("KLD (preset B, held-out 4096 tokens): mean 0.0231.\n", {"count": 4096}),
        ("La KLD media es 0,0231 (12 fragmentos de 1.024 tokens evaluados).\n", {"count": 1024}),
        ("平均 KLD 为 0.0231，共 38,400 个计分词元。\n", {"count": 38400}),
        # tokens a measuring verb ran on, "n = N tokens"
        ("Mean KLD 0.0231, measured on 24,576 tokens of a story text.\n", {"count": 24576}),
        ("Mean KLD 0.0231 (n = 2048 tokens).\n", {"count": 2048}),
        # window and sample counts: how many windows, no count of positions
        ("Mean KLD 0.0231 on 50 chunks of wikitext.\n", {}),  # a count after a decimal KLD
        ("Mean KLD 0.0231 over 1,200 chunks.\n", {}),
        ("| Quant | Mean KLD | Tokens |\n|---|---|---|\n| Q4 | 0.0231 | 204800 |\n", {}),  # a count column
        (f"{CLAIM} as 30-chunk KLD against the F16 file.\n", {}),
        (f"{CLAIM} (`kl_eval.py --num-samples 256 --seq-len 1024`).\n", {}),
        ("KL 散度均值 0.0231，共 300 个评测片段。\n", {}),
        ("平均KLD 0.0231（16 prompt・64 logit位置で比較）。\n", {}),
        # the tokens the KL is taken over (CONVENTIONS rule 15b.1; this was read as the text's size before it)
        (f"{CLAIM}, averaged over 50k tokens of a story corpus.\n", {"count": 50000}),
    ],
)
def test_scored_token_and_window_counts_are_incomplete(text, value):
    d = reading(text, 6)
    assert (d.status, {k: v for k, v in d.value.items() if k == "count"}) == ("incomplete", value), d


@pytest.mark.parametrize(
    "text",
    [
        f"{CLAIM} on windows of 2048 tokens.\n",  # a window's length (D5)
        f"{CLAIM}.\n\nThe gate projection is a 5120x17408 matrix scored per tensor.\n",  # a weight's shape
        f"{CLAIM}.\n\nThe server answers 16 samples per batch.\n",
    ],
)
def test_text_sizes_lengths_and_shapes_are_not_position_counts(text):
    assert reading(text, 6).status == "missing", reading(text, 6)


@pytest.mark.parametrize(
    ("text", "scheme"),
    [
        (f"{CLAIM} over the first 256 tokens of each prompt.\n", "head"),
        (f"{CLAIM} over the last 64 tokens.\n", "tail"),
        ("平均KLD 0.0231（先頭 128 トークン）。\n", "head"),
        ("La KLD media es 0,0231 en los primeros 64 tokens.\n", "head"),
        ("Le KLD moyen est 0,0231 sur les 64 derniers tokens.\n", "tail"),
    ],
)
def test_the_first_or_last_n_tokens_is_a_scheme(text, scheme):
    d = reading(text, 6)
    assert d.status == "incomplete" and d.value.get("scheme") == scheme, d


# A sentence that keeps its text apart from calibration speaks of the evaluated text, so its count of positions is
# the measurement's (h15/a glm53 "kept out of calibration (... positions)"; the same separation in the prose corpus's
# eaddario card and h3 peasantsmith, "not used for calibration", and h5/b, "disjoint from the calibration slice").
# A sentence about the calibration run itself still gives no count for the KL.
@pytest.mark.parametrize(
    "sentence",
    [
        "Baseline logits come from 6 sequences held back and kept out of calibration (5,120 positions).",
        "The 5,120 positions of prose were not used for calibration.",
        "Those 12 windows (5,120 positions) are disjoint from the calibration slice.",
    ],
)
def test_a_text_kept_apart_from_calibration_gives_the_scored_positions(sentence):
    d = reading(f"{CLAIM}.\n\n{sentence}\n", 6)
    assert (d.status, d.value.get("count")) == ("incomplete", 5120), d


@pytest.mark.parametrize("sentence", ["The imatrix calibration covered 5,120 positions of prose.",
                                      # an exclusion in another clause does not make the calibration's count the KL's
                                      "The imatrix calibration covered 5,120 positions of code, and the chat set was kept out "
                                      "of calibration."])
def test_the_calibration_runs_own_positions_are_not_the_scored_ones(sentence):
    assert reading(f"{CLAIM}.\n\n{sentence}\n", 6).status == "missing"


# The count as a row of a two-column table of the run's figures, the table form of "Total positions: 2047": the KL is
# named by another row of the same table, not by its "| Metric | Value |" header (h16/a mlx_quality_suite "| Positions |
# N |"; dev hipfire_escha "| scored positions | N, teacher-forced |"). A table with no KL row, or a row of another
# quantity, gives no count.
FIGURES = "| Metric | Value |\n|---|---|\n| Variant | q4 |\n"


def test_a_positions_row_of_a_kl_figures_table_is_the_count():
    d = reading(FIGURES + "| Positions | 812 |\n| Mean KLD | 0.0231 |\n| Max KLD | 1.9 |\n", 6)
    assert (d.status, d.value.get("count")) == ("incomplete", 812), d


@pytest.mark.parametrize(
    "table",
    [
        # a speed table beside the KL one: its rows are not the KL's
        f"{CLAIM}.\n\n" + FIGURES + "| Positions | 812 |\n| Decode t/s | 41.5 |\n",
        FIGURES + "| Positions embedded | 812 |\n| Mean KLD | 0.0231 |\n",
        # a KL row that sets the run up is no KL figure, and a config's n_positions is a maximum length
        f"{CLAIM}.\n\n" + FIGURES + "| Positions | 4096 |\n| KLD threshold | 0.05 |\n",
        f"{CLAIM}.\n\n" + FIGURES + "| n_positions | 1024 |\n| kl_coef | 0.05 |\n",
    ],
)
def test_a_positions_row_outside_a_kl_table_is_no_count(table):
    assert reading(table, 6).status == "missing", reading(table, 6)


# A top-1 agreement written as a fraction in the KL's clause counts the positions compared, those the KL is taken over
# (CONVENTIONS round 21 q2; round 24: holdout-10 d/fr_acvram_piece125ter "argmax égaux 136/141", holdout-17
# a/opencl_s24_ultra_adreno750 "agreed on 127/128 top tokens", holdout-17 c/es_ficha_0xwhitemage "coincidencia top-1
# en 40/40")
@pytest.mark.parametrize(
    ("text", "count"),
    [
        ("Against the reference the mean KL is 0.0231 nats, top-1 equal on 250/256.\n", 256),
        ("On one fixed prefix the two builds agreed on 95/96 top tokens and the mean KL stayed at 0.0231.\n", 96),
        ("El KLD medio frente a BF16 es 0,0231 y el argmax coincide en 60/64.\n", 64),
        # an abbreviation's full stop inside the sentence ends no clause (read.clause_stops.in_sentence)
        ("Q4_K_M agrees on top-1 for 1270/1280 tokens vs. the BF16 model, with a mean KLD of 0.0123.\n", 1280),
        ("Q4_K_M agrees on top-1 for 1270/1280 tokens (i.e. the BF16 argmax), with a mean KLD of 0.0123.\n", 1280),
    ],
)
def test_a_top1_fraction_beside_the_kl_counts_its_positions(text, count):
    d = reading(text, 6)
    assert d.status != "missing" and d.value.get("count") == count, d


# ... but not a fraction of flips, one counted over cases or prompts, nor one in another check's clause (holdout-11
# d/qwen35_2b_engine_ledger "top-1 flips 0/190", holdout-12 b/exl3_bf16_io "48-case check ... 48/48 top-1",
# holdout-8 d/ramvamp_phase9 "greedy_regression.py PASS with top-1 24/24; ... mean KL", all labelled D6 M)
@pytest.mark.parametrize(
    "text",
    [
        "int8: KL vs bf16 0.0231 | top-1 flips 12/190 | decode 30 tok/s\n",
        "In the 32-case check it came to a mean KL of 0.0231 and 32/32 top-1 agreement.\n",
        "The regression script passed with top-1 20/20; the KL gate passed too (mean KL 0.0231).\n",
        "The mean KL is 0.0231 and top-1 matches on 18/18 prompts.\n",
    ],
)
def test_other_top1_fractions_count_no_positions(text):
    assert reading(text, 6).status == "missing"
