"""How big a model is: bytes on disk and bits per weight, read from the files' own tables.

The choice a user makes between quantizations is fidelity per byte, so every candidate carries its
size. Nothing is loaded: a GGUF's tensor table (:func:`kldcard.stack.gguf_header.read_gguf_header`:
each tensor's ggml type and dimensions), a safetensors file's JSON header (dtype and shape per tensor)
are enough. Standard library only.

- ``parameters``: the weights' element count. A packed tensor (an MLX ``uint32`` weight next to its
  ``.scales``) counts its logical elements (rows × scales per row × group size), not its words;
  scales and biases are overhead, not parameters.
- ``tensor_bytes``: the bytes the tensor data takes (ggml block sizes; safetensors dtype sizes).
- ``bits_per_weight`` = 8 · tensor_bytes / parameters — llama.cpp's "BPW", including the embedding and
  output head (which K-quant mixes keep at more bits).
- ``bytes``: the model files on disk (the GGUF, or a directory's ``*.safetensors``), headers included.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path
from typing import Any

__all__ = ["GGML_BLOCKS", "gguf_size", "model_size", "safetensors_size"]

# ggml type code -> (elements per block, bytes per block), as ggml's type traits define them (Q8_1, 9,
# is left out: only a runtime type, never stored, and gguf-py and ggml disagree on its size).
GGML_BLOCKS: dict[int, tuple[int, int]] = {
    0: (1, 4), 1: (1, 2), 2: (32, 18), 3: (32, 20), 6: (32, 22), 7: (32, 24), 8: (32, 34),
    10: (256, 84), 11: (256, 110), 12: (256, 144), 13: (256, 176), 14: (256, 210), 15: (256, 292),
    16: (256, 66), 17: (256, 74), 18: (256, 98), 19: (256, 50), 20: (32, 18), 21: (256, 110),
    22: (256, 82), 23: (256, 136), 24: (1, 1), 25: (1, 2), 26: (1, 4), 27: (1, 8), 28: (1, 8),
    29: (256, 56), 30: (1, 2), 34: (256, 54), 35: (256, 66), 39: (32, 17), 40: (64, 36), 41: (128, 18),
}
_ST_BYTES = {"BOOL": 1, "U8": 1, "I8": 1, "F8_E4M3": 1, "F8_E5M2": 1, "U16": 2, "I16": 2, "F16": 2, "BF16": 2,
             "U32": 4, "I32": 4, "F32": 4, "U64": 8, "I64": 8, "F64": 8}


def _result(bytes_: int, tensor_bytes: int, params: int, source: str) -> dict[str, Any] | None:
    if params <= 0:
        return None
    return {"bytes": bytes_, "tensor_bytes": tensor_bytes, "parameters": params,
            "bits_per_weight": 8.0 * tensor_bytes / params, "source": source}


def gguf_size(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """Size of a GGUF from its tensor table; None when a tensor has a type this table does not know."""
    from kldcard.stack.gguf_header import read_gguf_header

    header = read_gguf_header(path)
    params = tbytes = 0
    for (_, ttype), shape in zip(header.tensors, header.shapes):
        if ttype not in GGML_BLOCKS:
            return None
        n = 1
        for dim in shape:
            n *= dim
        per_block, block_bytes = GGML_BLOCKS[ttype]
        params += n
        tbytes += -(-n // per_block) * block_bytes
    return _result(os.stat(path).st_size, tbytes, params, "gguf tensor table")


def _safetensors_header(path: Path) -> dict[str, Any]:
    with open(path, "rb") as f:
        raw = f.read(8)
        if len(raw) < 8:
            raise ValueError("not a safetensors file (shorter than its header length)")
        (n,) = struct.unpack("<Q", raw)
        if n > min(os.fstat(f.fileno()).st_size - 8, 100 * 2**20):
            raise ValueError(f"safetensors header of {n} bytes does not fit the file")
        header = json.loads(f.read(n))
    if not isinstance(header, dict):
        raise ValueError("safetensors header is not a JSON object")
    header.pop("__metadata__", None)
    return header


def _group_size(config: dict[str, Any], tensor: str) -> int | None:
    """MLX's group size for a packed tensor: a per-module override, else the global one."""
    q = config.get("quantization") or config.get("quantization_config") or {}
    module = tensor.rsplit(".", 1)[0]
    own = q.get(module) if isinstance(q, dict) else None
    if isinstance(own, dict) and isinstance(own.get("group_size"), int):
        return own["group_size"]
    return q.get("group_size") if isinstance(q, dict) and isinstance(q.get("group_size"), int) else None


def safetensors_size(directory: str | os.PathLike[str]) -> dict[str, Any] | None:
    """Size of a transformers or MLX directory from its ``*.safetensors`` headers (None without any)."""
    d = Path(directory)
    files = sorted(d.glob("*.safetensors"))
    if not files:
        return None
    try:
        config = json.loads((d / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = {}
    tensors: dict[str, dict[str, Any]] = {}
    for f in files:
        tensors.update(_safetensors_header(f))
    params = tbytes = 0
    packed = False
    for name, info in tensors.items():
        shape = info.get("shape") or []
        n = 1
        for dim in shape:
            n *= int(dim)
        tbytes += n * _ST_BYTES.get(str(info.get("dtype")), 0)
        base = name.removesuffix(".weight")
        if name.endswith((".scales", ".biases")) and f"{name.rsplit('.', 1)[0]}.weight" in tensors:
            continue  # quantization overhead of a packed weight
        scales = tensors.get(f"{base}.scales")
        if name.endswith(".weight") and scales is not None and shape:
            group = _group_size(config, name)
            if group is None:
                return None
            s_shape = [int(x) for x in scales.get("shape") or []]
            n = group
            for dim in s_shape:
                n *= dim
            packed = True
        params += n
    source = "mlx weights (safetensors headers)" if packed else "safetensors headers"
    return _result(sum(f.stat().st_size for f in files), tbytes, params, source)


def model_size(path: str | os.PathLike[str]) -> dict[str, Any] | None:
    """:func:`gguf_size` for a ``.gguf`` file, :func:`safetensors_size` for a directory; None for
    anything else (or a file these tables cannot account for). Raises ValueError/OSError on a file
    that claims to be one of these and is not."""
    p = Path(path)
    if p.is_file() and p.suffix.lower() == ".gguf":
        return gguf_size(p)
    if p.is_dir():
        return safetensors_size(p)
    return None
