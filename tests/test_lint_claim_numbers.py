"""Which numbers of a claim are KLD numbers (kldcard.lint.read.claim_numbers): a size, speed, percentage of
another metric or a bare "± x" beside a KLD value is not one (R1-R6)."""

from __future__ import annotations

import pytest

from kldcard.card.document import parse_card
from kldcard.lint.claims import find_claims
from kldcard.lint.markdown import scan
from kldcard.lint.read import claim_numbers


def numbers(text: str) -> list[str]:
    card = parse_card(text.encode(), "README.md")
    return [n.text for c in find_claims(scan(card.body, card.body_line)) for n in c.numbers]


@pytest.mark.parametrize(
    ("text", "kept"),
    [
        ("The small file (12.4 GB, KL 0.81) trails the large one.\n", ["0.81"]),  # a size beside the KL
        ("Mean KLD 0.0596 at 15.27 GiB for the mixed recipe.\n", ["0.0596"]),
        ("A 30% cache saving at 0.0038 mean KLD, not bad.\n", ["0.0038"]),  # the KL term follows the number
        ("A KL gap of about 0.001 is above the ±0.0005 noise band.\n", ["0.001"]),  # a bare ± x
        ("| Quant | KLD |\n|---|---|\n| Q4 | 0.0042 (97.1 %) |\n| Q3 | 0.0752 (+5.5 %) |\n", ["0.0042", "0.0752", "5.5"]),
        # another metric named after the number: its value, not the KL's (the session-16 review's "KLD vs BF16 on
        # HellaSwag 0.81 accuracy"); a KL term after the number keeps it, whatever follows
        ("Q4_K_M: KLD vs BF16 0.0041, HellaSwag 0.81 accuracy.\n", ["0.0041"]),
        ("The Q4_K_M file is scored by KLD vs BF16 and on HellaSwag 0.81 accuracy.\n", []),
        ("The Q4 file keeps KL 0.012 at 6.21 PPL.\n", ["0.012"]),
        ("KL frente a BF16 de 0,012 y 0,81 de precisión.\n", ["0,012"]),
        ("Q4: 0.0038 mean KLD, accuracy unchanged.\n", ["0.0038"]),
        # ... but a metric name with a value of its own labels that value: a row of metric, value pairs (review)
        ("Q4_K_M: KLD 0.0123 PPL 6.2104 top-1 93.1%\n", ["0.0123"]),
        ("q4_k_m  kld 0.0123 acc 0.812 ppl 6.21\n", ["0.0123"]),
        ("Q4 的 KL 散度 0.012 困惑度 6.21\n", ["0.012"]),
    ],
)
def test_only_kld_numbers_are_kept(text, kept):
    assert numbers(text) == kept


def test_a_flattened_table_keeps_the_column_under_its_kld_word():
    text = (
        "Quant Size PPL KLD\n"
        "Q5_K_M 520.08 GiB (5.93 BPW) 2.732420 ± 0.015015 0.020247 ± 0.000173\n"
        "Q4_K_M 432.80 GiB (4.93 BPW) 2.754593 ± 0.015142 0.037406 ± 0.000308\n"
    )
    assert numbers(text) == ["0.020247", "0.000173", "0.037406", "0.000308"]


def test_a_fixed_width_table_is_read_by_position():
    text = (
        "```\n"
        "format  bits/w     PPL     KLD  top %   tok/s\n"
        "q8_0      8.54  13.991  0.0012   96.7   200.4\n"
        "q4_k      4.89  14.268  0.0210   91.1   223.3\n"
        "```\n"
    )
    assert numbers(text) == ["0.0012", "0.0210"]


def test_a_number_after_another_metric_s_label_is_not_kld():
    cell = "KLD 0.0027 nats (95% CI 0.0019-0.0038), PPL 7.6585"
    assert claim_numbers.is_kld(cell, cell.index("0.0027"), 6, cell=True)
    assert not claim_numbers.is_kld(cell, cell.index("7.6585"), 6, cell=True)
    line = "top-1 93.2% · 0.031 KLD"  # the KL term right after the number keeps it
    assert claim_numbers.is_kld(line, line.index("0.031"), 5)


def test_a_fixed_width_table_with_counts_beside_the_kld_column_is_a_claim():
    # the other columns hold no decimal ("40/40"): the row matches the header's columns, a decimal under KLD
    text = "Cache ladder on the test prompts:\n\n  cache    mean KLD   top-1\n  q8       0.00051    40/40\n  q4       0.00210    39/40\n"
    assert numbers(text) == ["0.00051", "0.00210"]


def test_a_kl_column_in_thousandths_holds_whole_numbers():
    text = "| file | mean KL (millinats per token) | note |\n|---|---|---|\n| small | **612** | ok |\n| large | 380 | ok |\n"
    assert numbers(text) == ["612", "380"]
    # without a thousandths unit, a whole number under KL is not read
    assert numbers("| file | mean KL | note |\n|---|---|---|\n| small | 612 | ok |\n") == []
