"""``kldcard lint --fix --scaffold`` on real cards: a block pre-filled from the reading (the card's values,
TODO elsewhere, nothing invented); linting it reports exactly the TODOs (KLD013); filling them gives a
card that lints clean (scaffold -> fill -> lint)."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers_lint import run_cli
from helpers_scaffold import fill

from kldcard.card.document import parse_card, read_card
from kldcard.card.splice import splice_block
from kldcard.card.yaml import dump_yaml
from kldcard.lint.placeholders import is_todo, todo_pointers
from kldcard.lint.reader import read_card as read_claims_of
from kldcard.lint.runner import enabled_codes, lint_text
from kldcard.lint.scaffold import scaffold_text

REAL = Path(__file__).parent / "data" / "real_cards" / "cards"
KLD_CARDS = [p for p in sorted(REAL.glob("*.md")) if not p.name.startswith("neg_") and read_claims_of(read_card(p))]
# real cards whose every KLD number the scaffold can place (a mean/median/percentile column, a labelled
# tool block, one number per claim); on the others KLD314 rightly asks where the rest belong
ROUND_TRIP = [
    "cyankiwi_awq_kld_tables.md",
    "llamacpp_pr6936_gaessler_kld_table.md",
    "mlx_quant_fidelity_pypi.md",
    "turboderp_ernie45_300b_exl3.md",
    "unsloth_kimi_k3_docs.md",
    "holdout_q4km_clone_baselines.md",
    "titwitmuffbiscuit_qwen35_9b_reddit.md",
]


def _leaves(node, pointer=""):
    if isinstance(node, dict):
        for k, v in node.items():
            yield from _leaves(v, f"{pointer}/{k}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            yield from _leaves(v, f"{pointer}/{i}")
    else:
        yield pointer, node


@pytest.mark.parametrize("path", KLD_CARDS, ids=lambda p: p.stem)
def test_scaffold_reports_exactly_its_todos_and_invents_nothing(path):
    card = read_card(path)
    text = scaffold_text(card)
    assert text is not None
    assert text.endswith(card.body)  # the body is untouched
    block = parse_card(text.encode(), path.name).metadata["kld_evaluation"]
    todos = todo_pointers(block, "/kld_evaluation")
    found = lint_text(text.encode(), path.name, enabled_codes()).findings
    assert [f.rule_id for f in found] == ["KLD013"] * len(todos)
    assert sorted(f.pointer for f in found) == sorted(todos)
    # every value the block holds is one the reading found stated on the card (normalised), or a
    # KLD number it prints; the words of the schema (log_base e, scheme names) are the schema's
    readings = read_claims_of(card)
    stated: set = {n.value for r in readings for n in r.numbers}
    for r in readings:
        for d in r.disclosures.values():
            if d.status in ("stated", "incomplete"):  # what a tool fixes beside the card's part is not the card's
                for v in (x for k, x in d.value.items() if k not in d.inferred_keys):
                    stated |= {v, str(v).lower(), *str(v).split()}
    for pointer, value in _leaves(block):
        if is_todo(value) or pointer == "/schema_version" or pointer.endswith("/name") or pointer.endswith("/log_base"):
            continue
        if isinstance(value, bool):
            assert pointer.endswith("/none") and value is True
        else:
            assert value in stated or str(value).lower() in stated, (pointer, value)


@pytest.mark.parametrize("name", ROUND_TRIP)
def test_scaffold_then_fill_the_todos_lints_clean(name):
    path = REAL / name
    text = scaffold_text(read_card(path))
    block = fill(parse_card(text.encode(), name).metadata["kld_evaluation"])
    filled = splice_block(text, dump_yaml({"kld_evaluation": block}), name)
    found = lint_text(filled.encode(), name, enabled_codes()).findings
    assert found == [], [(f.rule_id, f.message) for f in found]


def test_cli_fix_scaffold_writes_the_block_and_keeps_every_other_byte(tmp_path, capsys):
    src = (REAL / "cyankiwi_awq_kld_tables.md").read_bytes()
    card = tmp_path / "README.md"
    card.write_bytes(b"\xef\xbb\xbf" + src.replace(b"\n", b"\r\n"))
    rc, out, err = run_cli(capsys, "lint", "--fix", "--scaffold", str(card))
    new = card.read_bytes()
    assert rc == 1 and "scaffolded a kld_evaluation block in 1 card" in err
    assert new.startswith(b"\xef\xbb\xbf---\r\nkld_evaluation:\r\n") and new.endswith(src.replace(b"\n", b"\r\n"))
    assert b"\n" not in new.replace(b"\r\n", b"")
    assert {line.split()[2] for line in out.splitlines()[:-1]} == {"KLD013"}
    rc, _, err = run_cli(capsys, "lint", "--fix", "--scaffold", str(card))  # a block is there: nothing to do
    assert card.read_bytes() == new and "scaffolded" not in err


def test_cli_diff_scaffold_shows_without_writing(tmp_path, capsys):
    card = tmp_path / "README.md"
    card.write_text("---\nbase_model: org/m\n---\n# M\n\nMean KLD 0.0213 vs BF16 on wiki.test.raw.\n", encoding="utf-8")
    before = card.read_bytes()
    rc, out, _ = run_cli(capsys, "lint", "--diff", "--scaffold", str(card))
    assert rc == 1 and card.read_bytes() == before
    assert "+kld_evaluation:" in out and "+    model: org/m" in out and "+    dtype: bf16" in out
    assert "+        mean: 0.0213" in out


def test_scaffold_needs_fix_or_diff(tmp_path, capsys):
    card = tmp_path / "README.md"
    card.write_text("Mean KLD 0.02.\n", encoding="utf-8")
    rc, _, err = run_cli(capsys, "lint", "--scaffold", str(card))
    assert rc == 2 and "--scaffold writes a block" in err
