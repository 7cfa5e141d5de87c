"""End to end: one text, one set of weights, three real engines, two quantizations.

Done-when of the engines issue: KL between engines on identical weights is finite, small and
non-zero; between two captures of the same stack it is exactly zero; a 4-bit quantization is
clearly further from the reference than Q8_0. KL is forward KL(P_ref || P_cand) in nats over the
full 151,936-token vocabulary at every 8th position of a 272-token text.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np
import pytest
from helpers_engines import kl_per_position, mean_kl, top1_prob

from kldcard.capture.run import capture
from kldcard.capture.store import Capture, open_capture
from kldcard.compare.run import compare

pytestmark = pytest.mark.engines

COMMON = {"positions": "every:8@1", "prefill_chunk": 64, "progress": False}


@pytest.fixture(scope="module")
def captures(tiny_qwen3: dict, engines_text: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Capture]:
    out = tmp_path_factory.mktemp("e2e")
    runs = {
        "hf_f32": ("transformers", tiny_qwen3["hf"], {"dtype": "f32"}),
        "hf_f32_again": ("transformers", tiny_qwen3["hf"], {"dtype": "f32"}),
        "llama_f32": ("llama.cpp", tiny_qwen3["gguf_f32"], {}),
        "llama_f32_again": ("llama.cpp", tiny_qwen3["gguf_f32"], {}),
        "mlx_bf16": ("mlx", tiny_qwen3["hf"], {}),
        "llama_q8_0": ("llama.cpp", tiny_qwen3["gguf_q8_0"], {}),
        "llama_q4_k_m": ("llama.cpp", tiny_qwen3["gguf_q4"], {}),
    }
    caps = {}
    for name, (engine, model, extra) in runs.items():
        capture(engine, model, engines_text, out / name, **COMMON, **extra)
        caps[name] = open_capture(out / name, verify=True)
    return caps


def test_all_engines_saw_the_same_tokens_and_positions(captures):
    ref = captures["hf_f32"]
    assert ref.n_tokens == 272 and ref.n_vocab == 151_936
    assert np.array_equal(ref.positions, np.arange(1, 271, 8))
    for name, cap in captures.items():
        assert cap.manifest.token_ids_sha256 == ref.manifest.token_ids_sha256, name
        assert np.array_equal(cap.token_ids, ref.token_ids), name
        assert np.array_equal(cap.positions, ref.positions), name


def test_distributions_are_peaked_not_flat(captures):
    p1 = top1_prob(captures["hf_f32"])
    # uniform would be 1/151936 ~ 6.6e-6
    assert np.median(p1) > 0.01 and p1.min() > 1e-3


def forward_kl(ref: Capture, cand: Capture):
    """kldcard's own comparison: forward KL(P_ref || P_cand) statistics in nats."""
    return compare(ref, cand, bootstrap=0, verify=False).forward_kl


def test_engines_on_identical_weights_differ_finitely_small_and_nonzero(captures):
    ref = captures["hf_f32"]
    for name, bound in (("llama_f32", 1e-4), ("mlx_bf16", 1e-2)):
        st = forward_kl(ref, captures[name])
        assert st.n_infinite == 0 and np.isfinite(st.max), name
        assert 0.0 < st.mean < bound, (name, st.mean)
        # An independent float64 implementation agrees with kldcard.compare.run.
        assert st.mean == pytest.approx(kl_per_position(ref, captures[name]).mean(), rel=1e-6)
    # Same weights, same F32 arithmetic class: llama.cpp is far closer than the BF16 MLX run.
    assert mean_kl(ref, captures["llama_f32"]) < mean_kl(ref, captures["mlx_bf16"])


def test_two_captures_of_the_same_stack_are_exactly_zero(captures):
    for a, b in (("hf_f32", "hf_f32_again"), ("llama_f32", "llama_f32_again")):
        st = forward_kl(captures[a], captures[b])
        assert st.mean == 0.0 and st.max == 0.0, (a, b)
        assert np.all(kl_per_position(captures[a], captures[b]) == 0.0), (a, b)
        assert np.array_equal(captures[a].raw_rows(0, 5), captures[b].raw_rows(0, 5))


def test_four_bit_is_clearly_worse_than_q8_0(captures):
    ref = captures["llama_f32"]
    q8 = forward_kl(ref, captures["llama_q8_0"]).mean
    q4 = forward_kl(ref, captures["llama_q4_k_m"]).mean
    assert 0.0 < q8 < q4
    assert q4 > 5 * q8, (q8, q4)
    # And both quantizations are further from the reference than another engine is.
    assert q8 > mean_kl(captures["hf_f32"], captures["llama_f32"])


def test_manifests_carry_complete_fingerprints(captures, tiny_qwen3, engines_text):
    text_sha = hashlib.sha256(engines_text.read_bytes()).hexdigest()
    for name, cap in captures.items():
        m = cap.manifest
        s = m.stack
        assert s is not None, name
        assert s.engine in ("transformers", "llama.cpp", "mlx")
        assert s.engine_version and s.backend == "cpu" and s.device and s.device != "unknown"
        assert s.os and s.python and s.kldcard_version and s.libraries
        assert s.attention_backend and s.kv_cache_dtype and s.weights_dtype and s.prefill_chunk == 64
        assert m.text.sha256 == text_sha and m.text.name == "lighthouse.txt"
        assert m.model.files and all(len(v) == 64 for v in m.model.files.values())
        assert m.positions.scheme == "every-n" and m.positions.every_n == 8 and m.positions.offset == 1
        assert m.context.prefill_chunk == 64 and m.context.n_chunks == 1 and m.context.n_ctx == 272
        assert m.truncation.kind == "full" and m.dtype == "bf16"
        assert m.tokens.bos == "none" and m.tokens.add_bos is False
    llama = captures["llama_f32"].manifest.stack
    assert "CPU" in (llama.engine_build or "") and llama.n_ubatch == 64 and llama.threads
    assert llama.attention_backend == "flash-attn off" and llama.kv_cache_dtype == "f16"
    assert captures["llama_q4_k_m"].manifest.model.quantization == "q4_k_m"
    assert captures["llama_q8_0"].manifest.stack.weights_dtype == "q8_0"
    hf = captures["hf_f32"].manifest.stack
    assert hf.attention_backend == "sdpa" and hf.weights_dtype == "f32" and hf.threads
    assert captures["mlx_bf16"].manifest.stack.weights_dtype == "bf16"
    gguf_sha = hashlib.sha256(Path(tiny_qwen3["gguf_f32"]).read_bytes()).hexdigest()
    assert captures["llama_f32"].manifest.model.files == {Path(tiny_qwen3["gguf_f32"]).name: gguf_sha}
