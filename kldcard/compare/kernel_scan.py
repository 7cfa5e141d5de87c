"""Order keys for :mod:`kldcard.compare.kernel`: each stored logit (BF16 bits, float32, float64) as a
signed integer that orders like the float, so that a row's max, first argmax, min, smallest finite
entry and the rank of one entry are integer reductions that vectorise without fast-math flags.
"""

from __future__ import annotations

import numpy as np
from numba import types
from numba.extending import overload

from kldcard.compare.kernel_math import SUM_FLAGS as _SUM


def order_key(v):  # pragma: no cover - only its numba overload is ever called
    raise NotImplementedError


def from_key(k, like):  # pragma: no cover - only its numba overload is ever called
    raise NotImplementedError


@overload(order_key, inline="always")
def _order_key(v):
    """A signed integer that orders like the float (sign-magnitude to two's complement, then -0.0
    moved onto +0.0 so that they tie, as floats do), so max and min vectorise as integer
    reductions, which need no fast-math flags. A positive NaN sorts above +inf, a negative one
    below -inf. :func:`from_key` decodes."""
    if isinstance(v, types.Integer):  # BF16 bits: the float32 they widen to
        def impl(v):
            b = np.int32(np.uint32(np.uint32(v) << np.uint32(16)))
            k = b ^ ((b >> np.int32(31)) & np.int32(0x7FFFFFFF))
            return k + ((k >> np.int32(31)) & np.int32(1))
    elif v == types.float32:
        def impl(v):
            b = np.float32(v).view(np.int32)
            k = b ^ ((b >> np.int32(31)) & np.int32(0x7FFFFFFF))
            return k + ((k >> np.int32(31)) & np.int32(1))
    else:
        def impl(v):
            b = np.float64(v).view(np.int64)
            k = b ^ ((b >> np.int64(63)) & np.int64(0x7FFFFFFFFFFFFFFF))
            return k + ((k >> np.int64(63)) & np.int64(1))
    return impl


@overload(from_key, inline="always")
def _from_key(k, like):
    """The float64 value of an order key of ``like``'s type (-0.0 comes back as +0.0)."""
    if isinstance(like, types.Integer) or like == types.float32:
        def impl(k, like):
            k = k - ((k >> np.int32(31)) & np.int32(1))
            return np.float64(np.int32(k ^ ((k >> np.int32(31)) & np.int32(0x7FFFFFFF))).view(np.float32))
    else:
        def impl(k, like):
            k = k - ((k >> np.int64(63)) & np.int64(1))
            return np.int64(k ^ ((k >> np.int64(63)) & np.int64(0x7FFFFFFFFFFFFFFF))).view(np.float64)
    return impl


def scan(z):  # pragma: no cover - only its numba overload is ever called
    raise NotImplementedError


@overload(scan, fastmath=_SUM)
def _scan(z):
    """(max, first index of the max, min) of one row as float64; a NaN shows up as max or min.

    BF16/F32 rows: one vectorised integer reduction over (key << 32 | ~index), whose max is the
    largest key at its first index. float64 keys need all 64 bits, so those rows (in-memory
    arrays and the robust path only) take a scalar loop."""
    if isinstance(z.dtype, types.Integer) or z.dtype == types.float32:
        def impl(z):
            hi = np.int64(-(2**63) + 1)
            lo = order_key(z[0])
            for i in range(z.shape[0]):
                k = order_key(z[i])
                hi = max(hi, (np.int64(k) << 32) | np.int64(0xFFFFFFFF - i))
                lo = min(lo, k)
            return from_key(np.int32(hi >> 32), z[0]), 0xFFFFFFFF - (hi & 0xFFFFFFFF), from_key(lo, z[0])
        return impl

    def impl(z):
        hi = lo = order_key(z[0])
        at = 0
        for i in range(z.shape[0]):
            k = order_key(z[i])
            if k > hi:
                hi, at = k, i
            lo = min(lo, k)
        return from_key(hi, z[0]), at, from_key(lo, z[0])
    return impl


def _key_of(x: float, bits: int) -> int:
    """:func:`order_key` in Python, for constants (``bits``: 32 for BF16/F32 rows, 64 for float64)."""
    b = int(np.array(x, np.float32 if bits == 32 else np.float64).view(np.int32 if bits == 32 else np.int64))
    k = b ^ (0x7FFFFFFF if bits == 32 else 0x7FFFFFFFFFFFFFFF) if b < 0 else b
    return k + (1 if k < 0 else 0)


_NINF32, _NINF64 = _key_of(-np.inf, 32), _key_of(-np.inf, 64)


def finite_min(z):  # pragma: no cover - only its numba overload is ever called
    raise NotImplementedError


@overload(finite_min, fastmath=_SUM)
def _finite_min(z):
    """The smallest entry above −inf of one row as float64 (+inf when there is none): the range of a
    masked row's support. An integer reduction on the order keys, as in :func:`scan`."""
    if isinstance(z.dtype, types.Integer) or z.dtype == types.float32:
        ninf, top = np.int32(_NINF32), np.int32(2**31 - 1)
    else:
        ninf, top = np.int64(_NINF64), np.int64(2**63 - 1)

    def impl(z):
        lo = top
        for i in range(z.shape[0]):
            k = order_key(z[i])
            lo = min(lo, top if k == ninf else k)
        return np.inf if lo == top else from_key(lo, z[0])
    return impl


def scan_rank(z, tg):  # pragma: no cover - only its numba overload is ever called
    raise NotImplementedError


@overload(scan_rank, fastmath=_SUM)
def _scan_rank(z, tg):
    """:func:`scan` plus the number of entries strictly above entry ``tg`` (0: the target is a top-1
    token), counted in the same pass: one more integer comparison per entry on the order keys."""
    if isinstance(z.dtype, types.Integer) or z.dtype == types.float32:
        def impl(z, tg):
            hi = np.int64(-(2**63) + 1)
            lo = order_key(z[0])
            key = order_key(z[tg])
            above = 0
            for i in range(z.shape[0]):
                k = order_key(z[i])
                hi = max(hi, (np.int64(k) << 32) | np.int64(0xFFFFFFFF - i))
                lo = min(lo, k)
                above += k > key
            return from_key(np.int32(hi >> 32), z[0]), 0xFFFFFFFF - (hi & 0xFFFFFFFF), from_key(lo, z[0]), above
        return impl

    def impl(z, tg):
        hi = lo = order_key(z[0])
        key = order_key(z[tg])
        at = 0
        above = 0
        for i in range(z.shape[0]):
            k = order_key(z[i])
            if k > hi:
                hi, at = k, i
            lo = min(lo, k)
            above += k > key
        return from_key(hi, z[0]), at, from_key(lo, z[0]), above
    return impl
