"""KLD212: a card that ranks KLD numbers which its own disclosures show are not the same quantity."""

from __future__ import annotations

import copy
from pathlib import Path

from helpers_lint import COMPLIANT, EXAMPLES, front_matter, write_card

from kldcard.lint.runner import lint_card

CTX_COLUMNS = Path(__file__).parent / "data" / "prose_corpus" / "blind2_ctx_columns.md"
REAL = Path(__file__).parent / "data" / "real_cards" / "cards"


def _kld212(path) -> list:
    return [f for f in lint_card(path).findings if f.rule_id == "KLD212"]


def test_a_card_ranking_numbers_measured_at_two_contexts(tmp_path):
    card = tmp_path / "ranked.md"
    card.write_text(CTX_COLUMNS.read_text(encoding="utf-8") + "\nLowest KLD wins: Q5_K_M is the best quant here.\n")
    found = _kld212(card)
    assert len(found) == 1
    assert found[0].severity == "warning" and found[0].line == 8
    assert "not the same quantity: different context (4096 vs 512)" in found[0].message


def test_the_same_table_without_a_ranking_is_not_flagged():
    assert _kld212(CTX_COLUMNS) == []


def test_a_ranked_table_of_mean_and_percentile_columns_is_not_flagged(tmp_path):
    """Real card: mean KLD and 99.9% KLD columns side by side, "lower is better"; statistics are compared
    within themselves only."""
    text = (REAL / "reading_unsloth_qwen35_benchmarks_notes.md").read_text(encoding="utf-8")
    assert "lower is better" in text.lower()
    assert _kld212(REAL / "reading_unsloth_qwen35_benchmarks_notes.md") == []


def test_a_block_ranking_a_top_k_candidate_beside_a_full_one():
    found = _kld212(EXAMPLES / "KLD212-ranks-incomparable-numbers.md")
    assert len(found) == 1 and found[0].pointer == "/kld_evaluation/comparison/ranking"
    assert "different truncation (top-k k=20 vs full)" in found[0].message


def test_a_block_ranking_candidates_measured_the_same_way_is_clean(tmp_path):
    meta = front_matter(EXAMPLES / "KLD212-ranks-incomparable-numbers.md")
    del meta["kld_evaluation"]["candidates"][1]["vocabulary"]
    body = COMPLIANT.read_text(encoding="utf-8").split("---\n", 2)[2]
    card = write_card(tmp_path / "same.md", copy.deepcopy(meta), body)
    assert _kld212(card) == []
    assert lint_card(card, select=["KLD212"]).findings == []


def _transposed(n: int):
    """A card whose table holds n KLD numbers on one line, and the reading of it (built here, so that the
    timing is KLD212's own, not the reader's)."""
    from kldcard.card.document import parse_card
    from kldcard.lint.markdown import scan
    from kldcard.lint.reading import ClaimReading, DisclosureReading, NumberReading

    row = "| KLD@ctx512 | " + " | ".join("0.05" for _ in range(n)) + " |"
    text = ("# card\n\nThe best quant ranks first.\n\n| | " + " | ".join(f"Q{i}" for i in range(n)) + " |\n|"
            + "---|" * (n + 1) + "\n" + row + "\n")
    card = parse_card(text.encode())
    line = text.splitlines().index(row) + 1
    cols = [i + 1 for i in range(len(row)) if row.startswith("0.05", i)]
    numbers = tuple(NumberReading("0.05", 0.05, line, c, candidate=f"Q{i}") for i, c in enumerate(cols))
    disclosures = {d: DisclosureReading(d, "missing") for d in range(1, 10)}
    claim = ClaimReading("table", line - 2, 1, "| | Q0", numbers, disclosures)
    return card, scan(card.body, card.body_line), [claim]


def test_kld212_is_linear_in_the_numbers_of_one_line():
    import time

    from kldcard.lint.ranking_check import check_ranking

    def seconds(n: int) -> float:
        card, doc, claims = _transposed(n)
        best = float("inf")
        for _ in range(3):
            t0 = time.perf_counter()
            assert check_ranking(card, doc, claims, {"KLD212"}) == []  # one context for all: comparable
            best = min(best, time.perf_counter() - t0)
        return best

    n = 250
    while seconds(n) < 0.05 and n < 64000:
        n *= 2
    small, large = seconds(n), seconds(4 * n)
    assert large / small < 8, f"{small * 1e3:.1f} ms at n={n}, {large * 1e3:.1f} ms at 4n"


def test_kld212_keeps_lint_free_of_pydantic_and_numpy(tmp_path):
    """A valid block lints without pydantic (kldcard.schema_rules); KLD212 must not bring it back."""
    import subprocess
    import sys

    code = ("import sys\nfrom kldcard.cli.main import main\n"
            f"main(['lint', {str(EXAMPLES / 'KLD212-ranks-incomparable-numbers.md')!r}, {str(CTX_COLUMNS)!r}])\n"
            "print('LOADED', sorted({'pydantic', 'numpy'} & {m.split('.')[0] for m in sys.modules}), file=sys.stderr)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert "LOADED []" in proc.stderr, proc.stderr[-2000:]
    assert "KLD212" in proc.stdout
