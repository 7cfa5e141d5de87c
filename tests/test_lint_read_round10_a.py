"""Issue 28's tenth tuning round (tune10-a): when a card names llama-perplexity (its defaults are inferred only
then), relative KLD changes in the present tense and with a fraction or a factor, a share of a named KLD, a factor
with the reference between, and an exact zero reported with a verb of outcome. Each case in the project's own
words, with its negative next to it."""

from __future__ import annotations

import pytest
from helpers_reading import claim_lines

from kldcard.lint.tool_defaults import recognise


def _named(text: str) -> str | None:
    tool = recognise(text)
    return tool.name if tool else None


@pytest.mark.parametrize(
    "text",
    [
        # a column of a table, or a transposed row
        "| Quant | Mean KLD | Same top p |\n|---|---|---|\n| Q4_K_M | 0.031 | 93.1 % |\n",
        "| Metric | Value |\n|---|---|\n| Same top p       |    98.41 ± 0.08 %    |\n",
        "| Tier | PPL | KLD | RMS Δp |\n|---|---|---|---|\n| small | 9.1 | 0.08 | 4.2 % |\n",
        # the tool's "Label: value" layout, quoted in prose
        'The port matches upstream ("Mean KLD: 0.0412 ± 0.0031", "Same top p: 93.15 ± 0.30 %").\n',
        # beside another of its statistics with a value
        "- int4, 8B: mean KLD 0.0031, same-top-p 98.2 %, median KLD 0.0009.\n",
        # its name or command line
        "Scored with `llama-perplexity --kl-divergence` against the bf16 logits.\n",
        # its KL option is the measurement itself, whatever else the sentence says
        "Instead of our own script we now run `llama-perplexity --kl-divergence` on every build.\n",
    ],
)
def test_the_tool_named_or_printed(text):
    assert _named(text) == "llama-perplexity"


@pytest.mark.parametrize(
    "text",
    [
        # a label as words of prose
        "- The smaller embedding quant is borderline: KLD 0.071 (just above the bar). Same top p 86.1% (0.5pp below).\n",
        "## KL divergence + same top-p against BF16 (all chunks)\n",
        "| Claim | Verdict |\n|---|---|\n| int4 is lossless | No: about 4x the KLD, and 2x its RMS Δp. |\n",
        # a pattern a script greps for in the tool's output
        "kld=$(sed -n 's/^Mean    KLD: *\\([0-9.]*\\).*/\\1/p' <<<\"$out\")\ntop=$(sed -n 's/^Same top p: *\\([0-9.]*\\).*/\\1/p' <<<\"$out\")\n",
        # named as the former or removed setup
        "Until now our quants were scored against a reference built with `llama-perplexity`. The new harness runs our own forward.\n",
        "- **Cleanup:** gone are `old_eval` (llama-perplexity + a custom reader) and `convert_ref`.\n",
    ],
)
def test_a_label_in_prose_or_code_or_a_former_tool_names_no_tool(text):
    assert _named(text) is None


@pytest.mark.parametrize(
    "text",
    [
        "Against the bf16 weights, the mean KL divergence drops by 30% with the new scales.\n",
        "With GPTQ the next-token KLD falls by 20–25% on every prompt set.\n",
        "Most of the error came from the port (about 80% of an int4 KLD was the engine gap).\n",
        "On every model the new rounding cuts the KL divergence to the bf16 weights by a factor of 1/2 over RTN.\n",
        "The new rounding reduces the mean KLD against fp16 by 1/4 on all three sizes.\n",
        "The int4 down_proj is not lossless: it gives ~3.2x the KLD from BF16 of the Q8_0 file.\n",
        "The handoff run gives KL ~0.61x of the plain run's KL on the small model.\n",
        "After the refactor the KL divergence of the 7B is wrong: it always comes out as 0.\n",
        "Rounding the scales back to the fp16 grid causes a 3.1x KLD increase on the 8B.\n",
        "- Keeping the embeddings at Q5_K is borderline: KLD 0.0712 (+4.1% above threshold).\n",
        "- Dropping the head to Q4_K raised KLD by 0.0121 (15% above the agreed threshold).\n",
    ],
)
def test_relative_changes_shares_factors_and_zero_outcomes_are_claims(text):
    assert claim_lines(text)


@pytest.mark.parametrize(
    "text",
    [
        "The mean KL divergence drops quickly once the scales are fitted.\n",  # no amount
        "A rerun of the same command should land within 3% of this KLD mean.\n",  # a tolerance
        "Set the KL budget to 1/3 of the default before the second stage.\n",  # a setting, not a change
        "The run takes 3.2x the time of the Q8_0 file.\n",  # a factor of no KL
        "The KL divergence of a model with itself comes out as 0 when the weights are equal.\n",  # a definition
        "Stop the run when the KL penalty rises above threshold 0.02 for a 3x longer stretch.\n",  # a training setting
        "A 2x KLD increase over the baseline is the threshold for a rollback.\n",  # a rule, its threshold unnumbered
    ],
)
def test_amountless_tolerances_settings_and_definitions_are_no_claim(text):
    assert not claim_lines(text)


def test_a_chinese_comparison_word_before_the_number_is_a_bound():
    assert not claim_lines('    else bad "KLD 变差超过 0.0005"; fi\n')
    assert not claim_lines("验收：量化后 KLD 低于 0.01 即可。\n")


def test_a_chinese_measurement_next_to_a_comparison_stays_a_claim():
    assert claim_lines("开启融合后平均 KLD 为 0.0031，比关闭时高 0.0002。\n")
