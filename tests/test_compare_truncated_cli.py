"""`kldcard compare` with a sparse (top-k) capture on one side runs the truncated comparison and names
its tail treatment; full captures keep the float64 path."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from kldcard.capture.manifest import CaptureMeta
from kldcard.capture.sparse import tail_logprob, write_sparse_capture
from kldcard.capture.store import create_capture_from_arrays
from kldcard.cli.main import main


def _captures(tmp_path: Path, k: int = 8):
    rng = np.random.default_rng(0)
    n, v = 12, 64
    logits = (rng.normal(size=(n, v)) * 3).astype(np.float32)
    ids = rng.integers(0, v, size=n + 1).astype(np.int32)
    pos = np.arange(n, dtype=np.int64)
    meta = CaptureMeta(model={"name": "synthetic"}, text={"name": "t"})
    create_capture_from_arrays(tmp_path / "full", logits, pos, ids, meta, dtype="f32")
    lp = logits - np.logaddexp.reduce(logits.astype(np.float64), axis=1, keepdims=True)
    top = np.argsort(-lp, axis=1)[:, :k]
    top_lp = np.take_along_axis(lp, top, axis=1).astype(np.float32)
    meta_k = CaptureMeta(model={"name": "synthetic"}, text={"name": "t"},
                         truncation={"kind": "top-k", "top_k": k})
    write_sparse_capture(tmp_path / "topk", meta=meta_k, n_vocab=v, token_ids=ids, positions=pos,
                         topk_ids=top.astype(np.int32), topk_logprobs=top_lp)
    assert np.all(np.isfinite(tail_logprob(top_lp)))
    return tmp_path / "full", tmp_path / "topk"


def test_sparse_side_runs_the_truncated_comparison(tmp_path: Path, capsys):
    full, topk = _captures(tmp_path)
    out = tmp_path / "r.json"
    assert main(["compare", str(full), str(topk), "-o", str(out), "--tail", "lumped"]) == 0
    printed = capsys.readouterr().out
    assert "tail: lumped" in printed and "nats" in printed and "KL(P_ref || P_cand)" in printed
    data = json.loads(out.read_text())
    assert data["treatment"] == "lumped" and data["candidate_top_k"] == 8 and data["reference_top_k"] is None
    # The same distribution on both sides, seen through its own top-k: the lumped KL is (near) zero.
    assert 0 <= data["mean"] < 1e-6


def test_full_vocabulary_only_options_are_refused_for_sparse(tmp_path: Path, capsys):
    full, topk = _captures(tmp_path)
    out = tmp_path / "r.json"
    assert main(["compare", str(full), str(topk), "-o", str(out), "--per-token", str(tmp_path / "p.npz")]) == 2
    assert "top-k" in capsys.readouterr().err and not out.exists()
