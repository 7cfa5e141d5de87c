"""Each engine adapter returns the engine's own logits at the right positions.

Position i of a capture must be the distribution after tokens 0..i (predicting token i+1). For each
engine the capture (chunked prefill, KV cache, logits only at sampled positions) is checked against
the engine's plain one-shot forward pass over the whole text with all logits, computed here with
the engine's public API. Chunking and output selection change the arithmetic only at the level of
float32 rounding, so the two agree to ~1e-4 in logit units and argmax exactly.
"""

from __future__ import annotations

import numpy as np
import pytest

from kldcard.capture.run import run_capture

pytestmark = pytest.mark.engines

SETTINGS = {"positions": "every:5@2", "prefill_chunk": 50, "store_dtype": "f32", "progress": False}


def _check(cap, full: np.ndarray, atol: float) -> None:
    got = cap.logits_f32(0, cap.n_positions)
    want = full[cap.positions]
    assert got.shape == want.shape == (len(cap.positions), cap.n_vocab)
    np.testing.assert_allclose(got, want, rtol=0, atol=atol)
    assert np.array_equal(got.argmax(-1), want.argmax(-1))
    # A one-position shift would be caught: neighbouring rows differ by far more than atol.
    assert np.abs(got[1:] - full[cap.positions[1:] - 1]).max() > 100 * atol


def test_transformers_matches_a_plain_forward(tiny_qwen3, engines_text, tmp_path):
    import torch
    from transformers import AutoModelForCausalLM

    res = run_capture("transformers", tiny_qwen3["hf"], engines_text, tmp_path / "c", dtype="f32", **SETTINGS)
    model = AutoModelForCausalLM.from_pretrained(tiny_qwen3["hf"], dtype=torch.float32)
    with torch.inference_mode():
        full = model(torch.from_numpy(res.capture.token_ids.astype(np.int64))[None]).logits[0].numpy()
    _check(res.capture, full, atol=1e-3)


def test_llamacpp_matches_logits_all(tiny_qwen3, engines_text, tmp_path):
    import llama_cpp

    res = run_capture("llama.cpp", tiny_qwen3["gguf_f32"], engines_text, tmp_path / "c", **SETTINGS)
    llm = llama_cpp.Llama(str(tiny_qwen3["gguf_f32"]), n_ctx=512, n_batch=512, logits_all=True, verbose=False,
                          flash_attn=False)
    ids = res.capture.token_ids.tolist()
    assert llm.tokenize(engines_text.read_bytes(), add_bos=True, special=True) == ids
    llm.eval(ids)
    full = np.asarray(llm.scores[: len(ids)], dtype=np.float32)
    llm.close()
    _check(res.capture, full, atol=1e-3)


def test_mlx_matches_a_plain_forward(tiny_qwen3, engines_text, tmp_path):
    import mlx.core as mx
    from mlx_lm import load

    res = run_capture("mlx", tiny_qwen3["hf"], engines_text, tmp_path / "c", dtype="f32", **SETTINGS)
    model, _ = load(str(tiny_qwen3["hf"]))
    model.set_dtype(mx.float32)
    full = np.array(model(mx.array(res.capture.token_ids)[None])[0])
    _check(res.capture, full, atol=1e-3)


def test_context_windows_restart_the_kv_cache(tiny_qwen3, engines_text, tmp_path):
    """Windows of n_ctx tokens are independent: a window's logits do not depend on earlier text."""
    common = {"positions": "all", "prefill_chunk": 32, "store_dtype": "f32", "progress": False}
    a = run_capture("llama.cpp", tiny_qwen3["gguf_f32"], engines_text, tmp_path / "a", n_ctx=100, **common).capture
    b = run_capture("llama.cpp", tiny_qwen3["gguf_f32"], engines_text, tmp_path / "b", n_ctx=200, **common).capture
    assert a.manifest.context.n_chunks == 3 and b.manifest.context.n_chunks == 2

    def row(cap, position):
        i = int(np.searchsorted(cap.positions, position))
        assert cap.positions[i] == position
        return cap.logits_f32(i, i + 1)

    # Tokens 0..99 form the first window in both layouts: identical logits.
    for p in (0, 50, 98):
        np.testing.assert_array_equal(row(a, p), row(b, p))
    # Position 99 predicts token 100, which starts a new window when n_ctx is 100: not scored.
    assert 99 not in a.positions and 99 in b.positions
    # Position 100 starts a fresh KV cache in `a` but has 100 tokens of context in `b`.
    assert np.abs(row(a, 100) - row(b, 100)).max() > 1e-2
