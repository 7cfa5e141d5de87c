"""Which texts carry a KLD claim (issue 28, claim detection): metric keys printed beside a value
(kldcard.lint.read.metric_keys), tables whose KL term is in their heading or caption, approximate table
values, and KL terms of a measurement in a sentence that names a training or pruning step elsewhere.
Each case in the project's own words; the hard negatives beside it must stay silent."""

from __future__ import annotations

import pytest

from kldcard.card.document import parse_card
from kldcard.lint.claims import find_claims
from kldcard.lint.markdown import scan


def claim_numbers(text: str) -> list[list[str]]:
    card = parse_card(text.encode(), "README.md")
    return [[n.text for n in c.numbers] for c in find_claims(scan(card.body, card.body_line))]


def claim_lines(text: str) -> list[int]:
    card = parse_card(text.encode(), "README.md")
    doc = scan(card.body, card.body_line)
    return [doc.position(c.offset)[0] for c in find_claims(doc)]


@pytest.mark.parametrize(
    ("text", "numbers"),
    [
        ("Run summary\nkld_llama_q4 0.231 (one run)\nkld_llama_q8 0.004 (one run)\n", [["0.231"], ["0.004"]]),
        ("Sweep so far:\n  plain quant        top_p 80.1%  med_KLD 0.081\n", [["0.081"]]),
        ("The gate stays green: kld_mean 0.0121 / agree 0.97.\n", [["0.0121"]]),
        ("```\nmetric   abs        rel\nkl_div   0.20311    0.20311\ntop_1    0          0\n```\n", [["0.20311"]]),
    ],
)
def test_metric_keys_with_a_value_are_claims(text, numbers):
    assert claim_numbers(text) == numbers


@pytest.mark.parametrize(
    "text",
    [
        "Train with `--max_kl_div=2e-3` so the check fails early.\n",  # an option: a threshold the tool is given
        "config:\n  kld_weight: 0.1\n  kl_loss_scale: 0.5\n  target_kld: 0.02\n",  # training settings
        "Results are written to kld_results.csv 0.5 MB per run.\n",  # a file name
        "loss = F.kl_div(p, q, 0.5)\n",  # a call
    ],
)
def test_metric_key_lookalikes_are_not_claims(text):
    assert claim_numbers(text) == []
