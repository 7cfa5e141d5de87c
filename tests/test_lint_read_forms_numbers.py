"""KLD values as cards write them, and the claims they make (kldcard.lint.read.numbers, .slash_pairs,
kldcard.lint.claims): one number grammar for values joined by slashes (read.numbers.SLASH_LIST) and for powers of
ten written alone or with a mantissa; measured zeros ("KL = 0", "KL 0" in a list of metrics); a statistic word in a
relative change, numbered thresholds beside a measured value, a KL column of percentages, a count noun beside a
grouped number, a digit inside a name, an aside about another metric, a statistic glued to the term in camel case,
the plural of the term, a sentence wrapped after its KL term. Each case in the project's own words, a negative next
to it: fractions, dates, paths, definitions, settings, LaTeX bounds, a positive power of ten."""

from __future__ import annotations

import pytest
from helpers_reading import claim_lines, claims

from kldcard.lint.read.numbers import KLD_VALUE, SLASH_LIST, decimals_half_ulp, parse_number
from kldcard.lint.read.slash_pairs import paired_label


# ---- values joined by slashes ------------------------------------------------------------------------------------
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


# ---- measured zeros, changes, thresholds and counts beside a value -----------------------------------------------
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


# ---- powers of ten, camel case, the plural term, a wrapped clause ------------------------------------------------
@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("10^-3", 1e-3),
        ("10⁻⁴", 1e-4),
        ("10**-5", 1e-5),
        ("10^{-3}", 1e-3),
        ("1×10^-4", 1e-4),
        ("1.2·10⁻³", 1.2e-3),
        ("1,2·10⁻³", 1.2e-3),
        ("1.2 × 10^-3", 1.2e-3),
        ("1e-3", 1e-3),
        # ASCII multiplication signs before a power of ten, a minus sign (U+2212) in the exponent or before the value
        ("1.2x10^-3", 1.2e-3),
        ("5 * 10^-4", 5e-4),
        ("5x10⁻⁴", 5e-4),
        ("1.2e−3", 1.2e-3),
        ("−0.003", -0.003),
    ],
)
def test_powers_of_ten(text, value):
    assert [m.group(0) for m in KLD_VALUE.finditer(f"KL {text} nats")] == [text]
    assert parse_number(text)[0] == pytest.approx(value)


def test_bare_power_rounding():
    assert decimals_half_ulp("10^-3") == pytest.approx(5e-4)


@pytest.mark.parametrize("text", ["10^6 tokens", "2^-3", "version 10^-3x", "105", "10", "2.3x lower", "a 0.1x10 grid"])
def test_not_a_divergence_power(text):
    assert [m.group(0) for m in KLD_VALUE.finditer(text)] == []
    if text.isdigit():
        assert parse_number(text)[0] == int(text)  # a plain integer is no power of ten


@pytest.mark.parametrize(
    "text",
    [
        # an order of magnitude, in a parenthesis that qualifies the clause
        "With the 7B model the KL divergences against the fp16 outputs stay very small (on the order of 10^-3).\n",
        "Per step the KL is mostly ~10⁻³ per position, as the diagnostic shows.\n",
        "The mean KLD came to 1×10^-4 against BF16.\n",
        # a statistic glued to the term in camel case, in a log line and in prose
        'log("  plain Q2_K imatrix                : medKLD=1.512 top_p=46.10% PPL=1980.4")\n',
        "The mixed recipe beat the plain one (medKLD 1.61 vs 1.80, PPL 700 vs 1300).\n",
    ],
)
def test_claims(text):
    assert claim_lines(text) == [1]


@pytest.mark.parametrize(
    "text",
    [
        # a bound in LaTeX: a gate, not a value
        "- **Logit check**: compare against the golden logits (KL divergence $\\le 10^{-3}$).\n",
        "The check passes when the KL divergence is $\\leq 0.01$ on every prompt.\n",
        # a positive power is a count
        "We ran the KL comparison over 10^6 tokens of chat text.\n",
        # a parenthesis with its own aside number is no qualifier of the clause
        "Mean KL and the per-cell max come from the summary (averaged as in table 2.1). Next we turn to speed.\n",
        # a camel-case option's default is a setting
        'parser.add_argument("--maxKLD", default=0.05)\n',
    ],
)
def test_not_claims(text):
    assert claim_lines(text) == []


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        # the plural of the term names the same measured values
        ("Our fused-kernel KLs sit around 1e-8 against the reference.\n", [1]),
        ("KLDs of the three q4 files: 0.0311, 0.0297, 0.0305.\n", [1]),
        # a package name, and KLs in a training loss, are no claims
        ("We pinned the kls package at 0.5.1.\n", []),
        ("The per-token KLs are summed into the loss with weight 0.1.\n", []),
    ],
)
def test_plural_term(text, lines):
    assert claim_lines(text) == lines


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        # a sentence wrapped after its KL term, its next line a clause ("..., so the floor"): prose, not a flattened table
        ("Running the same model twice along the whole path yields mean KL\n"
         "**3×10⁻⁶ nats** and top-1 agreement **1.0000**, so the noise floor\nsits far below every effect.\n", [2]),
        # a flattened table keeps its rows
        ("quant  mean KLD  top-1\nq8_0  0.00041  99.1%\nq4_k_m  0.0213  94.0%\n", [1]),
    ],
)
def test_wrapped_clause(text, lines):
    assert claim_lines(text) == lines
