"""Claim detection added in tuning round 4 (issue 28): tables whose KL term is in a caption line above them
(kldcard.lint.read.caption_tables), lists a KL sentence ending in a colon introduces
(kldcard.lint.read.lead_in_lists), a decimal range ("0.003-0.005") read as a number in prose (its first end), and
a training run's printout (kldcard.lint.read.training_output). Each case in the project's own words, with hard
negatives that must stay silent."""

from __future__ import annotations

import pytest

from kldcard.card.document import parse_card
from kldcard.lint.claims import find_claims
from kldcard.lint.markdown import scan


def claims(text: str) -> list[tuple[int, list[str]]]:
    card = parse_card(text.encode(), "README.md")
    doc = scan(card.body, card.body_line)
    return [(doc.position(c.offset)[0], [n.text for n in c.numbers]) for c in find_claims(doc)]


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
