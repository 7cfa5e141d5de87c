"""Capture refuses to run on a token mismatch (override recorded), records parity in the manifest,
and reproduces llama-perplexity's protocol (chunks, per-chunk BOS overwrite, scored positions)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from helpers_tokens import vocab_gguf

from kldcard.capture.llama_perplexity import llama_perplexity_plan
from kldcard.capture.run import capture
from kldcard.capture.store import open_capture
from kldcard.errors import TokenMismatch

pytestmark = pytest.mark.engines


def test_capture_records_identical_parity(tiny_qwen3: dict, engines_text: Path, tmp_path: Path):
    cap = capture("llama.cpp", tiny_qwen3["gguf_f32"], engines_text, tmp_path / "cap", positions="every:64",
                  parity_with=[f"hf:{tiny_qwen3['hf']}"], progress=False)
    parity = cap.manifest.tokenizer_parity
    assert parity is not None and parity.outcome == "identical"
    assert parity.tokens_checked == len(cap.token_ids)


def test_capture_aborts_on_mismatch_and_writes_nothing(tiny_llama: dict, engines_text: Path, tmp_path: Path,
                                                        test_cache: Path):
    converted = f"llama.cpp:{vocab_gguf(test_cache, 'llama3')}"  # adds BOS; the tiny HF model does not
    out = tmp_path / "cap"
    with pytest.raises(TokenMismatch) as exc:
        capture("transformers", tiny_llama["hf"], engines_text, out, parity_with=[converted], progress=False)
    assert exc.value.position == 0 and "BOS" in str(exc.value)
    assert not out.exists() and list(tmp_path.iterdir()) == []
    cap = capture("transformers", tiny_llama["hf"], engines_text, out, parity_with=[converted],
                  allow_token_mismatch=True, positions="every:64", progress=False)
    assert cap.manifest.tokenizer_parity.outcome == "overridden"


def test_llama_perplexity_protocol_overwrites_bos_per_chunk(tiny_qwen3: dict, engines_text: Path, tmp_path: Path):
    n_ctx = 64
    cap = capture("llama.cpp", tiny_qwen3["gguf_f32"], engines_text, tmp_path / "cap", protocol="llama-perplexity",
                  n_ctx=n_ctx, store_dtype="f32", progress=False)
    m = cap.manifest
    assert m.positions.scheme == "llama-perplexity"
    n_chunks = m.context.n_chunks
    assert n_chunks >= 2 and len(cap.token_ids) == n_chunks * n_ctx
    expected = np.concatenate([c * n_ctx + np.arange(n_ctx // 2, n_ctx - 1) for c in range(n_chunks)])
    np.testing.assert_array_equal(cap.positions, expected)
    # Qwen3 adds no BOS, so the fed ids are the text's ids; with a BOS-adding vocabulary, token 0 of
    # every chunk is overwritten (the plan is the same function the capture used).
    plan = llama_perplexity_plan(np.arange(3 * n_ctx), n_ctx, add_bos=True, bos_id=7)
    assert (plan.fed_ids[::n_ctx] == 7).all() and plan.fed_ids[1] == 1
    assert m.tokens.bos in ("none", None) or m.tokens.bos != "chunk-start-overwrite"
    reopened = open_capture(tmp_path / "cap")
    assert reopened.n_positions == n_chunks * (n_ctx - 1 - n_ctx // 2)


def test_chunks_fed_in_several_decodes_keep_every_decodes_rows(tiny_qwen3: dict, engines_text: Path, tmp_path: Path):
    # n_batch 16 < n_ctx 64: each chunk takes four decodes, the scored half coming from the last two.
    # llama.cpp's logits are a view of its own buffer, which the next decode overwrites: the rows of
    # the third decode must be copied first (else they would be the fourth decode's rows)
    kw = {"protocol": "llama-perplexity", "n_ctx": 64, "store_dtype": "f32", "progress": False}
    one = capture("llama.cpp", tiny_qwen3["gguf_f32"], engines_text, tmp_path / "one", **kw)
    four = capture("llama.cpp", tiny_qwen3["gguf_f32"], engines_text, tmp_path / "four", n_batch=16, **kw)
    assert "n_batch 16" in " ".join(four.manifest.notes)
    np.testing.assert_array_equal(one.positions, four.positions)
    a, b = one.logits_f32(0, one.n_positions), four.logits_f32(0, four.n_positions)
    # the same rows up to the batch shape's arithmetic (measured: KL ≤ 2e-5 nats), where a row taken
    # from the next decode would be another position's (neighbouring rows: ~6 nats apart)
    from kldcard.compare.divergence import divergence_logits

    assert divergence_logits(a, b).forward_kl.max() < 1e-3
    assert np.median(divergence_logits(a[:-1], a[1:]).forward_kl) > 1.0
