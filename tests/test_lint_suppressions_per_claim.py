"""Suppressions act per claim (issue 27): a disable/enable range around one claim silences that
claim's findings only, never the same finding of another claim, for every KLD3xx rule."""

from __future__ import annotations

import pytest

from kldcard.lint.findings import Finding, merge_groups
from kldcard.lint.runner import enabled_codes, lint_text

LOG = "```\nllama-perplexity -m q.gguf --kl-divergence -f wiki.test.raw\n====== KL divergence statistics ======\n" \
      "Mean    KLD:   0.031273 ±   0.000227\nMedian  KLD:   0.014910\n```\n"
BLOCK = """---
kld_evaluation:
  reference: {model: org/m, revision: 0123456789abcdef0123456789abcdef01234567, dtype: bf16}
  candidates:
    - name: q4
      results: {kld: {mean: 0.0231}}
---
"""
BARE = ("Q4_K_M: KLD 0.0231.", "Q8_0: KLD 0.0051.")
STAT = "We report token means with a bootstrap 95% CI.\n\n"

# rule -> (text before both claims, the claim put inside the range, the claim left outside)
CASES = {
    **{f"KLD30{n}": ("", *BARE) for n in range(1, 10)},
    "KLD310": ("", "Mean KLD 0.0231 against the Q8_0 reference.", "Mean KLD 0.0131 against the Q6_K reference."),
    # the number first: a flag's pattern may reach back across lines to "kldcard" in a directive
    "KLD311": ("", "Mean KLD 0.0231. For the KLD numbers the eval file was generated from the same imatrix "
               "calibration dataset.", "Mean KLD 0.0131. The tool measures KLD on the same calibration dataset "
               "used for the imatrix."),
    "KLD312": (STAT, "Q4_K_M reaches a KLD of 0.0231.", "Q8_0 reaches a KLD of 0.0051."),
    # KLD313 is on the line the defaults are read from (the tool's), one per card: see its own test
    "KLD314": (BLOCK, "Mean KLD of q4: 0.0300.", "Mean KLD of q4 on another day: 0.0400."),
    "KLD315": ("", "## KL divergence vs BF16\n\n![KLD per quant](kld.png)\n", "## KLD of the 4-bit quant\n\n"
               "![KLD per layer](kld2.png)\n"),
    "KLD320": ("", "Mean KLD 0.0231 ± 0.0004 (SE) over 2048-token chunks.",
               "Mean KLD 0.0131 ± 0.0003 (SE) in 2048-token chunks."),
    # a disclosure stated in part (issue 28), by each claim in its own words
    "KLD331": ("", "Mean KLD 0.0231 against google/gemma-3-12b-it.", "Mean KLD 0.0131 against google/gemma-3-4b-it."),
    "KLD332": ("", "Q4_K_M reaches a KLD of 0.0231, measured with llama.cpp on an RTX 4090.",
               "Q8_0 reaches a KLD of 0.0051, measured with llama.cpp on an RTX 3090."),
    "KLD333": ("", "Mean KLD 0.0231 on wikitext-2.", "Mean KLD 0.0131 on the C4 validation split."),
    "KLD334": ("", "Mean KLD 0.0231; the imatrix was computed on wiki.train.raw.",
               "Mean KLD 0.0131; the imatrix was computed on calibration_datav3.txt."),
    "KLD335": ("", "Mean KLD 0.0231 with a context of 512 tokens.", "Mean KLD 0.0131 with a context of 4096 tokens."),
    "KLD336": ("", "Mean KLD 0.0231 over 2048 scored positions.", "Mean KLD 0.0131 over 4096 scored positions."),
    "KLD339": ("", "Q4_K_M reaches a KLD of 0.0231 (bootstrap confidence interval over windows).",
               "Q8_0 reaches a KLD of 0.0051 (bootstrap confidence interval over chunks)."),
}


