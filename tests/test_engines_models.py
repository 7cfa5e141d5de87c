"""The tiny test models, the fingerprint helpers, and a second architecture (Llama) end to end."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest
from helpers_engines import mean_kl

from kldcard.capture.engines import (
    ENGINES,
    canonical_name,
    installed_engines,
    load_engine,
)
from kldcard.capture.fingerprint import cpu_model, model_file_hashes, sha256_file
from kldcard.capture.run import capture
from kldcard.demo.tiny_models import ARCHS, _round_bf16
from kldcard.errors import UsageError

pytestmark = pytest.mark.engines


def test_gguf_holds_exactly_the_checkpoint_weights(tiny_model):
    """One set of weights: the F32 GGUF and the BF16 safetensors hold the same numbers."""
    import gguf
    from safetensors.torch import load_file

    hf = load_file(str(tiny_model["hf"] / "model.safetensors"))
    emb_hf = hf["model.embed_tokens.weight"].float().numpy()
    reader = gguf.GGUFReader(str(tiny_model["gguf_f32"]))
    t = {x.name: x for x in reader.tensors}
    emb_gguf = np.asarray(t["token_embd.weight"].data).reshape(emb_hf.shape)
    assert np.array_equal(emb_hf, emb_gguf)
    norm = np.asarray(t["blk.0.attn_norm.weight"].data)
    assert np.array_equal(norm, hf["model.layers.0.input_layernorm.weight"].float().numpy())
    cfg = json.loads((tiny_model["hf"] / "config.json").read_text())
    spec = ARCHS[tiny_model["arch"]]
    assert cfg["vocab_size"] == spec.vocab_size and cfg["tie_word_embeddings"] is True
    assert cfg["hidden_size"] % 256 == 0  # every matrix row fits llama.cpp's 256-wide K-quant blocks


def test_bf16_rounding_is_nearest_even():
    x = np.array([1.0, 1.00390625, 1.01171875, -2.5, 3.0e38], dtype=np.float32)
    # 1+2^-8 is a tie between 1 and 1+2^-7: rounds to even (1.0); 1+3*2^-8 rounds up to 1+2^-6.
    assert _round_bf16(x).tolist()[:4] == [1.0, 1.0, 1.015625, -2.5]


def test_the_three_engines_agree_on_the_llama_architecture(tiny_llama, engines_text, tmp_path):
    common = {"positions": "every:16", "prefill_chunk": 100, "progress": False}
    caps = {
        "hf": capture("transformers", tiny_llama["hf"], engines_text, tmp_path / "hf", dtype="f32", **common),
        "llama": capture("llama.cpp", tiny_llama["gguf_f32"], engines_text, tmp_path / "llama", **common),
        "mlx": capture("mlx", tiny_llama["hf"], engines_text, tmp_path / "mlx", **common),
        "q4": capture("llama.cpp", tiny_llama["gguf_q4"], engines_text, tmp_path / "q4", **common),
    }
    ids = caps["hf"].token_ids
    assert len(ids) == 265 and caps["hf"].n_vocab == 128_256
    for cap in caps.values():
        assert np.array_equal(cap.token_ids, ids)
    kl_llama, kl_mlx, kl_q4 = (mean_kl(caps["hf"], caps[k]) for k in ("llama", "mlx", "q4"))
    assert 0 < kl_llama < 1e-4 and 0 < kl_mlx < 1e-2
    assert kl_q4 > 10 * kl_mlx


def test_fingerprint_helpers(tiny_qwen3):
    cpuinfo = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    assert cpu_model() and cpu_model() in cpuinfo
    hashes = model_file_hashes(tiny_qwen3["hf"])
    assert {"config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json"} <= set(hashes)
    cfg = tiny_qwen3["hf"] / "config.json"
    assert hashes["config.json"] == hashlib.sha256(cfg.read_bytes()).hexdigest() == sha256_file(cfg)
    assert model_file_hashes(tiny_qwen3["gguf_q8_0"]) == {tiny_qwen3["gguf_q8_0"].name: sha256_file(tiny_qwen3["gguf_q8_0"])}


def test_engine_registry():
    assert installed_engines() == list(ENGINES)
    assert canonical_name("hf") == "transformers" and canonical_name("LLAMA") == "llama.cpp"
    with pytest.raises(UsageError, match="unknown engine"):
        canonical_name("vllm")
    for name in ENGINES:
        fields = load_engine(name).machine_fingerprint()
        assert fields["engine"] == name and fields["backend"] == "cpu"
