"""llama.cpp adapter through llama-cpp-python's low-level C API.

Each prefill chunk is one ``llama_decode`` call on a ``llama_batch`` of ``n_batch`` tokens whose
``logits`` flags are set only at the sampled positions, so llama.cpp computes the output layer
only there and the logits buffer holds ``len(keep)`` rows (never ``logits_all`` over the text).
The context's ``n_ubatch``, threads, flash-attention setting and KV-cache type are set explicitly
and recorded, because each changes the arithmetic.

Tokenization uses llama.cpp's own tokenizer with ``parse_special=True`` (special-token strings in
the text become their ids), which is what transformers and mlx-lm do, so the three agree;
llama-perplexity tokenizes with ``parse_special=False`` and the protocol capture asks for that.

``begin_batch_layout`` / ``decode_sequences`` reproduce llama-perplexity's batches (several chunks per
``llama_decode``, one sequence each, a non-unified multi-stream KV cache): the ``Llama`` class cannot
(it has no ``n_seq_max`` and always decodes sequence 0), so this adapter uses the C API throughout.
"""

from __future__ import annotations

import atexit
import ctypes
import os
import sys
from pathlib import Path
from typing import Any

import llama_cpp
import numpy as np

from kldcard.capture import fingerprint as fp
from kldcard.capture.engines.base import EngineModel, EngineSettings, TokenizedText
from kldcard.errors import InputError, UsageError
from kldcard.schema import StackFingerprint

REQUIRES = ("llama_cpp",)

KV_TYPES = {
    name: getattr(llama_cpp, f"GGML_TYPE_{name.upper()}")
    for name in ("f32", "f16", "bf16", "q8_0", "q4_0", "q4_1", "q5_0", "q5_1", "iq4_nl")
    if hasattr(llama_cpp, f"GGML_TYPE_{name.upper()}")
}
_FTYPE_NAMES = {
    getattr(llama_cpp, n): n.removeprefix("LLAMA_FTYPE_").removeprefix("MOSTLY_").removeprefix("ALL_").lower()
    for n in dir(llama_cpp)
    if n.startswith("LLAMA_FTYPE_") and n != "LLAMA_FTYPE_GUESSED"
}
_UNQUANTIZED = ("f32", "f16", "bf16")


def _close_devnull() -> None:
    """llama-cpp-python opens /dev/null at import and never closes it (a ResourceWarning at exit)."""
    utils = sys.modules.get("llama_cpp._utils")
    for name in ("outnull_file", "errnull_file"):
        f = getattr(utils, name, None)
        if f is not None and not f.closed:
            f.close()


atexit.register(_close_devnull)
_backend_ready = False


