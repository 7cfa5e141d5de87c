"""The README's pooled first-score table is the sum of the nine newest holdouts' first-score tables above it.

Each holdout's first score is quoted in the README from its SCORE.md; the pooled table adds their counts (right =
precision x found, which must equal recall x labelled) and gives 95% Wilson intervals. This test recomputes it from
the quoted tables, so a corrected holdout table cannot leave the pooled figures behind.
"""

from __future__ import annotations

import math
import re
from pathlib import Path

README = Path(__file__).resolve().parent.parent / "README.md"
POOLED = ("Tenth", "Eleventh", "Twelfth", "Thirteenth", "Fourteenth", "Fifteenth", "Sixteenth", "Seventeenth", "Eighteenth")
FIRST_ROW = re.compile(r"^\| (D\d) [^|]*\| (\d+) \((\d+)\) \| ([\d.]+) \| ([\d.]+) \|$", re.M)
POOLED_ROW = re.compile(
    r"^\| (D\d) [^|]*\| (\d+) \| (\d+) \| (\d+) \| ([\d.]+) \(([\d.]+)-([\d.]+)\) \| ([\d.]+) \(([\d.]+)-([\d.]+)\) \|$", re.M
)


def wilson(k: int, n: int, z: float = 1.96) -> tuple[float, float]:
    p = k / n
    d = 1 + z * z / n
    centre = (p + z * z / (2 * n)) / d
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / d
    return centre - half, centre + half


def first_tables(text: str) -> dict[str, str]:
    """Each pooled holdout's first-score table: the first table after its bold heading."""
    out = {}
    for m in re.finditer(r"\*\*(\w+) real holdout[^*]*\*\*", text):
        if m.group(1) in POOLED:
            table = re.search(r"\| Disclosure \|.*?\n((?:\|.*\n)+)", text[m.end():])
            assert table, m.group(1)
            out[m.group(1)] = table.group(0)
    return out


def test_pooled_table_is_the_sum_of_the_first_scores():
    text = README.read_text(encoding="utf-8")
    tables = first_tables(text)
    assert sorted(tables) == sorted(POOLED)
    right: dict[str, int] = {}
    found: dict[str, int] = {}
    labelled: dict[str, int] = {}
    for name, table in tables.items():
        rows = FIRST_ROW.findall(table)
        assert len(rows) == 9, name
        for d, f, lab, p, r in rows:
            k = round(float(r) * int(lab))
            # the two rounded figures must describe the same count of right readings
            assert abs(float(p) * int(f) - k) <= 0.005 * int(f) + 0.5, (name, d)
            right[d] = right.get(d, 0) + k
            found[d] = found.get(d, 0) + int(f)
            labelled[d] = labelled.get(d, 0) + int(lab)
    head = text.index("**The nine newest first scores pooled**")
    pooled = POOLED_ROW.findall(text[head:head + 3000])
    assert [row[0] for row in pooled] == [f"D{n}" for n in range(1, 10)]
    for d, k, f, lab, p, plo, phi, r, rlo, rhi in pooled:
        assert (int(k), int(f), int(lab)) == (right[d], found[d], labelled[d]), d
        assert p == f"{right[d] / found[d]:.2f}" and r == f"{right[d] / labelled[d]:.2f}", d
        assert (plo, phi) == tuple(f"{x:.2f}" for x in wilson(right[d], found[d])), d
        assert (rlo, rhi) == tuple(f"{x:.2f}" for x in wilson(right[d], labelled[d])), d


def test_pooled_detection_is_the_sum_of_the_first_scores():
    text = README.read_text(encoding="utf-8")
    flagged = [0, 0]
    negatives = [0, 0]
    for m in re.finditer(r"\*\*(\w+) real holdout[^*]*\*\*", text):
        if m.group(1) in POOLED:
            after = text[m.end():m.end() + 2000]
            f = re.search(r"flagged\s+(\d+)\s+of\s+(\d+)", after)
            n = re.search(r"negatives\s+falsely\s+flagged\s+(\d+)\s+of\s+(\d+)", after)
            assert f and n, m.group(1)
            flagged = [flagged[0] + int(f.group(1)), flagged[1] + int(f.group(2))]
            negatives = [negatives[0] + int(n.group(1)), negatives[1] + int(n.group(2))]
    head = text.index("**The nine newest first scores pooled**")
    sentence = text[head:head + 4000]
    assert f"flagged {flagged[0]} of {flagged[1]} ({100 * flagged[0] / flagged[1]:.0f}%)" in sentence
    assert f"negatives falsely flagged {negatives[0]} of {negatives[1]} ({100 * negatives[0] / negatives[1]:.0f}%)" in sentence
