"""Claim detection added in tuning round 4 (issue 28): tables whose KL term is in a caption line above them
(kldcard.lint.read.caption_tables), lists a KL sentence ending in a colon introduces
(kldcard.lint.read.lead_in_lists), a decimal range ("0.003-0.005") read as a number in prose (its first end), and
a training run's printout (kldcard.lint.read.training_output). Each case in the project's own words, with hard
negatives that must stay silent."""

from __future__ import annotations

import pytest

from helpers_reading import claims


BOLD_CAPTION = (
    "Intro text.\n\n**Wiki KLD, 16 chunks, one GPU** (same protocol as before):\n\n"
    "| tier | plain | new | Δ |\n|---|---|---|---|\n| small | 0.0412 | 0.0371 | −10% |\n| large | 0.0301 | 0.0266 | −12% |\n"
)
SENTENCE_CAPTION = (
    "Intro text.\n\nKL in millinats; bits are bytes over parameters.\n\n**First layout:**\n\n"
    "| build | GiB | bpw | news | code | news top-1 |\n|---|---|---|---|---|---|\n| a | 10.5 | 2.40 | 120.4 | 60.2 | 88.1% |\n"
)


def test_a_table_under_a_kl_caption_is_a_claim_at_its_header():
    found = claims(BOLD_CAPTION)
    assert [line for line, _ in found] == [5]
    assert found[0][1] == ["0.0412", "0.0371", "0.0301", "0.0266"]  # not the Δ column


def test_a_kl_caption_sentence_two_lines_up_reads_the_unnamed_columns():
    found = claims(SENTENCE_CAPTION)
    assert [line for line, _ in found] == [7]
    assert found[0][1] == ["120.4", "60.2"]  # not the size, bits or top-1 columns


@pytest.mark.parametrize(
    "text",
    [
        # the caption names another quantity in the KL term's clause
        "**PPL and KLD per tier:**\n\n| tier | a | b |\n|---|---|---|\n| x | 7.12 | 7.30 |\n",
        # a training caption
        "**KL penalty per step:**\n\n| step | a | b |\n|---|---|---|\n| 1 | 0.12 | 0.30 |\n",
        # a KL sentence far above the table, past a heading
        "We measure KLD later.\n\n## Speed\n\n| tier | a | b |\n|---|---|---|\n| x | 7.12 | 7.30 |\n",
        # the caption is a long paragraph, not a caption
        ("The KLD " + "numbers are discussed at length here and " * 8 + "end here:\n\n| tier | a |\n|---|---|\n| x | 7.12 |\n"),
    ],
)
def test_tables_without_a_kl_caption_stay_silent(text):
    assert claims(text) == []


LEAD_IN = (
    "Repeated runs of one setup disagree. The same window gives different KL values from one start to the next:\n\n"
    "- Run A: mean 0.0412, block counts 10 / 20.\n- Run B: mean 0.0398, same counts.\n- Run C: window median 0.0301.\n"
)


def test_items_a_kl_lead_in_introduces_are_claims():
    assert claims(LEAD_IN) == [(3, ["0.0412"]), (4, ["0.0398"]), (5, ["0.0301"])]


@pytest.mark.parametrize(
    "text",
    [
        # items with another metric before the statistic
        "Results of the KL study follow:\n\n- Run A: PPL mean 7.12\n- Run B: PPL mean 7.40\n",
        # the lead-in's last sentence has no KL term
        "KLD is covered later. Speeds were:\n\n- Run A: mean 31.5\n- Run B: mean 30.2\n",
        # a training lead-in
        "The KL penalty schedule was:\n\n- stage 1: mean 0.10\n- stage 2: mean 0.05\n",
    ],
)
def test_lists_without_a_kl_lead_in_stay_silent(text):
    assert claims(text) == []


def test_a_decimal_range_after_a_kl_term_is_a_claim_in_prose():
    assert claims("The new rows sit at 10x the baseline's KLD, 0.003-0.005 absolute, on all models.\n") == [(1, ["0.003"])]  # the range's first number


def test_a_hyphenated_kl_range_in_a_table_cell_is_a_band():
    text = "| Group | Why |\n|---|---|\n| attn | Medium sensitivity (KL 0.002-0.004) |\n"
    assert claims(text) == []


def test_a_kl_line_printed_by_a_training_run_is_no_claim():
    text = "Output:\n\n```text\nbatch loss: 0.31\nexpected reward: 1.10\nKL divergence: 0.0912\npolicy objective: 1.02\n```\n"
    assert claims(text) == []


def test_a_kl_line_printed_beside_other_quality_metrics_stays_a_claim():
    text = "Output:\n\n```text\nPPL: 7.12\nKL divergence: 0.0912\ntop-1 agreement: 0.95\n```\n"
    assert claims(text) == [(5, ["0.0912"])]


