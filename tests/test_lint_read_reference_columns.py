"""D1 read from where the reference stands (kldcard.lint.read.reference_columns): a column of a KL table headed
by the reference's role, in a pipe table or flattened to one line, and the Romance reference word beside a dtype."""

from __future__ import annotations

import pytest
from helpers_reading import reading

from kldcard.lint.evidence_patterns import D1
from kldcard.lint.read import comparison, reference_columns, reference_scope

CLAIM = "The Q4_K_M file reaches a KLD of 0.0231.\n\n"


@pytest.mark.parametrize(
    ("text", "repo"),
    [
        ("| Metric | Edited | Original model (acme/tiny-7b) |\n|---|---|---|\n| KL divergence | 0.081 | 0 |\n| Refusals | 3/50 | 41/50 |\n",
         "acme/tiny-7b"),
        ("| Metric | Ours | Original |\n|---|---|---|\n| Refusals | 2/40 | 30/40 |\n| KLD | 0.12 | — |\n", None),
        ("Metric Edited Original model (acme/tiny-7b)\nKL divergence 0.081 0 (it is the reference)\n", "acme/tiny-7b"),
        ("Metric Edited Base model\nRefusals 5/90 70/90\nKL divergence 0.21 n/a\n", None),
    ],
)
def test_a_reference_column_of_a_kl_table_is_the_reference(text, repo):
    d = reading(text, 1)
    assert d.status == "incomplete" and d.evidence, d
    assert d.value.get("repo") == repo


@pytest.mark.parametrize(
    "text",
    [
        "| Benchmark | Original | Pruned |\n|---|---|---|\n| MMLU | 61.0 | 60.2 |\n",  # another metric's table
        "Metric Edited Original model\nRefusals 5/90 70/90\n",  # no KL row under the flattened header
        "We then compared it with the Original model on refusals.\nRefusals 5/90 against 70/90\n",  # prose, no KL row
    ],
)
def test_a_role_column_without_a_kl_row_is_no_reference(text):
    matches = [m for p in reference_columns.PATTERNS[:2] for m in p.finditer(text)]
    assert all(reference_scope.table_without_kl(text, m) for m in matches)


def test_a_prose_line_is_not_a_flattened_header():
    text = "Next we compared the quant with the original model\nKL divergence stayed at 0.02 throughout.\n"
    assert reference_columns.FLAT_HEADER.search(text) is None


@pytest.mark.parametrize(
    ("text", "dtype"),
    [
        ("Medimos la divergencia KL contra logits de referencia BF16: 0,031.\n", "BF16"),
        ("La KLD se mide frente a los logits de referencia en BF16 sobre el texto.\n", "BF16"),
        ("La KLD frente al modelo fp16 de referencia queda en 0,02.\n", "F16"),
        ("La KLD est mesurée contre des logits de référence F16.\n", "F16"),
    ],
)
def test_the_romance_reference_word_beside_a_dtype(text, dtype):
    d = reading(CLAIM + text, 1)
    assert d.status == "incomplete" and d.value.get("dtype") == dtype, d


def test_slash_joined_alternatives_are_other_candidates():
    text = "Mean KL 0.14 (-60% vs attention/SnapKV/H2O) on eight sequences.\n"
    m = comparison.VERSUS.search(text)
    assert m is not None and comparison.veto(text, m)
    assert reading(text, 1).status == "missing"


def test_two_values_joined_by_a_slash_are_no_repo_id():
    assert D1[0].search("Mean KL 0.05 vs 0.33/0.13 for the other two policies.") is None
    assert D1[0].search("Mean KL 0.05 vs acme/base-7b on the same text.").group("ref") == "acme/base-7b"


@pytest.mark.parametrize(
    "text",
    [
        "Variant A reached a mean KLD of 0.0023 vs q8_0's 0.0024 on the same run.\n",  # a rival's figure
        "The 4-bit cache took 27.9% of the cache size relative to bf16 with a mean KLD of 0.0029.\n",  # a size's baseline
    ],
)
def test_a_rivals_figure_or_a_sizes_baseline_is_not_the_reference(text):
    assert reading(text, 1).status == "missing"


def test_a_comparison_word_before_a_reference_still_reads():
    assert reading("Variant A reached a mean KLD of 0.0023 vs bf16 on the same run.\n", 1).status == "incomplete"


# holdout9/a coder3101_gemma3_27b_heretic_readme_commit_kl_016 (the table quoted in a diff, each line prefixed and
# numbered) and holdout11/a groxaxo_qwopus35_9b_coder_flash_heretic_ara_first_token_kl_reload (the header flattened with
# the role cell first): the column whose KL is zero by definition is the reference, wherever its header cell stands
@pytest.mark.parametrize(
    ("text", "repo"),
    [
        ("Scores\n\nMeasure Original model (acme/tiny-7b) Edited\nRefusals 61/80 4/80\n"
         "KL divergence (first token, 80 prompts) 0 (by definition) 0.052\n", "acme/tiny-7b"),
        ("Diff of the card:\n\n  | Measure | Edited | Base model (acme/tiny-7b) |\n12\n  | :-- | :-: | :-: |\n13\n"
         "+ | **KL divergence** | 0.052 | 0 *(by definition)* |\n", "acme/tiny-7b"),
        ("Measure Base model Edited\nKL divergence 0 (by definition) 0.052\n", None),
    ],
)
def test_the_column_zero_by_definition_under_a_role_header_is_the_reference(text, repo):
    d = reading(text, 1)
    assert d.status == "incomplete" and d.evidence, d
    assert d.value.get("repo") == repo


@pytest.mark.parametrize(
    "text",
    [
        # the role cell without a KL row that gives it zero by definition: another metric's zero
        "Measure Original model Edited\nRefusals 0 (by definition) 4/80\nKL divergence 0.052\n",
        # a prose line above, no header: "original" is lower-case prose, not a header cell
        "We kept the original model in memory.\nKL divergence 0 (by definition) for it, 0.052 for ours.\n",
    ],
)
def test_zero_by_definition_without_a_role_header_over_a_kl_row_names_nothing(text):
    assert reference_columns.BY_DEFINITION.search(text) is None


def test_by_definition_reads_a_long_line_in_linear_time():
    import time
    line = "Base " * 1600 + "\n" + "KL " * 2600 + "\n"
    t = time.perf_counter()
    reference_columns.BY_DEFINITION.search(line * 3)
    assert time.perf_counter() - t < 1.0
