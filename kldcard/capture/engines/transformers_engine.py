"""transformers adapter: ``AutoModelForCausalLM`` with a KV cache, prefill in recorded chunks.

Logits at the sampled positions only, through the model's own ``logits_to_keep`` argument (the
hidden states are sliced before ``lm_head``, exactly as ``generate`` does; older transformers: the
body's hidden states, then the head on those rows), so the arithmetic is the engine's and the memory
is ``len(keep) x n_vocab`` per chunk rather than ``chunk x n_vocab`` — never ``n_ctx x n_vocab``
(``tests/test_long_context_memory.py``). Applying the head to the scored rows alone gives the same
logits as the full head sliced afterwards, bit for bit on the tiny models on CPU
(``tests/test_engines_head_rows.py``).
"""

from __future__ import annotations

import inspect
import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
import transformers
from transformers import AutoModelForCausalLM, AutoTokenizer

from kldcard.capture import fingerprint as fp
from kldcard.capture.engines.base import (
    EngineModel,
    EngineSettings,
    TokenizedText,
    normalize_dtype,
)
from kldcard.errors import InputError, UsageError
from kldcard.schema import StackFingerprint

REQUIRES = ("torch", "transformers")

_TORCH_DTYPES = {"bf16": torch.bfloat16, "f16": torch.float16, "f32": torch.float32}
_DTYPE_NAMES = {v: k for k, v in _TORCH_DTYPES.items()}


def _default_device() -> str:
    return "cuda" if torch.cuda.is_available() else "cpu"


def machine_fingerprint(settings: EngineSettings | None = None) -> dict[str, Any]:
    """Stack fields knowable without a model (``kldcard stack``)."""
    s = settings or EngineSettings()
    device = s.device or _default_device()
    if s.threads:
        torch.set_num_threads(s.threads)
    fields: dict[str, Any] = {
        "engine": "transformers",
        "engine_version": transformers.__version__,
        "engine_build": f"torch {torch.__version__}",
        **fp.cpu_device_fields(),
        "attention_backend": s.attn_implementation or "sdpa",
        "tensor_parallel": 1,
        "prefill_chunk": s.prefill_chunk,
        "threads": torch.get_num_threads(),
        **fp.machine_fields(),
    }
    if device.startswith("cuda") and torch.cuda.is_available():
        idx = torch.device(device).index or 0
        fields.update(fp.torch_cuda_details(idx), chip_family=None)
        fields["threads"] = None  # the GPU does the work
    elif device == "mps":
        fields.update(backend="mps", device=fp.apple_chip_family() or "Apple GPU")
        fields["threads"] = None
    return fields


