"""D1 recognisers (kldcard.lint.read.reference): the reference named by its role or by an assignment reads
as ``incomplete`` (found; revision and dtype still needed), never as missing."""

from __future__ import annotations

import pytest
from helpers_reading import reading

CLAIM = "The Q4_K_M file reaches a KLD of 0.0231.\n\n"


def d1(text: str):
    return reading(CLAIM + text, 1)


@pytest.mark.parametrize(
    "text",
    [
        "The perplexity tool scores PPL and KLD (base = the logits with an f16 cache).\n",
        "Cache types against base = `--kv-dtype bf16` on the same weights.\n",
        "KLD says how closely the quant follows the original BF16 output distribution.\n",
        "The checker loads the converted checkpoint and the original HF model side by side.\n",
        "The predictions match the unmodified model's within noise.\n",
        "Greedy outputs match the pinned stock engine reference on every case.\n",
        "Quality measured on CPU (KLD vs `run-Q6K.kld`, 100 chunks).\n",
        "| モデル | 元のモデルからのKLダイバージェンス |\n|---|---|\n| x | 0.5 |\n",
        "La divergencia KL frente al modelo sin editar fue baja.\n",
    ],
)
def test_reference_by_role_or_assignment_is_found(text):
    d = d1(text)
    assert d.status == "incomplete" and d.evidence, d


@pytest.mark.parametrize(
    "text",
    [
        "As the original paper says, lower is better.\n",  # the original paper is no model
        "Config `q4_0/q4_0` is much worse vs `f16/q4_0` on the cache.\n",  # two candidates, no reference
    ],
)
def test_other_originals_and_comparisons_are_not_the_reference(text):
    assert d1(text).status == "missing", d1(text)


@pytest.mark.parametrize(
    "text",
    [
        "| Quant | KLD vs parent | top-1 vs parent |\n|---|---|---|\n| Q4 | 0.1 | 91 % |\n",  # the parent by its role
        "KLD: `python kl_compare.py --reference runs/bf16-capture --candidate runs/q4`\n",  # a command's option
        "KLD: `python kl_compare.py --model q4 --baseline-model $BF16_DIR`\n",
        "| Model | bpw | KL-div (q→fp16) |\n|---|---|---|\n| x | 4.0 | 0.02 |\n",  # the reference side of an arrow
    ],
)
def test_reference_beside_a_kl_term_is_found(text):
    d = d1(text)
    assert d.status == "incomplete" and d.evidence, d


@pytest.mark.parametrize(
    "text",
    [
        "The Q2 file trails its parent model on speed as well (vs parent: -12 % tok/s).\n",  # no KL term
        "The exporter was run with `--reference docs/template.md`.\n",
    ],
)
def test_a_parent_or_reference_option_without_kl_is_not_the_reference(text):
    assert d1(text).status == "missing"


# tune-q (issue 28, round 6): a teacher, a formula's LaTeX argument, a table's own reference row named by its dtype
@pytest.mark.parametrize(
    "text",
    [
        "The same window, teacher row and tokens give different vectors from one boot to the next.\n",
        "The loss is $$D_{KL}(P_{student} || P_{teacher})$$ on every token.\n",
        "评估：算出与教师模型预测分布之间的平均 KL 散度。\n",
        "| repo | name | kld |\n|---|---|---|\n| Org | AD-BF16 | 0.0 |\n| Org | AD-Q4 | 0.15 |\n",
        "| Model | Precision | KLD |\n|---|---|---|\n| Qwen3-0.6B | BF16 | 0.000 |\n| Qwen3-0.6B | Q4 | 0.052 |\n",
    ],
)
def test_teacher_latex_argument_and_dtype_named_row_are_the_reference(text):
    assert d1(text).status in ("stated", "incomplete"), d1(text)


def test_teacher_forced_is_not_a_teacher_reference():
    assert d1("The teacher-forced diagnostic passed.\n").status == "missing"
