"""Bytes and bits per weight of every model file the tests build, checked against the file's own tensor
table as an independent reader (gguf-py's GGUFReader; safetensors' own reader) sees it."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np
import pytest

from kldcard.demo.tiny_models import quantize_gguf
from kldcard.stack.model_size import GGML_BLOCKS, gguf_size, model_size, safetensors_size


def _reader_figures(path: Path) -> tuple[int, int]:
    """(tensor bytes, parameters) from gguf-py's reader of the tensor table."""
    import gguf

    r = gguf.GGUFReader(str(path))
    return sum(int(t.n_bytes) for t in r.tensors), sum(int(t.n_elements) for t in r.tensors)


def _check_gguf(path: Path) -> dict:
    size = gguf_size(path)
    assert size is not None, path
    tbytes, params = _reader_figures(path)
    assert size["bytes"] == os.stat(path).st_size
    assert size["tensor_bytes"] == tbytes
    assert size["parameters"] == params
    assert size["bits_per_weight"] == pytest.approx(8 * tbytes / params, rel=1e-12)
    assert size["source"] == "gguf tensor table"
    return size


@pytest.mark.parametrize("key", ["gguf_f32", "gguf_q8_0", "gguf_q4_k_m"])
def test_gguf_bits_per_weight_and_bytes_match_the_tensor_table(tiny_qwen3, tiny_qwen3_lm, key) -> None:
    random_size = _check_gguf(tiny_qwen3[key])
    lm_size = _check_gguf(tiny_qwen3_lm[key])
    # the predictive model has its own output head: more parameters than the tied random model
    assert lm_size["parameters"] > random_size["parameters"]
    # norms stay F32 (a few hundred weights of ~80 million): a hair above the block types' own bits
    expected = {"gguf_f32": (32.0, 32.0), "gguf_q8_0": (8.5, 8.51), "gguf_q4_k_m": (4.5, 6.6)}[key]
    assert expected[0] - 1e-9 <= lm_size["bits_per_weight"] <= expected[1] + 1e-9


@pytest.mark.parametrize("key", ["gguf_f32", "gguf_q8_0", "gguf_q4_k_m"])
def test_llama_architecture_files_too(tiny_llama, key) -> None:
    size = _check_gguf(tiny_llama[key])
    assert size["parameters"] > 128_256 * 256  # the embedding alone


def test_every_quantization_the_tests_build(tiny_qwen3, tmp_path) -> None:
    # q4_0 is the one other type tests quantize to (kldcard.demo.tiny_models.QUANT_FTYPES)
    dst = tmp_path / "tiny-q4_0.gguf"
    quantize_gguf(tiny_qwen3["gguf_f32"], dst, "q4_0")
    size = _check_gguf(dst)
    # Q4_0 blocks are 4.5 bits; llama.cpp keeps the tied embedding/output matrix (most of a tiny model) at Q6_K
    assert 4.5 <= size["bits_per_weight"] < 6.6


def test_block_table_agrees_with_gguf_py() -> None:
    import gguf

    for code, (per_block, nbytes) in GGML_BLOCKS.items():
        qtype = gguf.GGMLQuantizationType(code)
        assert gguf.GGML_QUANT_SIZES[qtype] == (per_block, nbytes), qtype.name


def test_transformers_directory_from_safetensors_headers(tiny_qwen3_lm) -> None:
    from safetensors import safe_open

    d = Path(tiny_qwen3_lm["hf"])
    params = tbytes = 0
    for f in d.glob("*.safetensors"):
        with safe_open(str(f), "pt") as st:
            for k in st.keys():
                t = st.get_tensor(k)
                params += t.numel()
                tbytes += t.numel() * t.element_size()
    size = model_size(d)
    assert size is not None
    assert (size["parameters"], size["tensor_bytes"]) == (params, tbytes)
    assert size["bits_per_weight"] == pytest.approx(16.0)  # BF16
    assert size["bytes"] == sum(f.stat().st_size for f in d.glob("*.safetensors"))


def test_mlx_packed_weights_count_their_logical_elements(tmp_path) -> None:
    from safetensors.numpy import save_file

    # an MLX 4-bit layer: 64 rows of 256 inputs packed 8 per uint32, one fp16 scale and bias per 64
    save_file({
        "layer.weight": np.zeros((64, 32), dtype=np.uint32),
        "layer.scales": np.ones((64, 4), dtype=np.float16),
        "layer.biases": np.zeros((64, 4), dtype=np.float16),
        "norm.weight": np.ones(256, dtype=np.float16),
    }, str(tmp_path / "model.safetensors"))
    (tmp_path / "config.json").write_text('{"quantization": {"group_size": 64, "bits": 4}}', encoding="utf-8")
    size = safetensors_size(tmp_path)
    assert size is not None
    assert size["parameters"] == 64 * 256 + 256
    assert size["tensor_bytes"] == 64 * 32 * 4 + 2 * 64 * 4 * 2 + 256 * 2
    assert size["bits_per_weight"] == pytest.approx(8 * size["tensor_bytes"] / size["parameters"])
    assert size["source"].startswith("mlx")


def test_not_a_gguf_is_a_value_error(tmp_path) -> None:
    bad = tmp_path / "x.gguf"
    bad.write_bytes(b"NOPE" + b"\0" * 40)
    with pytest.raises(ValueError):
        gguf_size(bad)
