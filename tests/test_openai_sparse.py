"""The sparse (top-k) capture store and the truncated-comparison treatments."""

from __future__ import annotations

import json

import numpy as np
import pytest

from kldcard.capture.sparse import (
    open_any_capture,
    open_sparse_capture,
    tail_logprob,
    write_sparse_capture,
)
from kldcard.capture.store import create_capture_from_arrays, open_capture
from kldcard.compare.truncated import (
    compare_truncated,
    kl_truncated_rows,
    render_note,
    sparse_rows,
)
from kldcard.errors import CaptureMismatch, CorruptCapture, InputError, UsageError

META = {"model": {"name": "m", "format": "npy"}}
V, N = 50, 6


def _full(tmp_path, name: str, seed: int, ids=None):
    rng = np.random.default_rng(seed)
    z = (rng.standard_normal((N, V)) * 3).astype(np.float32)
    ids = np.arange(N + 1) if ids is None else ids
    return create_capture_from_arrays(tmp_path / name, z, np.arange(N), ids, META, dtype="f32")


def _to_sparse(tmp_path, name: str, full, k: int):
    r = sparse_rows(full, k)
    return write_sparse_capture(tmp_path / name, meta=META, n_vocab=V, token_ids=full.token_ids,
                                positions=full.positions, topk_ids=r.ids, topk_logprobs=r.logprobs)


def test_round_trip_and_manifest(tmp_path):
    full = _full(tmp_path, "f", 0)
    sp = _to_sparse(tmp_path, "s", full, 4)
    again = open_sparse_capture(tmp_path / "s")
    assert again.manifest.truncation.kind == "top-k" and again.manifest.truncation.top_k == 4
    assert again.topk_ids.shape == (N, 4) and again.topk_ids.dtype == np.int32
    assert np.all(np.diff(again.topk_logprobs, axis=1) <= 0)  # descending
    np.testing.assert_array_equal(again.tail, sp.tail)
    ls = full.logits_f32(0, N).astype(np.float64)
    ls = ls - ls.max(1, keepdims=True)
    ls -= np.log(np.exp(ls).sum(1, keepdims=True))
    rest = np.log(np.exp(np.sort(ls, axis=1)[:, :-4]).sum(1))  # the exact mass outside the top 4
    np.testing.assert_allclose(again.tail, rest, atol=1e-6)
    assert open_any_capture(tmp_path / "s").is_sparse and open_any_capture(tmp_path / "f").n_vocab == V


def test_tail_of_a_full_top_k_is_minus_inf():
    assert np.isneginf(tail_logprob(np.log(np.array([[0.5, 0.5]]))))[0]


def test_corruption_and_wrong_kind_are_one_line(tmp_path):
    full = _full(tmp_path, "f", 0)
    _to_sparse(tmp_path, "s", full, 3)
    with pytest.raises(InputError, match="not a sparse"):
        open_sparse_capture(tmp_path / "f")
    with pytest.raises(InputError, match="invalid manifest"):
        open_capture(tmp_path / "s")  # the full reader refuses a sparse capture clearly
    data = (tmp_path / "s" / "topk.safetensors").read_bytes()
    (tmp_path / "s" / "topk.safetensors").write_bytes(data[:-1] + bytes([data[-1] ^ 1]))
    with pytest.raises(CorruptCapture, match="sha256"):
        open_sparse_capture(tmp_path / "s")
    with pytest.raises(InputError, match="already exists"):
        _to_sparse(tmp_path, "s", full, 3)
    assert json.loads((tmp_path / "s" / "manifest.json").read_text())["top_k"] == 3  # untouched


def test_bad_rows_are_refused(tmp_path):
    with pytest.raises(InputError, match="<= 0 nats"):
        write_sparse_capture(tmp_path / "x", meta=META, n_vocab=V, token_ids=np.arange(3), positions=[0],
                             topk_ids=[[1]], topk_logprobs=[[0.5]])
    with pytest.raises(InputError, match="in \\[0, 50\\)"):
        write_sparse_capture(tmp_path / "x", meta=META, n_vocab=V, token_ids=np.arange(3), positions=[0],
                             topk_ids=[[77]], topk_logprobs=[[-1.0]])
    assert not (tmp_path / "x").exists() and not list(tmp_path.glob(".x.partial-*"))


def test_treatments(tmp_path):
    ref, cand = _full(tmp_path, "r", 0), _full(tmp_path, "c", 1)
    exact = kl_truncated_rows(sparse_rows(ref), sparse_rows(cand), "lumped")
    for k in (1, 3, 10, V):
        lumped = kl_truncated_rows(sparse_rows(ref), sparse_rows(cand, k), "lumped")
        both = kl_truncated_rows(sparse_rows(ref, k), sparse_rows(cand, k), "lumped")
        assert np.all(lumped <= exact + 1e-12) and np.all(both <= exact + 1e-12)  # coarse-graining
    np.testing.assert_allclose(kl_truncated_rows(sparse_rows(ref), sparse_rows(cand, V), "union-renormalised"),
                               exact, rtol=1e-9)  # k = V: nothing truncated
    sp = _to_sparse(tmp_path, "cs", cand, 5)
    res = compare_truncated(ref, sp, treatment="union-renormalised")
    assert res.vocabulary["tail"] == "union-renormalised" and res.vocabulary["top_k"] == 5
    assert "union-renormalised" in render_note(res) and "candidate top-5" in render_note(res)
    with pytest.raises(UsageError, match="tail treatment"):
        compare_truncated(ref, sp, treatment="ignore")
    with pytest.raises(UsageError, match="full-vocabulary"):
        compare_truncated(ref, cand)
    other = _full(tmp_path, "o", 2, ids=np.arange(N + 1) + 1)
    with pytest.raises(CaptureMismatch):
        compare_truncated(other, sp)
