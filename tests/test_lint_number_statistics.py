"""Which statistic each KLD number of a claim is, where one line names several and alternates them with its
numbers ("mean KLD 3.6e-5, max 2.1e-3"): each number takes the one statistic written between the number before
it and itself, and the claim's joined label ("max+mean") stands only where that stretch names none or several.
Forms from the real corpus: moeserv's repack gap, the gfx1151 Q8_0 line, the 48-case check of exl3_bf16, a
llama-perplexity block flattened to one line."""

from __future__ import annotations

from kldcard.card.document import parse_card
from kldcard.lint.reader import read_card


def stats(text: str) -> list[tuple[str, str | None]]:
    readings = read_card(parse_card(text.encode(), "README.md"))
    return [(n.text, n.statistic) for r in readings for n in r.numbers]


def test_alternating_statistics_each_label_their_own_number():
    assert stats("The repack path multiplies MXFP4 experts with another GEMM: mean KLD 3.6e-5, max 2.1e-3, vs BF16.\n") == [
        ("3.6e-5", "mean"), ("2.1e-3", "max")]
    assert stats("Against BF16 at those positions: mean KL 5.2e-5, median 1.9e-5, p99 4.7e-4, max 3.3e-3 nats.\n") == [
        ("5.2e-5", "mean"), ("1.9e-5", "median"), ("4.7e-4", "p99"), ("3.3e-3", "max")]


def test_a_flattened_statistics_block_keeps_each_line_label():
    line = "Mean KLD: 0.145884 ± 0.001043 Maximum KLD: 12.467786 99.9% KLD: 4.535020 Median KLD: 0.018431\n"
    got = dict(stats(line))
    assert (got["0.145884"], got["12.467786"], got["4.535020"], got["0.018431"]) == ("mean", "max", "p99.9", "median")


def test_one_statistic_for_all_numbers_is_left_as_the_label_says():
    assert stats("Mean KLD vs BF16: Q4_K_M 0.0228, Q5_K_M 0.0121.\n") == [("0.0228", "mean"), ("0.0121", "mean")]


# A percentage is a percentile only as a label (kldcard.lint.read.values.statistic): written before the KL it ranks,
# before a colon, alone in a cell, after a percentile word, or as a tail right after the KL term. Beside any other
# word it is a share, a change or a level, never the statistic of the number next to it.
import pytest  # noqa: E402

from kldcard.lint.read.values import statistic  # noqa: E402


@pytest.mark.parametrize(
    ("label", "expected"),
    [
        ("99.9%   KLD:", "p99.9"),  # llama-perplexity's printed label
        ("99,9 % KLD", "p99.9"),  # a decimal comma
        ("| 99% |", "p99"),  # a header cell
        ("99%:", "p99"),
        ("KLD 99.9%", "p99.9"),
        ("KL-99.9%", "p99.9"),
        ("KLD al Percentile 99.9%", "p99.9"),
        ("99% of tokens", "p99"),
        ("99.9% 分位 KLD", "p99.9"),
        ("p99", "p99"),
        ("95th percentile", "p95"),
        ("KLD CVaR 1%", "cvar"),  # a worst tail's mean is neither a percentile nor the mean
        ("Worst-5% token KL", "cvar"),
    ],
)
def test_a_percentage_written_as_a_label_is_a_percentile(label, expected):
    assert statistic(label) == expected


@pytest.mark.parametrize(
    "label",
    [
        "(34.4% cache",  # a share
        "top-1 agreement 92.9%",
        "KLD 42% lower",  # a change
        "95% CI",  # a level
        "95% 置信区间",
        "el 92,9% de esa masa",
        "Same top p: 94.762 ± 0.059 %",
        "0.000% | ",  # a percentage that is a value
    ],
)
def test_a_percentage_beside_other_words_is_no_percentile(label):
    assert statistic(label) is None


def test_a_share_in_the_claim_sentence_gives_no_percentile_to_its_numbers():
    # the claim's label used to take "34.4%" as p34.4 and every number "p34.4+mean"
    got = stats("Q4 KV against f16 (34.4% cache, mean KLD 0.0032 vs BF16).\n")
    assert got == [("0.0032", "mean")]