@llama_cpp.llama_log_callback
def _log_to_stderr_if_debug(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
    if _DEBUG:
        sys.stderr.write(text.decode("utf-8", "replace"))


_DEBUG = bool(os.environ.get("KLDCARD_DEBUG"))


def quiet_logs() -> None:
    """Silence llama.cpp's load/decode chatter unless KLDCARD_DEBUG is set (the callback object is
    module-level so it outlives every call from C)."""
    llama_cpp.llama_log_set(_log_to_stderr_if_debug, ctypes.c_void_p(0))


def _init_backend() -> None:
    global _backend_ready
    if not _backend_ready:
        quiet_logs()
        llama_cpp.llama_backend_init()
        _backend_ready = True


def system_info() -> str:
    return llama_cpp.llama_print_system_info().decode("utf-8", "replace").strip().rstrip("|").strip()


def _gpu_fields(info: str) -> dict[str, Any]:
    """Device fields when layers are offloaded to a GPU backend."""
    upper = info.upper()
    if "METAL" in upper:
        return {"backend": "metal", "device": fp.apple_chip_family() or "Apple GPU", "chip_family": fp.apple_chip_family() or "Apple Silicon"}
    if "CUDA" in upper or "HIP" in upper or "ROCM" in upper:
        try:
            import torch

            if torch.cuda.is_available():
                return fp.torch_cuda_details(0)
        except ImportError:
            pass
        return {
            "backend": "rocm" if ("HIP" in upper or "ROCM" in upper) else "cuda",
            "device": "unknown (install torch to record the GPU)",
            "sm_count": 0,
            "compute_capability": "unknown",
            "driver_version": fp.nvidia_driver_version() or "unknown",
            "cuda_version": "unknown",
        }
    if "VULKAN" in upper:
        return {"backend": "vulkan", "device": "unknown"}
    return fp.cpu_device_fields()


def physical_cores() -> int:
    """The thread count llama.cpp's common code picks when none is given (``-t -1`` →
    ``common_cpu_get_num_math``): physical cores, counted as distinct ``thread_siblings`` sets under
    /sys (all CPUs, not this process's affinity). Elsewhere llama.cpp falls back to the logical count
    (≤ 4) or half of it, as here. Hybrid Intel CPUs, where llama.cpp counts only performance cores
    (cpuid), are not detected: pass --threads there."""
    siblings: set[str] = set()
    cpu = 0
    while True:
        try:
            with open(f"/sys/devices/system/cpu/cpu{cpu}/topology/thread_siblings") as fh:
                siblings.add(fh.readline())
        except OSError:
            break
        cpu += 1
    if siblings:
        return len(siblings)
    n = os.cpu_count() or 0
    return (n if n <= 4 else n // 2) if n > 0 else 4


def _resolved(s: EngineSettings) -> dict[str, Any]:
    n_batch = s.n_batch or s.prefill_chunk
    return {
        "n_batch": n_batch,
        "n_ubatch": min(s.n_ubatch or 512, n_batch),
        "threads": s.threads or fp.cpu_count(),
        "flash_attn": bool(s.flash_attn),
        "kv_type": (s.kv_type or "f16").lower(),
        "n_gpu_layers": s.n_gpu_layers if s.n_gpu_layers is not None else (-1 if llama_cpp.llama_supports_gpu_offload() else 0),
    }


def machine_fingerprint(settings: EngineSettings | None = None) -> dict[str, Any]:
    """Stack fields knowable without a model (``kldcard stack``)."""
    s = settings or EngineSettings()
    r = _resolved(s)
    info = system_info()
    on_gpu = r["n_gpu_layers"] != 0 and llama_cpp.llama_supports_gpu_offload()
    fields = {
        "engine": "llama.cpp",
        "engine_version": f"llama-cpp-python {llama_cpp.__version__}",
        "engine_build": info,
        **(_gpu_fields(info) if on_gpu else fp.cpu_device_fields()),
        "attention_backend": f"flash-attn {'on' if r['flash_attn'] else 'off'}",
        "tensor_parallel": 1,
        "kv_cache_dtype": r["kv_type"],
        "prefill_chunk": r["n_batch"],
        "n_ubatch": r["n_ubatch"],
        "threads": r["threads"],
        **fp.machine_fields(),
    }
    return fields


class LlamaCppModel(EngineModel):
    engine = "llama.cpp"
    model_format = "gguf"

    def __init__(self, path: str | Path, settings: EngineSettings):
        self.path = Path(path)
        if not self.path.is_file():
            raise InputError(f"{self.path} is not a GGUF file")
        if settings.dtype:
            raise UsageError("--dtype does not apply to llama.cpp (the GGUF fixes the weights' types); use --kv-type")
        self.settings, self.r = settings, _resolved(settings)
        if self.r["kv_type"] not in KV_TYPES:
            raise UsageError(f"--kv-type {self.r['kv_type']!r} is not one of {', '.join(KV_TYPES)}")
        _init_backend()
        mparams = llama_cpp.llama_model_default_params()
        mparams.n_gpu_layers = self.r["n_gpu_layers"]
        self.model = llama_cpp.llama_model_load_from_file(str(self.path).encode(), mparams)
        if not self.model:
            raise InputError(f"llama.cpp cannot load {self.path} (not a valid GGUF for this build)")
        self.vocab = llama_cpp.llama_model_get_vocab(self.model)
        self.n_vocab = int(llama_cpp.llama_vocab_n_tokens(self.vocab))
        self.ctx: Any = None
        self.n_ctx = 0
        self.batch: Any = None
        self.layout: Any = None  # a LlamaPerplexityBatching once begin_batch_layout ran

    def tokenize(self, text: str, parse_special: bool = True) -> TokenizedText:
        """llama.cpp's tokenization with ``add_special`` (BOS when the vocabulary adds it);
        ``parse_special=False`` reads special-token strings as plain text, as llama-perplexity does."""
        data = text.encode("utf-8")
        cap = len(data) + 16
        buf = (llama_cpp.llama_token * cap)()
        n = llama_cpp.llama_tokenize(self.vocab, data, len(data), buf, cap, True, parse_special)
        if n < 0:
            cap = -n
            buf = (llama_cpp.llama_token * cap)()
            n = llama_cpp.llama_tokenize(self.vocab, data, len(data), buf, cap, True, parse_special)
        ids = np.ctypeslib.as_array(buf)[:n].astype(np.int32)
        add_bos = bool(llama_cpp.llama_vocab_get_add_bos(self.vocab))
        bos = int(llama_cpp.llama_vocab_bos(self.vocab))
        return TokenizedText(ids, add_bos and n > 0 and int(ids[0]) == bos, bos if bos >= 0 else None)

    def _make_context(self, capacity: int) -> None:
        self._free_context()
        r = self.r
        cp = llama_cpp.llama_context_default_params()
        cp.n_ctx = capacity
        cp.n_batch = r["n_batch"]
        cp.n_ubatch = r["n_ubatch"]
        cp.n_seq_max = 1
        cp.n_threads = cp.n_threads_batch = r["threads"]
        cp.flash_attn_type = (
            llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED if r["flash_attn"] else llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        )
        cp.type_k = cp.type_v = KV_TYPES[r["kv_type"]]
        cp.embeddings = False
        cp.no_perf = True
        self.ctx = llama_cpp.llama_init_from_model(self.model, cp)
        if not self.ctx:
            raise InputError(
                f"llama.cpp cannot create a context of {capacity} tokens with these settings "
                f"(n_batch {r['n_batch']}, n_ubatch {r['n_ubatch']}, kv {r['kv_type']}, flash-attn {r['flash_attn']})"
            )
        self.n_ctx = int(llama_cpp.llama_n_ctx(self.ctx))
        self.batch = llama_cpp.llama_batch_init(r["n_batch"], 0, 1)

    def begin_sequence(self, capacity: int) -> None:
        if self.ctx is None or self.n_ctx < capacity:
            self._make_context(capacity)
        else:
            llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(self.ctx), True)

    def forward(self, token_ids: np.ndarray, start: int, keep: np.ndarray) -> np.ndarray:
        n = len(token_ids)
        if n > self.r["n_batch"]:
            raise ValueError(f"chunk of {n} tokens exceeds n_batch {self.r['n_batch']}")
        b = self.batch
        flags = np.zeros(n, dtype=np.int8)
        flags[np.asarray(keep, dtype=np.int64)] = 1
        # Bulk-copy the arrays into the batch's C buffers (the numpy sources are bound to names so
        # they stay alive during the copy).
        tok = np.ascontiguousarray(token_ids, dtype=np.int32)
        pos = np.arange(start, start + n, dtype=np.int32)
        one = np.ones(n, dtype=np.int32)
        ctypes.memmove(b.token, tok.ctypes.data, 4 * n)
        ctypes.memmove(b.pos, pos.ctypes.data, 4 * n)
        ctypes.memmove(b.n_seq_id, one.ctypes.data, 4 * n)
        ctypes.memmove(b.logits, flags.ctypes.data, n)
        for j in range(n):
            b.seq_id[j][0] = 0
        b.n_tokens = n
        rc = llama_cpp.llama_decode(self.ctx, b)
        if rc != 0:
            raise RuntimeError(f"llama_decode failed with code {rc} at position {start}")
        k = len(keep)
        if k == 0:
            return np.zeros((0, self.n_vocab), dtype=np.float32)
        # Logits of the flagged tokens, contiguous, in batch order: a view of llama.cpp's buffer
        # (see decode_sequences), valid until the next decode
        ptr = llama_cpp.llama_get_logits(self.ctx)
        return np.ctypeslib.as_array(ptr, shape=(k, self.n_vocab))

    # -- llama-perplexity's batch layout ---------------------------------------------------------

    def begin_batch_layout(self, layout: Any) -> None:
        """A context laid out as llama-perplexity makes it (``layout``: a
        :class:`~kldcard.capture.llama_perplexity.LlamaPerplexityBatching`): ``n_ctx = n_seq·n_ctx``,
        ``n_seq_max = n_seq``, non-unified KV cache, flash attention AUTO unless ``--flash-attn`` was
        given, ``swa_full`` off, threads = physical cores unless ``--threads``."""
        self._free_context()
        r = self.r
        cp = llama_cpp.llama_context_default_params()
        cp.n_ctx = layout.context_size
        cp.n_batch = layout.n_batch
        cp.n_ubatch = layout.n_ubatch
        cp.n_seq_max = layout.n_seq
        cp.kv_unified = layout.kv_unified
        cp.swa_full = layout.swa_full
        threads = self.settings.threads or physical_cores()
        cp.n_threads = cp.n_threads_batch = threads
        fa = self.settings.flash_attn
        cp.flash_attn_type = (
            llama_cpp.LLAMA_FLASH_ATTN_TYPE_AUTO if fa is None
            else llama_cpp.LLAMA_FLASH_ATTN_TYPE_ENABLED if fa else llama_cpp.LLAMA_FLASH_ATTN_TYPE_DISABLED
        )
        cp.type_k = cp.type_v = KV_TYPES[r["kv_type"]]
        cp.embeddings = False
        cp.no_perf = True
        self.ctx = llama_cpp.llama_init_from_model(self.model, cp)
        if not self.ctx:
            raise InputError(f"llama.cpp cannot create a context for the {layout.describe()}")
        if int(llama_cpp.llama_n_seq_max(self.ctx)) != layout.n_seq:
            raise InputError(f"llama.cpp allows {llama_cpp.llama_n_seq_max(self.ctx)} sequences, the layout needs {layout.n_seq}")
        self.n_ctx = int(llama_cpp.llama_n_ctx(self.ctx))
        self.batch = llama_cpp.llama_batch_init(layout.n_batch, 0, 1)
        self.layout = layout
        self.r = {**r, "n_batch": layout.n_batch, "n_ubatch": layout.n_ubatch, "threads": threads,
                  "flash_attn": "auto" if fa is None else bool(fa)}

    def clear_sequences(self) -> None:
        """Empty the KV cache of every sequence (llama-perplexity does it before each group)."""
        llama_cpp.llama_memory_clear(llama_cpp.llama_get_memory(self.ctx), True)

    def decode_sequences(self, pieces: list[np.ndarray], start: int, first_output: int) -> np.ndarray:
        """One ``llama_decode`` of ``pieces`` (equal-length int32 arrays) as sequences 0 … m−1 at
        positions ``start, start+1, …``, sequence-major, logits flagged where position ≥
        ``first_output``; returns the flagged rows (float32 ``[n_out, n_vocab]``) in batch order.

        The rows are a view of llama.cpp's own logits buffer, not a copy: valid until the next
        decode on this context, which overwrites them. A copy here cost ~1 s per 600 MB (the page
        faults of a fresh array), a third of llama-perplexity's whole run on the benchmark's job."""
        n_each = len(pieces[0]) if pieces else 0
        n = n_each * len(pieces)
        if n > self.layout.n_batch or any(len(p) != n_each for p in pieces):
            raise ValueError(f"{len(pieces)} pieces of {n_each} tokens do not fit n_batch {self.layout.n_batch}")
        b = self.batch
        tok = np.ascontiguousarray(np.concatenate(pieces), dtype=np.int32)
        pos = np.tile(np.arange(start, start + n_each, dtype=np.int32), len(pieces))
        one = np.ones(n, dtype=np.int32)
        flags = (pos >= first_output).astype(np.int8)
        ctypes.memmove(b.token, tok.ctypes.data, 4 * n)
        ctypes.memmove(b.pos, pos.ctypes.data, 4 * n)
        ctypes.memmove(b.n_seq_id, one.ctypes.data, 4 * n)
        ctypes.memmove(b.logits, flags.ctypes.data, n)
        for s in range(len(pieces)):
            for j in range(s * n_each, (s + 1) * n_each):
                b.seq_id[j][0] = s
        b.n_tokens = n
        rc = llama_cpp.llama_decode(self.ctx, b)
        if rc != 0:
            raise RuntimeError(f"llama_decode failed with code {rc} ({len(pieces)} sequences at position {start})")
        k = int(flags.sum())
        if k == 0:
            return np.zeros((0, self.n_vocab), dtype=np.float32)
        return np.ctypeslib.as_array(llama_cpp.llama_get_logits(self.ctx), shape=(k, self.n_vocab))

    def _ftype(self) -> str:
        code = int(llama_cpp.llama_model_ftype(self.model)) & ~1024  # strip the GUESSED flag
        return _FTYPE_NAMES.get(code, f"ftype-{code}")

    def fingerprint(self) -> StackFingerprint:
        fields = machine_fingerprint(self.settings)
        fields.update(weights_dtype=self._ftype(), compute_dtype="f32")
        if self.layout is not None:
            fa = self.r["flash_attn"]
            fields.update(self.layout.fingerprint_fields(), threads=self.r["threads"],
                          attention_backend="flash-attn auto (llama.cpp resolves it per device; on for CPU)"
                          if fa == "auto" else f"flash-attn {'on' if fa else 'off'}")
        return StackFingerprint(**fields)

    def model_meta(self) -> dict[str, Any]:
        ftype = self._ftype()
        return {
            "name": self.path.stem,
            "path": str(self.path.resolve()),
            "format": "gguf",
            "files": fp.model_file_hashes(self.path),
            "size": fp.model_size(self.path),
            "dtype": ftype,
            "quantization": None if ftype in _UNQUANTIZED else ftype,
        }

    def _free_context(self) -> None:
        if self.batch is not None:
            llama_cpp.llama_batch_free(self.batch)
            self.batch = None
        if self.ctx is not None:
            llama_cpp.llama_free(self.ctx)
            self.ctx = None

    def close(self) -> None:
        self._free_context()
        if getattr(self, "model", None):
            llama_cpp.llama_model_free(self.model)
            self.model = None


def open_model(path: str | Path, settings: EngineSettings) -> LlamaCppModel:
    return LlamaCppModel(path, settings)