def _card(rule: str, inside_first: bool) -> tuple[str, set[int], set[int]]:
    """(card text, lines of the claim in the range, lines of the claim outside it)."""
    head, a, b = CASES[rule]
    first, second = (a, b) if inside_first else (b, a)
    # bare directives (every rule) set apart by blank lines: the prose reader reads HTML comments as
    # text, and a rule code ("KLD311") in one would be a KLD term next to the claim
    on, off = "<!-- kldcard-disable -->\n\n", "\n\n<!-- kldcard-enable -->\n"
    parts = [f"{on}{first}{off}", f"{second}\n"] if inside_first else [f"{first}\n", f"{on}{second}{off}"]
    text = head + parts[0] + "\n" + parts[1]
    start_a = text.count("\n", 0, text.index(first)) + 1
    start_b = text.count("\n", 0, text.index(second)) + 1
    lines_a = set(range(start_a, start_a + first.count("\n") + 1))
    lines_b = set(range(start_b, start_b + second.count("\n") + 1))
    return (text, lines_a, lines_b) if inside_first else (text, lines_b, lines_a)


def _found(text: str, rule: str):
    result = lint_text(text.encode(), "README.md", enabled_codes())
    return [f for f in result.findings if f.rule_id == rule], result


def test_every_kld3_rule_has_a_case():
    from kldcard.lint.registry import RULES

    assert {c for c in RULES if c.startswith("KLD3")} == {*CASES, "KLD313"}


@pytest.mark.parametrize("rule", sorted(CASES))
@pytest.mark.parametrize("inside_first", [True, False], ids=["suppressed-first", "suppressed-second"])
def test_a_range_around_one_claim_leaves_the_other_claims_finding(rule, inside_first):
    text, inside, outside = _card(rule, inside_first)
    found, result = _found(text, rule)
    assert found, f"{rule} vanished:\n{text}"
    assert all(f.line not in inside for f in found), (found, inside)
    assert any(f.line in outside for f in found), (found, outside)
    assert not [f for f in result.findings if f.rule_id == "KLD009"]  # the directive was used


def test_kld313_is_suppressed_on_its_tool_line_and_not_by_a_range_around_a_claim():
    head = "Q4_K_M vs BF16 on wiki.test.raw, static quant (no imatrix), llama.cpp b6510 on an RTX 4090.\n\n"
    text = head + LOG + "\n<!-- kldcard-disable KLD313 -->\n\nMean KLD of Q8_0: 0.0051.\n\n<!-- kldcard-enable KLD313 -->\n"
    found, result = _found(text, "KLD313")
    assert [f.line for f in found] == [4]  # the tool line, outside the range
    assert [f.rule_id for f in result.findings if f.rule_id == "KLD009"] == ["KLD009"]  # the range hid nothing
    hidden, result = _found(text.replace(LOG, "<!-- kldcard-disable KLD313 -->\n" + LOG + "<!-- kldcard-enable KLD313 -->\n", 1), "KLD313")
    assert hidden == [] and result.suppressed == 1


def test_the_issues_range_around_the_first_claim_leaves_the_second_claims_findings():
    text = "<!-- kldcard-disable KLD3 -->\n\nQ4_K_M: KLD 0.0231.\n\n<!-- kldcard-enable KLD3 -->\n\nQ8_0: KLD 0.0051.\n"
    result = lint_text(text.encode(), "README.md", enabled_codes())
    assert sorted((f.rule_id, f.line) for f in result.findings) == [(f"KLD30{n}", 7) for n in range(1, 10)]


def test_the_count_of_other_claims_leaves_out_suppressed_ones():
    text = "A: KLD 0.02.\n\n<!-- kldcard-disable KLD307 -->\nB: KLD 0.03.\n<!-- kldcard-enable KLD307 -->\n\nC: KLD 0.04.\n"
    (f,), result = _found(text, "KLD307")
    assert f.line == 1 and "KLD claim (and 1 more claim) does not state the KL direction" in f.message
    (g,), _ = _found(text.replace("A: KLD 0.02.", "<!-- kldcard-disable-next-line KLD307 -->\nA: KLD 0.02."), "KLD307")
    assert g.line == 8 and "KLD claim does not state the KL direction" in g.message
    assert result.suppressed == 0  # a group counts as suppressed only when no member is left


def test_merge_groups_keeps_the_first_member_and_counts_the_rest():
    members = [Finding("c.md", line, 1, "KLD307", "error", "KLD claim{more} lacks D7", group="KLD307") for line in (9, 3, 5)]
    (merged,) = merge_groups([*members, Finding("c.md", 1, 1, "KLD312", "warning", "bare")])[1:]
    assert merged.line == 3 and merged.message == "KLD claim (and 2 more claims) lacks D7" and merged.group == ""
    assert "group" not in merged.to_dict()
