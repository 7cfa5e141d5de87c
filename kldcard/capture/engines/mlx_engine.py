"""MLX adapter: an mlx-lm model with its prompt (KV) cache, chunked prefill.

The transformer body runs on the whole chunk exactly as ``mlx_lm.generate`` runs a prompt; the
output projection (``lm_head``, or the tied embedding's ``as_linear``) is applied to the hidden
states of the sampled positions only — the same slicing ``generate`` does for the last token. For
architectures with extra output processing (e.g. logit soft-capping) the full model is called and
its logits are sliced instead. Runs on Apple GPUs (Metal) and, with ``mlx[cpu]``, on Linux CPUs.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import mlx.core as mx
import mlx_lm
import numpy as np
from mlx_lm.models.cache import make_prompt_cache

from kldcard.capture import fingerprint as fp
from kldcard.capture.engines.base import (
    EngineModel,
    EngineSettings,
    TokenizedText,
    normalize_dtype,
)
from kldcard.errors import InputError, UsageError
from kldcard.schema import StackFingerprint

REQUIRES = ("mlx.core", "mlx_lm")

_MX_DTYPES = {"bf16": mx.bfloat16, "f16": mx.float16, "f32": mx.float32}
_DTYPE_NAMES = {v: k for k, v in _MX_DTYPES.items()}


def _version(pkg: str) -> str:
    return fp.package_versions((pkg,)).get(pkg, "unknown")


def machine_fingerprint(settings: EngineSettings | None = None) -> dict[str, Any]:
    """Stack fields knowable without a model (``kldcard stack``)."""
    s = settings or EngineSettings()
    dev = mx.default_device()
    on_gpu = dev.type == mx.gpu and mx.metal.is_available()
    fields: dict[str, Any] = {
        "engine": "mlx",
        "engine_version": f"mlx-lm {_version('mlx-lm')}",
        "engine_build": f"mlx {mx.__version__}",
        **fp.cpu_device_fields(),
        "attention_backend": "mlx.fast.scaled_dot_product_attention",
        "tensor_parallel": 1,
        "prefill_chunk": s.prefill_chunk,
        # mlx does not expose a CPU thread count; null means "mlx's default".
        "threads": None,
        **fp.machine_fields(),
    }
    if on_gpu:
        info = mx.metal.device_info() if hasattr(mx.metal, "device_info") else {}
        chip = fp.apple_chip_family() or str(info.get("device_name", "Apple Silicon"))
        arch = info.get("architecture")
        fields.update(backend="metal", device=f"{chip} ({arch})" if arch else chip, chip_family=chip)
    return fields


class MlxModel(EngineModel):
    engine = "mlx"
    model_format = "transformers"

    def __init__(self, path: str | Path, settings: EngineSettings):
        self.path = Path(path)
        if not (self.path / "config.json").is_file():
            raise InputError(f"{self.path} is not a model directory mlx-lm can load (no config.json)")
        self.settings = settings
        dtype_name = normalize_dtype(settings.dtype)
        if dtype_name is not None and dtype_name not in _MX_DTYPES:
            raise UsageError(f"--dtype {settings.dtype!r} is not supported by mlx; use bf16, f16 or f32")
        try:
            self.model, self.tokenizer = mlx_lm.load(str(self.path))
        except (OSError, ValueError, KeyError) as exc:
            raise InputError(f"mlx-lm cannot load {self.path}: {str(exc).splitlines()[0]}") from exc
        if dtype_name is not None:
            self.model.set_dtype(_MX_DTYPES[dtype_name])
        self._dtype = self._weights_dtype()
        inner = getattr(self.model, "model", None)
        args = getattr(self.model, "args", None)
        capped = bool(getattr(args, "final_logit_softcapping", None))
        if inner is not None and not capped and hasattr(self.model, "lm_head"):
            self._head = self.model.lm_head
        elif inner is not None and not capped and getattr(args, "tie_word_embeddings", False):
            self._head = inner.embed_tokens.as_linear
        else:
            self._head = None  # call the full model, slice its logits
        self.n_vocab = int(self._n_vocab())
        self._cache: Any = None

    def _weights_dtype(self) -> str:
        from mlx.utils import tree_flatten

        for _, v in tree_flatten(self.model.parameters()):
            if mx.issubdtype(v.dtype, mx.floating):
                return _DTYPE_NAMES.get(v.dtype, str(v.dtype))
        return "unknown"

    def _n_vocab(self) -> int:
        probe = self.model(mx.array([[0]]))
        return probe.shape[-1]

    def tokenize(self, text: str) -> TokenizedText:
        hf = getattr(self.tokenizer, "_tokenizer", self.tokenizer)
        ids = list(self.tokenizer.encode(text))
        plain = list(hf(text, add_special_tokens=False)["input_ids"])
        bos = getattr(hf, "bos_token_id", None)
        add_bos = len(ids) > len(plain) and bos is not None and ids[:1] == [bos]
        if len(ids) != len(plain) + int(add_bos):
            ids = ([bos] if add_bos else []) + plain
        return TokenizedText(np.asarray(ids, dtype=np.int32), bool(add_bos), bos)

    def begin_sequence(self, capacity: int) -> None:
        self._cache = make_prompt_cache(self.model)

    def forward(self, token_ids: np.ndarray, start: int, keep: np.ndarray) -> np.ndarray:
        inputs = mx.array(np.asarray(token_ids, dtype=np.int32))[None]
        idx = mx.array(np.asarray(keep, dtype=np.int32))
        if self._head is not None:
            h = self.model.model(inputs, cache=self._cache)
            logits = self._head(h[:, idx, :]) if len(keep) else None
        else:
            full = self.model(inputs, cache=self._cache)
            logits = full[:, idx, :] if len(keep) else None
        # Evaluate the cache every chunk so the lazy graph (and memory) stays bounded by the chunk.
        mx.eval([c.state for c in self._cache] + ([logits] if logits is not None else []))
        if logits is None:
            return np.zeros((0, self.n_vocab), dtype=np.float32)
        return np.array(logits[0].astype(mx.float32), copy=True)

    def fingerprint(self) -> StackFingerprint:
        fields = machine_fingerprint(self.settings)
        fields.update(weights_dtype=self._dtype, compute_dtype=self._dtype, kv_cache_dtype=self._dtype, n_ubatch=None)
        return StackFingerprint(**fields)

    def model_meta(self) -> dict[str, Any]:
        cfg = json.loads((self.path / "config.json").read_text(encoding="utf-8"))
        quant = cfg.get("quantization") or cfg.get("quantization_config")
        return {
            "name": self.path.name if self.path.name != "hf" else self.path.parent.name,
            "path": str(self.path.resolve()),
            "format": "mlx" if quant and "group_size" in quant else "transformers",
            "files": fp.model_file_hashes(self.path),
            "size": fp.model_size(self.path),
            "dtype": self._dtype,
            "quantization": json.dumps(quant, sort_keys=True) if quant else None,
        }

    def close(self) -> None:
        self._cache = None


def open_model(path: str | Path, settings: EngineSettings) -> MlxModel:
    return MlxModel(path, settings)
