"""What every engine adapter provides to :func:`kldcard.capture.run.capture`.

An adapter owns one loaded model. The capture loop asks it to tokenize the text, to start a fresh
sequence (empty KV cache) for each context window, and to feed the window in prefill chunks,
returning full-vocabulary float32 logits only at the requested offsets of each chunk — computed by
the engine's own code path, with the same kernels a user of that engine would run.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np

from kldcard.schema import StackFingerprint


@dataclass
class EngineSettings:
    """Settings that change an engine's arithmetic; every one ends up in the fingerprint.

    ``None`` means "the engine's default"; the adapter records the value it actually used.
    """

    dtype: str | None = None  # transformers/mlx compute dtype: bf16, f16, f32
    threads: int | None = None
    prefill_chunk: int = 512  # tokens per forward call (llama.cpp: n_batch)
    device: str | None = None  # transformers: cpu, cuda, cuda:1, mps
    attn_implementation: str | None = None  # transformers: sdpa, eager, flash_attention_2
    n_batch: int | None = None  # llama.cpp; defaults to prefill_chunk
    n_ubatch: int | None = None  # llama.cpp; defaults to min(512, n_batch)
    flash_attn: bool | None = None  # llama.cpp
    kv_type: str | None = None  # llama.cpp KV-cache type: f16, f32, bf16, q8_0, q4_0
    n_gpu_layers: int | None = None  # llama.cpp; 0 on CPU builds

    def as_dict(self) -> dict[str, Any]:
        return {k: v for k, v in asdict(self).items() if v is not None}


@dataclass(frozen=True)
class TokenizedText:
    """The ids an engine feeds itself for a text, and how BOS was handled."""

    ids: np.ndarray  # int32
    add_bos: bool  # the tokenizer prepended BOS
    bos_id: int | None

    def bos_label(self) -> str:
        return "added" if self.add_bos else "none"


DTYPE_ALIASES = {
    "bf16": "bf16",
    "bfloat16": "bf16",
    "f16": "f16",
    "fp16": "f16",
    "float16": "f16",
    "half": "f16",
    "f32": "f32",
    "fp32": "f32",
    "float32": "f32",
    "float": "f32",
}


def normalize_dtype(name: str | None) -> str | None:
    """``bfloat16`` -> ``bf16`` etc.; unknown names are returned lower-cased."""
    if name is None:
        return None
    return DTYPE_ALIASES.get(name.lower(), name.lower())


class EngineModel(ABC):
    """One model loaded in one engine."""

    engine: str  # "transformers", "llama.cpp", "mlx"
    model_format: str  # "transformers", "gguf"
    n_vocab: int

    @abstractmethod
    def tokenize(self, text: str) -> TokenizedText:
        """The engine's own tokenization of ``text`` (with BOS as the engine adds it)."""

    @abstractmethod
    def begin_sequence(self, capacity: int) -> None:
        """Start an empty sequence (fresh KV cache) able to hold ``capacity`` tokens."""

    @abstractmethod
    def forward(self, token_ids: np.ndarray, start: int, keep: np.ndarray) -> np.ndarray:
        """Append ``token_ids`` (int32) at sequence positions ``start, start+1, ...`` and return
        float32 logits ``[len(keep), n_vocab]`` at the chunk offsets ``keep`` (int64, increasing).
        They may be a view of the engine's own buffer (llama.cpp's), valid until the next call: the
        capture loop hands them to its sink, which writes or compares them, before calling again."""

    @abstractmethod
    def fingerprint(self) -> StackFingerprint:
        """The stack coordinate as used (after the model is loaded)."""

    @abstractmethod
    def model_meta(self) -> dict[str, Any]:
        """``{"name", "path", "format", "files", "dtype", "quantization"}`` for the manifest
        (``files`` maps file name to sha256)."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release engine resources."""

    def __enter__(self) -> EngineModel:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