# A flattened table (a web mirror's space-separated rows) reads its caption as a pipe table does
# (read.caption_tables.kl_captioned): a short title alone between blank lines, or a caption sentence.
FLAT_TITLE = (
    "Intro text.\n\nKL divergence per corpus, ours and theirs\n\n"
    "Corpus theirs Q4 (3.1 GB) ours Q4 (3.1 GB) change\nnews 0.0412 0.0105 -74%\ncode 0.0388 0.0121 -69%\n"
)
FLAT_SENTENCE = (
    "Intro text.\n\nOur headline metric is KLD against the BF16 weights; perplexity stands beside it.\n\n"
    "File Size PPL mean\nq8.gguf 4.2 GB 9.19 0.0015\nq4.gguf 2.3 GB 9.50 0.0495\n"
)


def test_a_flattened_table_under_a_kl_title_is_a_claim_at_its_header():
    found = claims(FLAT_TITLE)
    assert [line for line, _ in found] == [5]
    assert found[0][1] == ["0.0412", "0.0105", "0.0388", "0.0121"]  # not the sizes or the changes


def test_a_flattened_table_under_a_kl_caption_sentence_is_a_claim():
    # the header names sizes and perplexity too, and its columns cannot be told apart: no number is taken as KLD
    assert claims(FLAT_SENTENCE) == [(5, [])]


# CSV and fixed-width tables read their caption or heading the same way (read.table_columns)
CSV_CAPTION = "Intro.\n\n**KLD against BF16, per corpus:**\n\nquant,news,code\nq8,0.0021,0.0034\nq4,0.0412,0.0388\n"
INDENTED_HEADING = "## KL divergence to the BF16 weights\n\n              news      code\nq8            0.0021    0.0034\nq4            0.0412    0.0388\n"


def test_a_csv_table_under_a_kl_caption_reads_its_value_columns():
    assert claims(CSV_CAPTION) == [(5, ["0.0021", "0.0034", "0.0412", "0.0388"])]


def test_an_indented_table_under_a_kl_heading_reads_its_value_columns():
    assert claims(INDENTED_HEADING) == [(3, ["0.0021", "0.0034", "0.0412", "0.0388"])]


def test_a_csv_table_under_a_caption_naming_another_quantity_stays_silent():
    assert claims(CSV_CAPTION.replace("KLD against BF16", "Speed and KLD")) == []


@pytest.mark.parametrize(
    "text",
    [
        # the title names another quantity too
        "Intro.\n\nSpeed and KL divergence per corpus\n\nCorpus theirs ours change\nnews 41.2 52.3 +27%\ncode 38.8 51.0 +31%\n",
        # a training setting, not a measurement
        "Intro.\n\nKL penalty schedule per stage\n\nStage start end warmup\nfirst 0.10 0.05 0.5\nsecond 0.05 0.01 0.5\n",
        # a paragraph that mentions KL, not a caption: it runs on into the next line
        "We tuned the KL term for a while and then\nlooked at speed.\n\nRun tok/s ms per token\na 41.2 24.3\nb 38.8 25.8\n",
        # the section is about something else
        "## Throughput\n\nKL divergence runs beside it\n\nRun first second third\na 41.2 24.3 12.5\nb 38.8 25.8 11.0\n",
    ],
)
def test_a_flattened_table_without_a_kl_caption_stays_silent(text: str):
    assert claims(text) == []


def test_a_flattened_table_under_a_kl_heading_is_read_as_a_pipe_table_is():
    text = "## KL divergence to BF16\n\nCorpus q8 q6 q4\nnews 0.0021 0.0105 0.0412\ncode 0.0034 0.0121 0.0388\n"
    assert claims(text) == [(3, ["0.0021", "0.0105", "0.0412", "0.0034", "0.0121", "0.0388"])]
    assert claims(text.replace("## KL divergence to BF16", "## KL divergence and throughput")) == []  # not KLD only


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        # a lead-in that is a KL label and nothing more: its items give values by their own labels (R5)
        ("**KL to base (the 60 prompts of section 1) at night 7:**\n- dl-2 S: 0.15 and 0.19, up from 0.04.\n"
         "- dl-4: S 0.175 and 0.186.\n", [(2, ["0.15"]), (3, ["0.175"])]),
        ("Mean KL vs BF16, per arm:\n\n- A: 0.031\n- B: 0.044\n", [(3, ["0.031"]), (4, ["0.044"])]),
    ],
)
def test_items_under_a_kl_label_give_its_values_without_a_statistic_word(text, expected):
    assert claims(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "How KL is computed:\n- step 1: take 0.5 of the logits\n",  # a sentence about the KL, not its label
        "**KL penalty schedule:**\n- warmup: 0.1\n- main: 0.05\n",  # a training setting
        "**KL thresholds:**\n- good: 0.05\n- usable: 0.15\n",  # bounds (read.bound_lists)
        "KL to base:\n- PPL of arm A: 6.21\n",  # another metric before the value
    ],
)
def test_items_under_a_kl_sentence_or_setting_without_a_statistic_word_are_not_claims(text):
    assert claims(text) == []
