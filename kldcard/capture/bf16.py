"""BF16 <-> float32 conversion on raw bit patterns (uint16), exact and vectorised."""

from __future__ import annotations

import numpy as np

__all__ = ["bf16_to_f32", "f32_to_bf16", "to_float64"]


def f32_to_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 to BF16 (round-to-nearest-even), returned as the raw uint16 bit patterns.

    NaN stays NaN (a quiet NaN with the input's sign); overflow rounds to ±inf as IEEE requires.
    """
    u = np.ascontiguousarray(x, dtype=np.float32).view(np.uint32)
    out = ((u + np.uint32(0x7FFF) + ((u >> np.uint32(16)) & np.uint32(1))) >> np.uint32(16)).astype(np.uint16)
    nan = (u & np.uint32(0x7FFFFFFF)) > np.uint32(0x7F800000)
    if nan.any():
        out[nan] = ((u[nan] >> np.uint32(16)) & np.uint32(0x8000)).astype(np.uint16) | np.uint16(0x7FC0)
    return out


def bf16_to_f32(raw: np.ndarray) -> np.ndarray:
    """Exact BF16 (uint16 bit patterns) -> float32: the bits become the top half of a float32."""
    return np.left_shift(np.asarray(raw, dtype=np.uint16), 16, dtype=np.uint32).view(np.float32)


def to_float64(raw: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
    """Stored logits (uint16 BF16 bits, float32, or float64 passed through) -> float64, exactly."""
    raw = np.asarray(raw)
    if raw.dtype == np.float64:  # in-memory logits (divergence_logits, the robust path): never narrowed
        if out is None:
            return raw
        np.copyto(out, raw)
        return out
    f32 = bf16_to_f32(raw) if raw.dtype == np.uint16 else raw.astype(np.float32, copy=False)
    if out is None:
        return f32.astype(np.float64)
    np.copyto(out, f32, casting="safe")
    return out
