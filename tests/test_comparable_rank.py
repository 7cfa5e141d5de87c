"""`kldcard comparable --rank`: comparable kldcard results with per-token files go on to `kldcard rank`."""

from __future__ import annotations

import json

import numpy as np
from helpers_compare import logits_pair

from kldcard.capture.store import create_capture_from_arrays
from kldcard.cli.main import main

WINDOW, N_WINDOWS, V = 16, 24, 64
TEXT = {"name": "synthetic text", "sha256": "ab" * 32}


def _capture(tmp, name, z, dtype):
    n = len(z)
    meta = {"model": {"name": name, "format": "npy", "dtype": dtype}, "positions": {"scheme": "all"}, "text": TEXT,
            "context": {"n_ctx": WINDOW, "n_chunks": N_WINDOWS, "stride": WINDOW, "prefill_chunk": WINDOW}}
    return create_capture_from_arrays(tmp / name, z, np.arange(n), np.arange(n + 1) % V, meta, dtype="f32")


def test_comparable_results_hand_over_to_kldcard_rank(tmp_path, capsys):
    z, _ = logits_pair(np.random.default_rng(0), N_WINDOWS * WINDOW, V, 0.0)
    ref = _capture(tmp_path, "ref", z, "bf16")
    paths = []
    for name, sigma, seed in (("q8a", 0.05, 1), ("q8b", 0.05, 2), ("q2", 0.6, 3)):
        zc = (z + np.random.default_rng(seed).normal(size=z.shape) * sigma).astype(np.float32)
        cap = _capture(tmp_path, name, zc, name)
        out = tmp_path / f"{name}.json"
        assert main(["compare", str(ref.path), str(cap.path), "-o", str(out), "--per-token",
                     str(tmp_path / f"{name}.npz"), "--bootstrap", "200", "--no-progress"]) == 0
        paths.append(str(out))
    capsys.readouterr()
    ranking = tmp_path / "ranking.json"
    rc = main(["comparable", *paths, "--rank", str(ranking)])
    out, err = capsys.readouterr()
    assert rc == 0, out + err
    assert "verdict: comparable" in out and "ranking: every number is a kldcard result with per-token values" in out
    assert "not distinguishable from" in out  # kldcard rank's own summary
    data = json.loads(ranking.read_text())
    assert {e["name"] for e in data["ranking"]} == {"q8a", "q8b", "q2"}
