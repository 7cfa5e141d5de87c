"""Claim finding added in issue 28's ninth tuning round (tune9-a): a relative change of a KLD written with a
present-tense verb ("the mean KL divergence drops by 30%"), and a share of a named KL with a verb ("about 80% of
an int4 KLD was ..."). Each case in the project's own words, a negative next to it."""

from __future__ import annotations

import pytest

from kldcard.card.document import parse_card
from kldcard.lint.claims import find_claims
from kldcard.lint.markdown import scan


def claim_lines(text: str) -> list[int]:
    card = parse_card(text.encode(), "README.md")
    doc = scan(card.body, card.body_line)
    return [doc.position(c.offset)[0] for c in find_claims(doc)]


@pytest.mark.parametrize(
    "text",
    [
        "Against the bf16 weights, the mean KL divergence drops by 30% with the new scales.\n",
        "With GPTQ the next-token KLD falls by 20–25% on every prompt set.\n",
        "On the longer prompts the KL rises 2x over the short ones.\n",
    ],
)
def test_present_tense_changes_are_claims(text):
    assert claim_lines(text)


@pytest.mark.parametrize(
    "text",
    [
        "The mean KL divergence drops quickly once the scales are fitted.\n",  # no amount
        "If the KL penalty rises by 10%, lower the learning rate.\n",  # a training objective
    ],
)
def test_present_tense_without_a_measured_amount_is_no_claim(text):
    assert not claim_lines(text)


def test_share_of_a_named_kld_is_a_claim():
    assert claim_lines("Most of the error came from the port (about 80% of an int4 KLD was the engine gap).\n")


def test_tolerance_share_is_no_claim():
    assert not claim_lines("A rerun of the same command should land within 3% of this KLD mean.\n")
