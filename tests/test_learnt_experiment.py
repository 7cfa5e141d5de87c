"""scripts/learnt_reading_experiment.py (round 21's learnt-reading experiment, README "Round 21"): its pieces, so that
the figures the README quotes come from code that still does what it says. The full run takes minutes and is not
repeated here."""

from __future__ import annotations

import importlib.util
from functools import cache
from pathlib import Path

import numpy as np

SCRIPT = Path(__file__).resolve().parent.parent / "scripts" / "learnt_reading_experiment.py"


@cache
def experiment():
    spec = importlib.util.spec_from_file_location("learnt_reading_experiment", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_features_read_numbers_and_scripts_as_cards_write_them():
    ex = experiment()
    assert ex.tokens("KLD 0,1137 at 512 tokens, 7 runs, 12345678") == ["kld", "<dec>", "at", "512", "tokens", "<n1>", "runs", "<long>"]
    assert {"kl", "散度", "kl 散度"} <= ex.features("KL 散度")
    assert {"ダイ", "イバ"} <= ex.features("KLダイバージェンス")  # a CJK run as character pairs
    assert ex.features("wiki test") == {"wiki", "test", "wiki test"}


def test_precision_and_recall():
    ex = experiment()
    assert ex.pr([True, True, False, False], [True, False, True, False]) == (0.5, 0.5)
    assert ex.pr([False], [False]) == (1.0, 1.0)  # nothing claimed, nothing to find


def test_the_sparse_fit_learns_a_separable_toy():
    ex = experiment()
    rows = [[0], [0, 2], [1], [1, 2]] * 5
    y = np.array([1.0, 1.0, 0.0, 0.0] * 5)
    w, b = ex.fit_sparse(rows, y, 3)
    assert w[0] > 0 > w[1] and abs(w[2]) < w[0]


def test_the_probe_deletes_exactly_the_disclosures_line():
    ex = experiment()
    for n, start in ex.PROBE_LINES.items():
        full, cut = ex.probe_cards(n)
        gone = set(full.splitlines()) - set(cut.splitlines())
        assert len(gone) == 1 and gone.pop().startswith(start)
        assert "llama.cpp b6510" in full  # the complete card's runtime has its version
