"""D9 statistics as cards write them beyond evidence_patterns.D9 and :mod:`kldcard.lint.read.aggregation`:

- a statistic in an identifier, as tools print and scripts read it: "kld_mean", "mean_kl_per_token",
  "max_kl_div", "kl_p99" (:data:`IDENTIFIER`);
- PyTorch's reduction by name: "batchmean", ``reduction="mean"``, and the expectation in words ("expected value
  over positions", "in expectation") (:data:`REDUCTION`);
- an order statistic or a percentile before the KL term: "max KL divergence", "worst-case KLD",
  "99.9% KL divergence", "99th percentile KLD" (:data:`BEFORE_KL`); not a signed change ("+19% KLD");
- an uncertainty by its letters: "σd ≈ 0.006", a "σd" column, in a sentence with a KL term (:data:`SIGMA`;
  a count of sigmas, "7.8σ", is a difference's significance); "± are printed stderr" (:data:`STDERR`, a "±"
  said to be a standard error; "stderr" alone is a stream, "±0.036 stderr" a value).

The statistic's name is read by values.statistic (the reading's ``statistic``).
"""

from __future__ import annotations

import re

I = re.IGNORECASE

STAT = r"(?:mean|avg|average|median|max|min|p\d{2}(?:\.\d+)?)"
IDENTIFIER = re.compile(
    r"(?<![A-Za-z])" + STAT + r"_(?:kl|kld)(?:_\w+)?(?![A-Za-z])|(?<![A-Za-z])(?:kl|kld)(?:_div)?_" + STAT + r"(?![A-Za-z])", I
)
REDUCTION = re.compile(r"\bbatchmean\b|\breduction\s*=\s*['\"](?:mean|batchmean)['\"]|\bexpected value\b|\bin expectation\b", I)
BEFORE_KL = re.compile(
    r"(?<![^\W\d_])(?:max|maximum|min|minimum|worst[- ]case|peak)\s+(?:per[- ]\w+\s+)?(?:KLD|KL\b|KL[- ]div)|"
    r"(?<![+\-−±\d.,\w])(?:90|95|99|99\.9+)(?:\s*%|th\s+percentile|\s*-?th)\s+(?:KLD|KL\b|KL[- ]div)",
    I,
)
# a spread given as a value or a column ("σd ≈ 0.006", "| σd |"); a count of sigmas alone ("7.8σ paired") is the
# significance of a difference, not an uncertainty model of the numbers (real_cards/dev2 vramfit_readme_acceptance_test)
SIGMA = re.compile(r"σ\w{0,2}\s*[≈=~:]\s*\d|\|\s*σ\w{0,2}\s*(?=\|)", I)
# the "±" said to be a standard error ("± are printed stderr", "± = std. error"); not "±0.036 stderr" (a value)
STDERR = re.compile(
    r"±\s*(?:(?:are|is|values?|means?|denotes?|shows?|gives?)\b|[=:])[^\n±\d]{0,30}\b(?:stderr|std\.?\s*err(?:or)?|standard\s+errors?)\b", I
)
PATTERNS = [IDENTIFIER, REDUCTION, BEFORE_KL, SIGMA, STDERR]

KL = re.compile(r"(?<![A-Za-z_])(?:KLD|KL)(?![A-Za-z_])|KL[- ]?div|divergen|散度", I)


def vetoed(sentence: str, m: re.Match[str]) -> bool:
    """A sigma in a sentence without a KL term is another metric's (a PPL's, a benchmark's)."""
    return m.re is SIGMA and not KL.search(sentence)
