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
