"""An independent, deliberately plain writer of llama.cpp ``_logits_`` base files for the tests.

Written from ``shared/reference/llamacpp-kld.md`` §2 only; it shares no code with
``kldcard.llamacpp``: ``struct`` packing, a per-element float32 loop, the C library's ``expf`` through
ctypes (kldcard emulates glibc's), and the float32 "magic number" rounding (adding 1.5·2²³ rounds
half-to-even) instead of ``numpy.rint``.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import math
import struct

import numpy as np

F = np.float32
# The C library's own expf, as llama.cpp calls it (numpy's float32 exp differs in the last bit).
_libm = ctypes.CDLL(ctypes.util.find_library("m") or "libm.so.6")
_libm.expf.restype, _libm.expf.argtypes = ctypes.c_float, [ctypes.c_float]


def c_expf(x) -> np.float32:
    return F(_libm.expf(float(F(x))))
_MAGIC_ROUND = F(12582912.0)  # 1.5·2**23: x + M rounds x to the nearest integer, ties to even


def _round_half_even_f32(x: np.float32) -> int:
    """The float32 bit trick: add 1.5·2²³ (rounding half to even), read the mantissa bits. Stored
    into a uint16, so the result is taken modulo 2¹⁶ (inf/NaN products come out as 0)."""
    with np.errstate(over="ignore", invalid="ignore"):
        y = F(F(x) + _MAGIC_ROUND)
    bits = struct.unpack("<i", struct.pack("<f", y))[0]
    return ((bits & 0x007FFFFF) - 0x00400000) % 65536


def encode_row(z: np.ndarray, floor: float = 16.0) -> tuple[float, float, list[int]]:
    """(scale, min_log_prob, codes) for one row of float32 logits, step by step as §2.3 says."""
    z = [F(v) for v in z]
    hi = z[0]
    lo = z[0]
    for v in z[1:]:
        hi = max(hi, v)
        lo = min(lo, v)
    lo = max(lo, F(hi - F(floor)))
    total = 0.0  # a Python float is a C double
    for v in z:
        total += float(c_expf(F(v - hi)))
    lse = F(math.log(total))
    min_log_prob = F(F(lo - hi) - lse)
    scale = F(F(hi - lo) / F(65535.0))
    if scale == 0:
        return float(scale), float(min_log_prob), [0] * len(z)
    with np.errstate(over="ignore", invalid="ignore"):
        inv = F(F(1.0) / scale)
        codes = [_round_half_even_f32(F(inv * F(v - lo))) if v > lo else 0 for v in z]
    return float(scale), float(min_log_prob), codes


def write_file(path, n_ctx: int, n_vocab: int, tokens: list[int], rows: list[np.ndarray], floor: float = 16.0) -> list:
    """Write a base file; ``rows`` are the float32 logits of every record in file order. Returns the
    encoded records [(scale, min, codes)] for comparison."""
    n_chunk = len(tokens) // n_ctx
    per_chunk = n_ctx - 1 - n_ctx // 2
    assert len(rows) == n_chunk * per_chunk
    encoded = []
    with open(path, "wb") as fh:
        fh.write(b"_logits_")
        fh.write(struct.pack("<iii", n_ctx, n_vocab, n_chunk))
        fh.write(struct.pack(f"<{len(tokens)}i", *tokens))
        for z in rows:
            scale, mn, codes = encode_row(z, floor)
            encoded.append((scale, mn, codes))
            fh.write(struct.pack("<ff", scale, mn))
            fh.write(struct.pack(f"<{n_vocab}H", *codes))
            if n_vocab % 2:
                fh.write(struct.pack("<H", 0))
    return encoded


def peaked_logits(rng: np.random.Generator, n: int, n_vocab: int, spread: float = 4.0) -> np.ndarray:
    """Synthetic peaked float32 logits (a few high entries over a broad low tail)."""
    z = rng.standard_normal((n, n_vocab)).astype(np.float32) * F(spread)
    hot = rng.integers(0, n_vocab, size=(n, 3))
    for i in range(n):
        z[i, hot[i]] += F(12.0)
    return z
