"""`kldcard comparable --rank`: comparable kldcard results with per-token files go on to `kldcard rank`."""

from __future__ import annotations

import json

from test_compare_ranking import _captures

from kldcard.cli.main import main


def test_comparable_results_hand_over_to_kldcard_rank(tmp_path, capsys):
    ref, cands = _captures(tmp_path, 24)
    paths = []
    for name, cap in cands.items():
        out = tmp_path / f"{name}.json"
        assert main(["compare", str(ref.path), str(cap.path), "-o", str(out), "--per-token",
                     str(tmp_path / f"{name}.npz"), "--bootstrap", "200", "--no-progress"]) == 0
        paths.append(str(out))
    capsys.readouterr()
    ranking = tmp_path / "ranking.json"
    assert main(["comparable", *paths, "--rank", str(ranking)]) == 0
    out = capsys.readouterr().out
    assert "verdict: comparable" in out and "ranking: every number is a kldcard result with per-token values" in out
    assert "not distinguishable from" in out  # kldcard rank's own summary
    data = json.loads(ranking.read_text())
    assert {e["name"] for e in data["ranking"]} == {"q8a", "q8b", "q2"}