class TransformersModel(EngineModel):
    engine = "transformers"
    model_format = "transformers"

    def __init__(self, path: str | Path, settings: EngineSettings):
        self.path = Path(path)
        if not (self.path / "config.json").is_file():
            raise InputError(f"{self.path} is not a transformers model directory (no config.json)")
        self.settings = settings
        if settings.threads:
            torch.set_num_threads(settings.threads)
        dtype_name = normalize_dtype(settings.dtype)
        if dtype_name is not None and dtype_name not in _TORCH_DTYPES:
            raise UsageError(f"--dtype {settings.dtype!r} is not supported by transformers; use bf16, f16 or f32")
        self.device = settings.device or _default_device()
        if self.device.startswith("cuda") and not torch.cuda.is_available():
            raise UsageError(f"--device {self.device}: torch {torch.__version__} sees no CUDA device")
        if self.device == "mps" and not torch.backends.mps.is_available():
            raise UsageError("--device mps: this torch has no Metal (MPS) device")
        attn = settings.attn_implementation or "sdpa"
        # kldcard shows its own progress bar; transformers' loading bar would interleave with it.
        transformers.utils.logging.disable_progress_bar()
        try:
            self.model = AutoModelForCausalLM.from_pretrained(
                self.path,
                dtype=_TORCH_DTYPES[dtype_name] if dtype_name else "auto",
                attn_implementation=attn,
            )
        except (OSError, ValueError, ImportError) as exc:
            raise InputError(f"transformers cannot load {self.path}: {str(exc).splitlines()[0]}") from exc
        self.model.to(self.device).eval()
        self.tokenizer = AutoTokenizer.from_pretrained(self.path)
        self.attn = getattr(self.model.config, "_attn_implementation", None) or attn
        self.n_vocab = int(self.model.get_output_embeddings().weight.shape[0])
        params = inspect.signature(self.model.forward).parameters
        # transformers 5 renamed past_key_values -> cache; the old name warns.
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        self._has_keep = "logits_to_keep" in params
        self._cache: Any = None

    # -- tokens -------------------------------------------------------------------------------

    def tokenize(self, text: str) -> TokenizedText:
        ids = self.tokenizer(text, add_special_tokens=True)["input_ids"]
        plain = self.tokenizer(text, add_special_tokens=False)["input_ids"]
        bos = self.tokenizer.bos_token_id
        add_bos = len(ids) > len(plain) and bos is not None and ids[:1] == [bos]
        if len(ids) != len(plain) + int(add_bos):
            # An EOS or other suffix: kldcard scores the text itself, so keep only BOS + text.
            ids = ([bos] if add_bos else []) + list(plain)
        return TokenizedText(np.asarray(ids, dtype=np.int32), bool(add_bos), bos)

    # -- forward ------------------------------------------------------------------------------

    def begin_sequence(self, capacity: int) -> None:
        from transformers import DynamicCache

        try:
            self._cache = DynamicCache(config=self.model.config)
        except TypeError:  # transformers 4.x
            self._cache = DynamicCache()

    @torch.inference_mode()
    def forward(self, token_ids: np.ndarray, start: int, keep: np.ndarray) -> np.ndarray:
        n = len(token_ids)
        input_ids = torch.from_numpy(np.asarray(token_ids, dtype=np.int64)).to(self.device)[None]
        position_ids = torch.arange(start, start + n, device=self.device)[None]
        kwargs: dict[str, Any] = {self._cache_kw: self._cache, "use_cache": True, "position_ids": position_ids}
        keep_t = torch.from_numpy(np.asarray(keep, dtype=np.int64)).to(self.device)
        if self._has_keep:
            kwargs["logits_to_keep"] = keep_t
            out = self.model(input_ids=input_ids, **kwargs)
            self._cache = getattr(out, "cache", None) or out.past_key_values
            return out.logits[0].float().cpu().numpy()
        # transformers without logits_to_keep (< 4.50): the body to hidden states, then the output
        # head on the scored rows only — what logits_to_keep does inside the model — so a chunk never
        # holds chunk x n_vocab logits. Models with extra output processing get the full call.
        body, head = getattr(self.model, "model", None), self.model.get_output_embeddings()
        if body is None or head is None or getattr(self.model.config, "final_logit_softcapping", None):
            out = self.model(input_ids=input_ids, **kwargs)
            self._cache = getattr(out, "cache", None) or out.past_key_values
            return out.logits[0][keep_t].float().cpu().numpy()
        out = body(input_ids=input_ids, **kwargs)
        self._cache = getattr(out, "cache", None) or out.past_key_values
        return head(out.last_hidden_state[:, keep_t, :])[0].float().cpu().numpy()

    # -- provenance ---------------------------------------------------------------------------

    def _dtype(self) -> str:
        return _DTYPE_NAMES.get(self.model.dtype, str(self.model.dtype).replace("torch.", ""))

    def fingerprint(self) -> StackFingerprint:
        s = self.settings
        fields = machine_fingerprint(EngineSettings(**{**s.as_dict(), "device": self.device}))
        dtype = self._dtype()
        fields.update(
            attention_backend=self.attn,
            weights_dtype=dtype,
            compute_dtype=dtype,
            kv_cache_dtype=dtype,
            prefill_chunk=s.prefill_chunk,
            n_ubatch=None,
        )
        return StackFingerprint(**fields)

    def model_meta(self) -> dict[str, Any]:
        cfg = json.loads((self.path / "config.json").read_text(encoding="utf-8"))
        quant = cfg.get("quantization_config") or cfg.get("quantization")
        return {
            "name": self.path.name if self.path.name != "hf" else self.path.parent.name,
            "path": str(self.path.resolve()),
            "format": "transformers",
            "files": fp.model_file_hashes(self.path),
            "size": fp.model_size(self.path),
            "dtype": self._dtype(),
            "quantization": json.dumps(quant, sort_keys=True) if quant else None,
        }

    def close(self) -> None:
        self._cache = None


def open_model(path: str | Path, settings: EngineSettings) -> TransformersModel:
    return TransformersModel(path, settings)
