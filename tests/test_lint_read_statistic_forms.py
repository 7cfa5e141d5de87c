"""D9 statistics as cards write them beyond the statistic words (kldcard.lint.read.statistic_forms): in
identifiers, as a PyTorch reduction, an order statistic or percentile before the KL term, a spread given as a
value; a sigma count (a difference's significance) and a "±" value called "stderr" are no statistic of the KLD."""

from __future__ import annotations

import pytest
from helpers_reading import reading

CLAIM = "The Q4_K_M file reaches a KLD of 0.0231.\n\n"


@pytest.mark.parametrize(
    ("text", "statistic"),
    [
        ("The gate parses `kl_mean` from the JSON the scorer writes.\n", "mean"),
        ("The script greps \"mean_kl_per_token\" from each run's log.\n", "mean"),
        ("Our check asserts max_kl_div below the limit.\n", "max"),
        ("The KL is computed with F.kl_div, reduction batchmean, over the prompts.\n", "mean"),
        ("Tails differ: the 99.9% KL divergence grows with fewer bits.\n", "p99.9"),
        ("The tail: 99th-percentile KLD 0.41 on the same text.\n", "p99"),
        ("The worst-case KLD over the run is 1.2 nats.\n", "max"),
        ("The per-token KLD is an expected value over positions.\n", "mean"),
    ],
)
def test_statistic_forms_are_read(text, statistic):
    d = reading(CLAIM + text, 9)
    assert d.status != "missing" and d.evidence, d
    if statistic is not None:
        assert d.value.get("statistic") == statistic, d


@pytest.mark.parametrize(
    "text",
    [
        "| lever | Δ KLD | σd | sigmas |\n|---|---|---|---|\n| a | 0.012 | 0.004 | 3.0 |\n",
        "The Q4 file trails by KLD 0.0291, σd ≈ 0.006, about five sigmas.\n",
        CLAIM + "All figures: ± are printed stderr.\n",
    ],
)
def test_a_spread_of_the_kld_is_its_uncertainty(text):
    d = reading(text, 9)
    assert d.status != "missing" and d.evidence, d


@pytest.mark.parametrize(
    "text",
    [
        "The Q4 file trails on KLD 0.0291 against 0.0312, 7.8σ paired.\n",  # a significance, not a spread
        "The Q4 file has KLD 0.0016 with PPL inside the ±0.036 stderr.\n",  # a PPL's value
        "The Q4 file has KLD 0.0291 (+19% KLD against Q5).\n",  # a signed change, not a percentile
    ],
)
def test_significances_and_other_values_are_no_statistic(text):
    d = reading(text, 9)
    assert d.status == "missing", d


@pytest.mark.parametrize(
    ("table", "statistic"),
    [
        ("| Quant | KLD | p99 |\n|---|---|---|\n| Q4 | 0.031 | 0.41 |\n", "p99"),  # a percentile column after the KLD column
        ("| Quant | KLD | 99.9% |\n|---|---|---|\n| Q4 | 0.031 | 0.9 |\n", "p99.9"),
        ("| Quant | KLD | top-1 |\n|---|---|---|\n| Q4 | 0.031 | 96.3% |\n", None),  # an agreement value, no percentile
        ("| Quant | pass@1 | median | KLD |\n|---|---|---|---|\n| a | 0.5 | 12 s | 0.0100 |\n", None),  # before the KLD: another metric's
    ],
)
def test_a_statistic_column_after_the_kl_column(table, statistic):
    d = reading(table, 9)
    assert d.value.get("statistic") == statistic and (d.status == "missing") == (statistic is None), d

