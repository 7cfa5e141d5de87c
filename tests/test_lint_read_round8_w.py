"""Claim finding added in issue 28's eighth tuning round (tune-w): one number grammar for values joined by slashes
(read.numbers.SLASH_LIST), a KL term hyphenated to its reference ("KLD-to-f16"), measured zeros written "KL = 0",
a statistic word in a relative change ("40% lower max KLD"), numbered thresholds beside a measured value, a KL
column of percentages, count nouns and names with digits beside a number. Each case in the project's own words,
a negative next to it."""

from __future__ import annotations

import pytest

from kldcard.card.document import parse_card
from kldcard.lint.claims import find_claims
from kldcard.lint.markdown import scan
from kldcard.lint.read.numbers import KLD_VALUE, SLASH_LIST
from kldcard.lint.read.slash_pairs import paired_label


def claims(text: str) -> list[tuple[int, list[str]]]:
    card = parse_card(text.encode(), "README.md")
    doc = scan(card.body, card.body_line)
    return [(doc.position(c.offset)[0], [n.text for n in c.numbers]) for c in find_claims(doc)]


@pytest.mark.parametrize(
    ("text", "values"),
    [
        ("mean KLD 0.212/0.198 against", ["0.212", "0.198"]),
        ("KL went 0.0031 / 0.0052 / 0.0030 over three steps", ["0.0031", "0.0052", "0.0030"]),
        ("KL 散度为 0.05/0.09，", ["0.05", "0.09"]),
        ("max/mean KL 0.004121/0.000512", ["0.004121", "0.000512"]),
    ],
)
def test_slash_lists_are_one_grammar(text, values):
    assert [m.group(0) for m in KLD_VALUE.finditer(text)] == values
    assert len(list(SLASH_LIST.finditer(text))) == 1


@pytest.mark.parametrize("text", ["passed 3/4 checks", "on 2026/10/12", "ratio 1/2", "see runs/0.5/log", "no KLD for 6.0/7.0bpw"])
def test_fractions_dates_paths_and_sizes_are_no_slash_list(text):
    assert not KLD_VALUE.search(text) and not SLASH_LIST.search(text)


def test_slash_pairs_reads_the_same_grammar():
    line = "KL median / p99 / max 0.0061 / 0.52 / 9.87"
    assert [paired_label(line, line.index(v)) for v in ("0.0061", "0.52", "9.87")] == ["median", "p99", "max"]
    assert paired_label("KL median / p99 0.0061 / 0.52 / 9.87", 16) is None  # two labels, three values


@pytest.mark.parametrize(
    ("text", "found"),
    [
        ("Both variants miss the gate: mean KLD-to-bf16 0.212/0.198 against a baseline of 0.141.\n",
         [(1, ["0.212", "0.198", "0.141"])]),
        ("In our run the rollout KL goes from 0.0031 / 0.0052 to 0.0000 / 0.0000 over two steps.\n",
         [(1, ["0.0031", "0.0052", "0.0000", "0.0000"])]),
        ("- 正常样本的 KL 散度只有 0.05/0.09，好于基线\n", [(1, ["0.05", "0.09"])]),
    ],
)
def test_slash_lists_in_prose_are_claims(text, found):
    assert claims(text) == found


def test_slashed_percentages_and_ratios_are_no_claim():
    assert claims("The KL check passed 3/4 runs; PPL moved +1.2%/+0.9%.\n") == []


@pytest.mark.parametrize(
    "text",
    [
        "- The reload from the consolidated checkpoint stays exact at KL=0, as expected.\n",
        "- Reload is bit-exact (`max KL = 0`).\n",
    ],
)
def test_measured_zeros_written_with_equals_are_claims(text):
    assert [line for line, _ in claims(text)] == [1]


@pytest.mark.parametrize(
    "text",
    [
        "By definition KL = 0 when p = q.\n",
        "```\nkl = 0\n```\n",
        "We require KL = 0.5 < 1 here? no: the bound is KL < 0.\n",
    ],
)
def test_definitions_code_and_bounds_with_equals_zero_are_no_zero_claim(text):
    assert all(numbers for _, numbers in claims(text))  # nothing found as a bare zero


def test_a_statistic_word_in_a_relative_change():
    assert [line for line, _ in claims("The new upload has ~35% lower max KL-divergence than the old one.\n")] == [1]
    assert claims("The new upload is ~35% lower in max memory than the old one (KL not measured).\n") == []


def test_numbered_thresholds_beside_a_measured_value():
    text = "The TP=2 run yields ~2.4e-3 KL divergence, above the old 9e-4 threshold.\n"
    assert claims(text) == [(1, ["2.4e-3"])]
    text = "- Reload fails with `max per-token KL = 8.2e-03 > threshold 1.0e-03`.\n"
    assert claims(text) == [(1, ["8.2e-03"])]
    assert claims("Set the KL threshold to 5e-3 before training.\n") == []


def test_a_kl_column_of_percentages_is_a_relative_claim():
    table = "| model | PPL | KL |\n|---|---|---|\n| A | 12.1 | +6.1% |\n| B | 9.7 | −1.9% |\n"
    assert claims(table) == [(1, [])]
    assert claims("| model | PPL | Notes |\n|---|---|---|\n| A | 12.1 | +6.1% KL budget |\n") == []


def test_a_count_noun_makes_a_grouped_number_a_count():
    text = "Se midió la KLD frente a BF16 sobre 21.455 posiciones; no se dan los valores.\n"
    assert claims(text) == []
    assert claims("La KLD frente a BF16 es 0,0213 sobre 21.455 posiciones.\n") == [(1, ["0,0213"])]


def test_a_digit_inside_a_name_does_not_end_a_label():
    text = '| B7 | The fork\'s own check: "top-10 logprob KL vs bf16-acc 0.0021 nats" | REG | ok |\n'
    table = "| # | Fact | Source | Mark |\n|---|---|---|---|\n" + text
    assert [numbers for _, numbers in claims(table)] == [["0.0021"]]
    assert claims(table.replace("KL vs bf16-acc", "accuracy vs bf16-acc")) == []


def test_a_bare_zero_in_a_list_of_metrics_is_a_measured_zero():
    assert [line for line, _ in claims("The no-op arm matches the reference (agree 0.9998, KL 0), as it should.\n")] == [1]
    assert claims("The scale runs from KL 0 to 1 in this plot.\n") == []


def test_an_aside_about_another_metric_does_not_detach_the_number():
    text = "El KLD medio frente a BF16 (wikitext-2; PPL de BF16 = 7,912) es de 0,064.\n"
    assert claims(text) == [(1, ["0,064"])]
    text = "It costs 21% in KL divergence (0.0051 vs 0.0042 nats/token) and\n1.20 points of top-1 agreement.\n"
    assert [line for line, _ in claims(text)] == [1]  # the values in the aside are the term's own: 1.20 is not KL


def test_a_setting_written_with_equals_zero_is_no_claim():
    assert claims("Set kl = 0 to switch the term off.\n") == []
    assert claims("To test, set KL = 0 in the config.\n") == []
