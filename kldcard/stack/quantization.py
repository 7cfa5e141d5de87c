"""Knowledge about quantization labels (numpy-free: the linter uses it).

A card states a candidate's quantization (``q4_k_m``, ``Q8_0``, ``4bit-awq``); the file states its
own: a GGUF's ``general.file_type`` (``MOSTLY_Q4_K_M``), a directory's quantization config. These
helpers turn the file's statement into the card's vocabulary and say when the two disagree.
"""

from __future__ import annotations

import os
from typing import Any

__all__ = ["contradiction", "file_type_label", "quantization_label"]

_FILE_TYPE_LABEL = {"ALL_F32": "f32", "MOSTLY_F16": "f16", "MOSTLY_BF16": "bf16"}


def file_type_label(file_type: str | None) -> str | None:
    """``MOSTLY_Q4_K_M`` -> ``q4_k_m``; ``ALL_F32`` -> ``f32``; None for an unknown or numeric type."""
    if not file_type or file_type.isdigit():
        return None
    return _FILE_TYPE_LABEL.get(file_type, file_type.removeprefix("MOSTLY_").lower())


def quantization_label(info: dict[str, Any] | None) -> str | None:
    """A card's ``quantization`` value for what the file holds (``q4_k_m``, ``4bit-awq``, ``f32``):
    ``info`` is a GGUF tensor table summary (``file_type``) or ``{"config": quantization_config}``."""
    if not info:
        return None
    if info.get("file_type"):
        return file_type_label(info["file_type"])
    cfg = info.get("config") or info.get("quantization_config")
    if isinstance(cfg, dict):
        bits, method = cfg.get("bits"), cfg.get("quant_method")
        if bits is not None:
            return f"{bits}bit" + (f"-{method}" if method else "")
        return str(method) if method else None
    return None


def _norm(s: str) -> str:
    return s.lower().replace("-", "_").replace(" ", "")


def contradiction(stated: str | None, actual: str | None) -> bool:
    """Whether a stated quantization contradicts the file's label (loosely: case, ``-``/``_``; one
    containing the other is consistent, e.g. ``Q4_K_M (imatrix)`` and ``q4_k_m``)."""
    if not stated or not actual:
        return False
    a, b = _norm(stated), _norm(actual)
    return not (a == b or a in b or b in a)


# llama.cpp's llama_ftype (gguf.LlamaFileType), for reading general.file_type without the gguf package
_FTYPES = {0: "ALL_F32", 1: "MOSTLY_F16", 2: "MOSTLY_Q4_0", 3: "MOSTLY_Q4_1", 7: "MOSTLY_Q8_0", 8: "MOSTLY_Q5_0",
           9: "MOSTLY_Q5_1", 10: "MOSTLY_Q2_K", 11: "MOSTLY_Q3_K_S", 12: "MOSTLY_Q3_K_M", 13: "MOSTLY_Q3_K_L",
           14: "MOSTLY_Q4_K_S", 15: "MOSTLY_Q4_K_M", 16: "MOSTLY_Q5_K_S", 17: "MOSTLY_Q5_K_M", 18: "MOSTLY_Q6_K",
           19: "MOSTLY_IQ2_XXS", 20: "MOSTLY_IQ2_XS", 21: "MOSTLY_Q2_K_S", 22: "MOSTLY_IQ3_XS", 23: "MOSTLY_IQ3_XXS",
           24: "MOSTLY_IQ1_S", 25: "MOSTLY_IQ4_NL", 26: "MOSTLY_IQ3_S", 27: "MOSTLY_IQ3_M", 28: "MOSTLY_IQ2_S",
           29: "MOSTLY_IQ2_M", 30: "MOSTLY_IQ4_XS", 31: "MOSTLY_IQ1_M", 32: "MOSTLY_BF16", 36: "MOSTLY_TQ1_0",
           37: "MOSTLY_TQ2_0"}


def gguf_file_type(path: str) -> str | None:
    """``general.file_type`` of a GGUF file (e.g. ``MOSTLY_Q4_K_M``) from its header key-values only,
    with the standard library; None when the file is not a readable GGUF or does not say."""
    from kldcard.stack.gguf_header import read_gguf_header

    if not os.path.isfile(path):  # a FIFO next to a card must not block the linter
        return None
    try:
        code = read_gguf_header(path, tensors=False).file_type
    except (OSError, ValueError):
        return None
    return None if code is None else _FTYPES.get(code, str(code))
