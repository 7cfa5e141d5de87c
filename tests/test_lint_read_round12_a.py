"""Issue 28's twelfth tuning round (tune12-a): number grammar and claim finding. A power of ten written alone ("on
the order of 10^-3", "~10⁻³"), its mantissa-and-power forms with a caret, a value in a parenthesis that qualifies its
clause, a statistic glued to the term in camel case ("medKLD=1.496"), and LaTeX's comparison commands before a bound.
Each case in the project's own words, with a negative next to it."""

from __future__ import annotations

import pytest
from helpers_reading import claim_lines

from kldcard.lint.read.numbers import KLD_VALUE, decimals_half_ulp, parse_number


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
    "text",
    [
        # an accumulator declared the way Rust, JavaScript and C declare it: code that computes KL
        "```rust\nfn kl(p: &[f32], q: &[f32]) -> f32 {\n    let mut kl = 0.0;\n    kl\n}\n```\n",
        "```c\n    float kl_sum = 0.0f;\n```\n",
        # a timing beside a KL line of a log
        'CAPTURED = (\n    "0.00.512.101 I kl_divergence: 0.21 seconds per pass - ETA 0.40 minutes\\n"\n)\n',
        "```\nkl_divergence: 0.21 seconds per pass - ETA 0.40 minutes\n```\n",
        # a value that ends a log line is not the next line's KL statistic
        "```\nMean PPL(Q)-PPL(base)   :  -0.000120 ±   0.002100\n```\n",
    ],
)
def test_code_and_logs_not_claims(text):
    assert claim_lines(text) == []


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        # the statistic on its own line is still read, and a value glued before the term on one line
        ("```\nMean PPL(Q)-PPL(base)   :  -0.000120 ±   0.002100\nMean    KLD:   0.013000 ±   0.000800\n```\n", [3]),
        ("We got **0.0021** mean KLD on the chat set.\n", [1]),
        ("```\nkl_divergence: 0.0123 after 2 chunks\n```\n", [2]),
    ],
)
def test_code_and_logs_claims(text, lines):
    assert claim_lines(text) == lines


@pytest.mark.parametrize(
    "text",
    [
        # a training run's coefficient, penalty or reward named in the card's language: the KL value is the run's setting
        "Hệ số KL là yếu tố chính: KL = 0,05 cho điểm 0,412, còn KL = 0 đạt 0,598.\n",
        "加上 KL 惩罚以后，KL 稳定在 0.12 左右，策略不再崩溃。\n",
        "Con el coeficiente KL en 0,2 la recompensa sube a 0,71.\n",
    ],
)
def test_training_words_not_claims(text):
    assert claim_lines(text) == []


@pytest.mark.parametrize(
    "text",
    [
        # a correlation coefficient beside a measured KLD is no training setting
        "量化后平均 KLD 为 0.0213，与 PPL 的相关系数很高。\n",
        "La KLD media fue 0,0213 y el coeficiente de correlación con la PPL es alto.\n",
    ],
)
def test_training_words_claims(text):
    assert claim_lines(text) == [1]


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
