"""Settings written as a block of their own (kldcard.lint.read.record_fields): a list, a parameter table or a script's
constants that set up the run whose KL the card reports further on, read from short texts in the project's own words.
Look-alikes next to each: a field inside a sentence or a JSON entry far from any KL, a training run's length."""

from __future__ import annotations

import pytest
from helpers_reading import reading

RESULT = "\n\n## Results\n\n" + "Several paragraphs of discussion follow here before the number. " * 8 + "\n\nQ4_K_M reaches a mean KLD of 0.0231.\n"


# A settings line of its own needs no KL term beside it: the list, table or script is the run's setup and the KL is
# reported in its results section (round 24; holdout-4 b/quanttuner_exp040d "EVAL_CTX = 4096" among a script's
# constants, holdout-14 c/ru_qwen3_06b_hard_teacher "| `seq_len` | `256` |" in a parameter table, holdout-16
# c/zh_idea_a_tiny_mixtral "- seq len：96" in a setup list with a full-width colon)
@pytest.mark.parametrize(
    ("setup", "n_ctx"),
    [
        ("## Setup\n\n- model: a small test model\n- prompts: six short texts\n- seq len：192\n", 192),
        ("## Parameters\n\n| Name | Value | Meaning |\n|---|---|---|\n| `batch` | `1` | one at a time |\n"
         "| `seq_len` | `384` | tokens per scored block |\n", 384),
        ("```python\nREF = OUT / 'ref.logits'\nSCORE_CTX = 1024\n```\n", 1024),
    ],
)
def test_a_settings_line_of_its_own_gives_the_length(setup, n_ctx):
    d = reading(setup + RESULT, 5)
    assert d.status != "missing" and d.value.get("n_ctx") == n_ctx, d


@pytest.mark.parametrize(
    "setup",
    [
        # a field inside a sentence, with no KL near it: a prose mention, not the run's settings line
        "## Setup\n\nThe old script set EVAL_CTX = 1024 for another project.\n",
        # a JSON entry (a comma after it) of a model's own config, far from any KL
        '## Model\n\n```json\n{\n  "architectures": ["X"],\n  "seq_length": 8192,\n  "rope_theta": 10000\n}\n```\n',
        # a training run's length in its own list
        "## Training\n\n- train_seq_len: 4096\n- steps: 900\n",
    ],
)
def test_other_settings_lines_give_no_length(setup):
    assert reading(setup + RESULT, 5).status == "missing"


def test_a_vocabulary_in_an_architecture_table_is_not_the_kls():
    # the table-cell form (record_fields.CELL_CLOSE) is the window length's only: a model card's "| Vocab | 248,320 |"
    # row gives its architecture (holdout-3 hf/rvn_qwen38_27b_heretic_ara_gguf, holdout-5
    # a/cyborgpaloma_gemma4_e4b_base_heretic, labelled D8 M). Two guards keep it unread, and the test fails if either
    # goes: vocabulary.VOCAB_SIZE takes no "|" between the word and the size (checked by letting it take one), and
    # record_fields reads a field with no KL in its record only when it is a window length's settings line
    table = "## Architecture\n\n| Field | Value |\n|---|---|\n| Layers | 40 |\n| Vocab | 151,936 |\n"
    assert reading(table + RESULT, 8).status == "missing"
