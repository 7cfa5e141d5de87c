"""The pydantic-free block validator (kldcard.lint.block_check) against the schema's models.

Its contract is one-sided: when it accepts a block, pydantic's strict validation must succeed (else a
finding would be lost); when it declines, pydantic decides. It must also accept the valid blocks real
users publish, or the lint startup gain is lost (benchmarks/lint_startup.py)."""

from __future__ import annotations

import copy
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from kldcard.card.document import read_card
from kldcard.lint import block_check
from kldcard.schema import KldEvaluation

REPO = Path(__file__).resolve().parent.parent
CARDS = sorted((REPO / "examples" / "cards").glob("*.md"))


def _blocks() -> list[tuple[str, Any]]:
    out = []
    for path in CARDS:
        card = read_card(path)
        if isinstance(card.metadata.get("kld_evaluation"), dict):
            out.append((path.name, card.metadata["kld_evaluation"]))
    for path in sorted((REPO / "examples" / "cards").glob("*.json")):
        data = json.loads(path.read_text(encoding="utf-8"))
        block = data.get("kld_evaluation", data) if isinstance(data, dict) else None
        if isinstance(block, dict):
            out.append((path.name, block))
    return out


BLOCKS = _blocks()


def pydantic_valid(block: Any) -> bool:
    try:
        KldEvaluation.model_validate(block, strict=True)
    except (ValidationError, RecursionError):
        return False
    return True


def test_there_are_valid_and_invalid_example_blocks():
    verdicts = [pydantic_valid(b) for _, b in BLOCKS]
    assert any(verdicts) and not all(verdicts)


@pytest.mark.parametrize("name,block", BLOCKS, ids=[n for n, _ in BLOCKS])
def test_agrees_with_pydantic_on_every_example_block(name, block):
    # On the examples the verdicts are equal both ways: every valid example is accepted without
    # pydantic (the fast path is the common path), every invalid one is declined.
    assert block_check.accepts(block) == pydantic_valid(block), name


# ---- mutations of valid blocks: accepting must imply pydantic accepts --------------------------

ODD_VALUES = [
    None, True, False, 0, 1, -1, 2**63, -(2**63), 2**64, 1.0, 0.5, -0.5, 1.5, math.inf, -math.inf, math.nan,
    "", "x", "1e-3", "bf16", "q4_k_m", "a" * 64, "0" * 40, "0" * 64, "0" * 40 + "\n", "0" * 64 + "\n",
    "https://example.org", "every-n", "top-k", "floor", "forward", "cuda", "metal", "none", [], [1], ["x"],
    [0, 1], {}, {"a": 1}, {1: "x"},
]


def _paths(node: Any, path: tuple = ()) -> list[tuple]:
    out = [path]
    if isinstance(node, dict):
        for k, v in node.items():
            out += _paths(v, (*path, k))
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += _paths(v, (*path, i))
    return out


def _mutate(block: Any, path: tuple, how: str, value: Any) -> Any:
    out = copy.deepcopy(block)
    if not path:
        return value
    parent = out
    for p in path[:-1]:
        parent = parent[p]
    key = path[-1]
    if how == "delete":
        del parent[key]
    elif how == "add" and isinstance(parent[key], dict):
        parent[key]["unexpected_key"] = value
    else:
        parent[key] = value
    return out


VALID_BLOCKS = [b for _, b in BLOCKS if pydantic_valid(b)]


@st.composite
def mutated(draw):
    block = draw(st.sampled_from(VALID_BLOCKS))
    for _ in range(draw(st.integers(1, 3))):
        paths = _paths(block)
        path = draw(st.sampled_from(paths))
        how = draw(st.sampled_from(["set", "set", "delete", "add"]))
        if how == "delete" and not path:
            how = "set"
        block = _mutate(block, path, how, draw(st.sampled_from(ODD_VALUES)))
    return block


@settings(max_examples=400, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(mutated())
def test_accepting_implies_pydantic_accepts(block):
    if block_check.accepts(block):
        assert pydantic_valid(block)


def test_every_schema_keyword_is_understood():
    # A new kind of constraint in the models would otherwise be ignored by the fast path.
    assert block_check._unknown_keywords(block_check._schema()) == set()


def test_a_clean_one_card_lint_loads_no_pydantic():
    card = REPO / "examples" / "cards" / "compliant.md"
    code = (
        "import sys; from kldcard.cli.main import main; rc = main(['lint', sys.argv[1]]); "
        "print('pydantic' in sys.modules, rc)"
    )
    out = subprocess.run([sys.executable, "-c", code, str(card)], capture_output=True, text=True, check=True)
    assert out.stdout.split()[-2:] == ["False", "0"], out.stdout


def test_an_invalid_block_still_gets_pydantic_findings(tmp_path):
    card = (REPO / "examples" / "cards" / "compliant.md").read_text(encoding="utf-8")
    head, fm, body = card.split("---", 2)
    data = yaml.safe_load(fm)
    del data["kld_evaluation"]["reference"]["dtype"]
    path = tmp_path / "README.md"
    path.write_text("---\n" + yaml.safe_dump(data, sort_keys=False) + "---" + body, encoding="utf-8")
    code = "import sys; from kldcard.cli.main import main; sys.exit(main(['lint', sys.argv[1]]))"
    out = subprocess.run([sys.executable, "-c", code, str(path)], capture_output=True, text=True)
    assert out.returncode == 1
    assert "KLD101" in out.stdout and "dtype" in out.stdout
