"""Round 7 (tune-t) of issue 28's claim detection: KL numbers that are no measurement (limits, acceptance widths,
typical ranges, fitted distributions, planned tables, section numbers, licence versions, PPO's approx_kl) and
measurements that were missed (exact zeros, relative changes written after the term).
Snippets in our own words."""

from __future__ import annotations

import pytest
from helpers_reading import claim_lines


@pytest.mark.parametrize(
    "text",
    [
        "The parity check uses the loose limits: mean KL 0.03, p99 KL 0.2, cosine 0.98.\n",  # a bound's label
        "Acceptance band: mean KLD 0.004 over the default build.\n",
        '    log("  KL vs FP16 reference (typical): 0.002 - 0.04");\n    log("  int8 KV: extra ~0.004 KL on long prompts");\n',
        "| 指標 | 定義 | 備考 |\n|---|---|---|\n| KLD | 近似 KLD | 許容幅は現行比 +0.001 |\n",  # Japanese acceptance width
        "量化噪声近似服从均匀分布（KL散度为0.0012）。\n",  # a fitted distribution, not a model's output
        "The pruning noise follows a Gaussian distribution closely (KL 0.003 to the fit).\n",
        "| Method | PPL | KLD |\n|---|---:|---:|\n| BF16 reference | — | 0.0 |\n| Q4 | — | — |\n| Q3 | TBD | TBD |\n",  # to be filled
        "### 4.3 `kld_vs_bf16` — KL divergence against the BF16 baseline\n\nNot built yet.\n",  # a section number
        "Ship a KLD-checked Korean build first (Apache 2.0, small model).\n",  # a licence's version
        "| step | `train/approx_kl` | reward |\n|---|---|---|\n| 1M | 0.012 | 3.1 |\n",  # PPO's step size
        "The largest `approx_kl` of the run: 0.0412 at step 9M.\n",
    ],
)
def test_bounds_plans_and_versions_are_not_claims(text):
    assert claim_lines(text) == []


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("After the reload `rollout_corr/k3_kl == 0`, not within a tolerance.\n", [1]),  # a comparison an check asserts
        ('O motor chega a "divergência KL exatamente 0" entre treino e inferência.\n', [1]),  # in words
        ("Since the fix the KL is exactly zero on every prompt.\n", [1]),
        ("- Routing replay: KL divergence reduced ~3× on the long prompts\n", [1]),  # the participle after the term
        ("Setting Value\nGroup size 64\nRelative KL reduction ≈25 %\n", [3]),  # the noun of a change after the term
    ],
)
def test_exact_zeros_and_relative_changes_are_claims(text, lines):
    assert claim_lines(text) == lines


@pytest.mark.parametrize(
    "text",
    [
        "Set kl = 0 to switch the term off.\n",  # an assignment
        "The KL penalty was reduced ~2× after warm-up.\n",  # a training setting
        "| Method | KLD |\n|---|---:|\n| BF16 | 0.0 |\n| Q8 | 0.0 |\n",  # measured zeros, no placeholder
    ],
)
def test_assignments_and_settings_stay_out_and_measured_zeros_stay_in(text):
    lines = claim_lines(text)
    assert lines == ([1] if text.startswith("| Method") else [])
