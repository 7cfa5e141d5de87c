"""What a model file actually quantized, read from the file itself.

Two "4-bit" files from different tools can quantize different tensors (token embeddings, output
head, attention, feed-forward or expert weights), and the number on a card depends on which. For a
GGUF the tensor table says it: :func:`gguf_tensor_types` reads it with the one header reader,
:func:`kldcard.stack.gguf_header.read_gguf_header` (key-values skipped, tensor infos read, the data
never touched; ``gguf.GGUFReader`` took ~10 s per candidate on a 151,936-token vocabulary), and returns
the file type and, per role, the set of tensor types, named as the ``gguf`` package names them. For a
transformers or MLX directory,
:func:`hf_quantization` returns ``config.json``'s ``quantization_config`` (or MLX's
``quantization``), or ``None`` for an unquantized checkpoint.
"""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

from kldcard.errors import InputError
from kldcard.stack.quantization import contradiction as _contradicts
from kldcard.stack.quantization import quantization_label

__all__ = ["gguf_tensor_types", "hf_quantization", "model_quantization", "quantization_label"]

# GGUF tensor names by role (llama.cpp's naming: gguf.constants.TENSOR_NAMES).
_ROLES = (
    ("token_embd", lambda n: n.startswith("token_embd.")),
    ("output", lambda n: n == "output.weight"),
    ("experts", lambda n: "_exps." in n or "_shexp." in n),
    ("attention", lambda n: ".attn_" in n and "norm" not in n),
    ("feed_forward", lambda n: ".ffn_" in n and "norm" not in n and "_inp." not in n),
)


def _types(counter: Counter) -> str:
    """``Q4_K`` or ``Q4_K ×12, Q6_K ×2`` (most common first)."""
    if len(counter) == 1:
        return next(iter(counter))
    return ", ".join(f"{t} ×{n}" for t, n in counter.most_common())


def gguf_tensor_types(path: str | Path) -> dict[str, Any]:
    """``{"format": "gguf", "file_type": "MOSTLY_Q4_K_M", "token_embd": "Q6_K", "output": "tied to
    token_embd", "attention": "Q4_K ×7, Q6_K ×1", "feed_forward": ..., "experts": None}``."""
    try:
        import gguf
    except ImportError:
        from kldcard.engines import not_installed

        raise not_installed("llama.cpp", "gguf") from None
    from kldcard.files import regular_file
    from kldcard.stack.gguf_header import read_gguf_header

    regular_file(path, "GGUF file")
    try:
        header = read_gguf_header(path)
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: cannot read the GGUF tensor table: {exc}") from None
    code, tensors = header.file_type, header.tensors
    file_type = None
    if code is not None:
        try:
            file_type = gguf.LlamaFileType(code).name
        except ValueError:
            file_type = str(code)

    def type_name(t: int) -> str:
        try:
            return gguf.GGMLQuantizationType(t).name
        except ValueError:
            return f"type-{t}"

    roles: dict[str, Counter] = {name: Counter() for name, _ in _ROLES}
    for tname, ttype in tensors:
        for name, match in _ROLES:
            if match(tname):
                roles[name][type_name(ttype)] += 1
                break
    out: dict[str, Any] = {"format": "gguf", "file_type": file_type}
    for name, _ in _ROLES:
        out[name] = _types(roles[name]) if roles[name] else None
    if out["output"] is None and out["token_embd"] is not None:
        out["output"] = "tied to token_embd"
    return out


def hf_quantization(directory: str | Path) -> dict[str, Any] | None:
    """The quantization config of a transformers / MLX directory (None when unquantized)."""
    cfg_path = Path(directory) / "config.json"
    if not cfg_path.is_file():
        return None
    try:
        cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{cfg_path}: cannot read: {exc}") from None
    q = cfg.get("quantization_config") or cfg.get("quantization")
    return dict(q) if isinstance(q, dict) else None


def model_quantization(path: str | Path) -> dict[str, Any] | None:
    """:func:`gguf_tensor_types` for a GGUF file, ``{"format": "hf", "config": ...}`` for a directory."""
    p = Path(path)
    if p.is_file() and p.suffix.lower() == ".gguf":
        return gguf_tensor_types(p)
    if p.is_dir():
        q = hf_quantization(p)
        return {"format": "hf", "config": q}
    return None


def contradiction(stated: str | None, info: dict[str, Any] | None) -> str | None:
    """Why a stated quantization contradicts the file (None when unknown or consistent)."""
    actual = quantization_label(info)
    if not _contradicts(stated, actual):
        return None
    return f"the card states {stated!r} but the file's tensor table says {actual!r}"
