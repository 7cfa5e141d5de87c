"""KL numbers that are not measurements (issue 28, claim detection; R4 of tests/data/real_cards/labels.yaml): limits,
tolerances and acceptance widths a check is given ("relaxed limits: mean KL 0.025", "受け入れ幅は現行比 +0.0005"),
"typical" ranges a tool warns of ("KL vs BF16 oracle (typical): 0.001 - 0.05"), and the KL of a noise or weight
distribution fitted to a textbook distribution ("噪声近似均匀分布（KL散度为0.0009）"), which compares no model's output.

A bound is written as a label: the word, then a colon, "=" or (in Japanese and Chinese) the topic particle; a
measurement "against a 0.03 limit" is not one (read.claim_terms.GATE). Readings of how such texts are written
(a label grammar, in each language), not phrases of one card. Samples in tests/test_lint_stated_bounds.py."""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

# The words of a bound, one list for the labels here and the list titles of read.bound_lists: the English nouns (here a
# label only with a colon or "=" after them), and the Japanese, Chinese, Korean and Spanish words for an acceptance
# width, a tolerance and a threshold (a label by themselves: a number after them is the bound).
BOUND_WORDS = r"limits?|tolerances?|acceptance\s+(?:width|band|range|criteri(?:on|a)|gate)"
BOUND_WORDS_OTHER_LANGUAGES = r"受け入れ幅|許容幅|許容範囲|許容値|閾値|しきい値|阈值|容差|允许范围|umbral|임계값|허용\s*(?:범위|폭|오차)"
# a label of a bound: "limits:", "tolerance =", "acceptance band:", a bare "acceptance:" (a label's word only: a title
# "Acceptance tests:" heads results), "(typical):", "typical range"; the other languages' words
BOUND_LABEL = re.compile(
    r"\b(?:" + BOUND_WORDS + r"|acceptance)\s*[:=]"
    r"|\(\s*typical\s*\)|\btypical\s+(?:range|values?)\b"
    r"|" + BOUND_WORDS_OTHER_LANGUAGES,
    re.IGNORECASE,
)
# a textbook distribution a noise or a weight histogram is fitted to: its KL is the fit's, not a model output's; named
# as a distribution ("均匀分布", holdout8/c qtdog; "相对均匀分布的 KL", holdout14/c kernel_equivalence) or written as the
# second argument of the divergence ("KL(attn||uniform)", holdout16/c de_lstm: attention weights against uniform),
# the bars as typed, as a symbol or escaped in a Markdown table cell
FITTED_DISTRIBUTION = re.compile(
    r"\b(?:uniform|gaussian|normal|laplace|laplacian)\s+distribution\b|均匀分布|高斯分布|正态分布|拉普拉斯分布|一様分布|正規分布"
    r"|(?:\|\||‖|∥|\\\|\\\|)\s{0,3}(?:uniform|gaussian|laplace|laplacian)\s{0,3}\)",
    re.IGNORECASE,
)


def bound_start(text: str) -> int | None:
    """Where the numbers of ``text`` (a sentence or a table cell) stop being measurements: 0 when it names a fitted
    distribution (its KL is the fit's), the end of its first bound label ("limits:", "(typical)"), or None. Read once
    per text, so a long sentence of many numbers stays linear."""
    if FITTED_DISTRIBUTION.search(text):
        return 0
    m = BOUND_LABEL.search(text)
    return None if m is None else m.end()


def fitted(text: str) -> bool:
    """Whether ``text`` (a table's header cell) names a KL against a textbook distribution: its column is no model's."""
    return FITTED_DISTRIBUTION.search(text) is not None


def not_measured(text: str, pos: int) -> bool:
    """Whether the number at ``pos`` of a short ``text`` (a table cell) is a bound, a typical range or a fit's KL."""
    start = bound_start(text)
    return start is not None and pos >= start
