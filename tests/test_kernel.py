"""The compiled row kernel (kldcard/compare/kernel.py): its elementary functions against 40-digit mpmath,
its max/argmax/NaN scan per storage dtype, the routing of extreme rows, agreement across input
dtypes, and values that do not depend on numba's disk cache."""

from __future__ import annotations

import json
import math
import os
import subprocess
import sys

import mpmath as mp
import numba as nb
import numpy as np
import pytest
from helpers_compare import close, mp_reference

from kldcard.compare import kernel
from kldcard.compare.divergence import (
    RowKernel,
    TokenDivergence,
    divergence_logits,
    row_divergence,
)


def _vectorised(fn):
    """fn applied in a compiled loop, the way the kernel calls it (inlined, vectorised)."""

    @nb.njit(fastmath=kernel._SUM, error_model="numpy")
    def run(x, out):
        for i in range(x.shape[0]):
            out[i] = fn(x[i])

    return run


def _max_ulp(fn, ref, xs: np.ndarray) -> float:
    out = np.empty_like(xs)
    _vectorised(fn)(xs, out)
    with mp.workdps(40):
        exact = np.array([float(ref(mp.mpf(float(x)))) for x in xs])
    return float(np.max(np.abs(out - exact) / np.spacing(np.abs(exact))))


RNG = np.random.default_rng(2026)


@pytest.mark.parametrize("name, fn, ref, xs, ulps", [
    ("exp", kernel.vexp, mp.exp,
     np.concatenate([RNG.uniform(-708, 0, 2000), RNG.uniform(-1, 1, 2000), RNG.uniform(-1e-9, 1e-9, 200),
                     RNG.uniform(0, 709, 500)]), 1),
    ("expm1", kernel.vexpm1, mp.expm1,
     np.concatenate([RNG.uniform(-40, 5, 2000), RNG.uniform(-0.4, 0.4, 2000), 10 ** RNG.uniform(-300, -1, 500),
                     -(10 ** RNG.uniform(-300, -1, 500)), RNG.uniform(-708, 709, 500)]), 2),
    ("log1p", kernel.vlog1p, mp.log1p,
     np.concatenate([RNG.uniform(-0.5, 5, 2000), RNG.uniform(-0.01, 0.01, 2000), 10 ** RNG.uniform(-300, 300, 500),
                     -(10 ** RNG.uniform(-300, -0.01, 500)), RNG.uniform(-0.3, -0.28, 300), RNG.uniform(0.40, 0.42, 300)]),
     3),
])
def test_elementary_functions_are_within_a_few_ulps_of_mpmath(name, fn, ref, xs, ulps):
    assert _max_ulp(fn, ref, xs) <= ulps, name


def test_elementary_functions_at_their_edges():
    out = np.empty(5)
    _vectorised(kernel.vexpm1)(np.array([-np.inf, -800.0, 0.0, 709.5, np.inf]), out)
    assert out[0] == out[1] == -1.0 and out[2] == 0.0 and out[3] == out[4] == np.inf
    _vectorised(kernel.vexp)(np.array([0.0, -1e-300, 1.0, -700.0, 709.0]), out)
    assert out[0] == out[1] == 1.0 and abs(out[2] - math.e) <= np.spacing(math.e)
    assert math.isclose(out[3], math.exp(-700.0), rel_tol=1e-15) and math.isclose(out[4], math.exp(709.0), rel_tol=1e-15)
    tiny = np.array([1e-307, -1e-300, 1e-17, -0.5, 0.0])  # (subnormal inputs are not promised)
    _vectorised(kernel.vlog1p)(tiny, out)
    assert out[0] == 1e-307 and out[1] == -1e-300 and out[2] == 1e-17 and out[3] == math.log(0.5) and out[4] == 0.0


def _bf16(x: np.ndarray) -> np.ndarray:
    return (np.asarray(x, np.float32).view(np.uint32) >> 16).astype(np.uint16)


@nb.njit
def _scan(z):
    return kernel.scan(z)


@pytest.mark.parametrize("dtype", ["bf16", "f32", "f64"])
def test_scan_finds_max_first_argmax_and_min_for_every_storage_dtype(dtype):
    z = np.array([1.0, 3.0, -2.5, 3.0, -7.0, 0.5, 3.0])
    row = _bf16(z) if dtype == "bf16" else z.astype(np.float32 if dtype == "f32" else np.float64)
    assert _scan(row) == (3.0, 1, -7.0)  # the first of three equal maxima, like numpy's argmax
    big = np.random.default_rng(1).normal(size=70000)
    big[[123, 60000]] = 9.0
    row = _bf16(big) if dtype == "bf16" else big.astype(np.float32 if dtype == "f32" else np.float64)
    values = (row.astype(np.uint32) << 16).view(np.float32) if dtype == "bf16" else row
    m, at, lo = _scan(row)
    assert (m, at) == (9.0, 123) and lo == float(values.min())
    # the fused scan that also ranks a target: the same three values, and the entries above it
    for tg in (123, 5, 60001):
        *same, above = _scan_rank(row, tg)
        assert tuple(same) == (m, at, lo)
        assert above == int(np.sum(values.astype(np.float64) > float(values[tg])))


@nb.njit
def _scan_rank(z, tg):
    return kernel.scan_rank(z, tg)


@pytest.mark.parametrize("dtype", ["bf16", "f32", "f64"])
@pytest.mark.parametrize("value, status", [(np.nan, kernel.NONFINITE), (-np.nan, kernel.NONFINITE),
                                           (np.inf, kernel.NONFINITE), (-np.inf, kernel.ROBUST)])
def test_non_finite_entries_route_each_row(dtype, value, status):
    # a NaN of either sign and +inf are errors; -inf is a masked entry, exact on the robust path
    z = np.random.default_rng(2).normal(size=(2, 300))
    zc = z.copy()
    zc[1, 17] = value
    conv = {"bf16": _bf16, "f32": lambda a: a.astype(np.float32), "f64": lambda a: a}[dtype]
    zr_, zc_ = conv(z), conv(zc)
    if dtype == "bf16" and value != value:
        zc_[1, 17] = 0xFFC0 if np.signbit(value) else 0x7FC0  # a NaN with the sign asked for
    n = 2
    status_out = np.empty(n, np.int8)
    outs = [np.full(n, np.nan) for _ in range(3)] + [np.zeros(n, np.int64) for _ in range(2)] + \
        [np.full(n, np.nan) for _ in range(4)]
    p_top, ranks = np.full(n, np.nan), [np.zeros(n, np.int64) for _ in range(2)]
    kernel.rows(zr_, zc_, np.array([3, 3]), *outs, status_out, np.empty(300), np.empty(300), p_top, *ranks)
    assert list(status_out) == [kernel.OK, status]
    # row 0 is clean: the reference's top-1 probability and the label's rank on each side
    p = np.exp(z[0] - z[0].max())
    assert p_top[0] == pytest.approx(1.0 / p.sum(), rel=1e-2)  # bf16 rounding of the logits
    assert ranks[0][0] == int(np.sum(zr_[0].astype(np.float64) > zr_[0, 3].astype(np.float64))) or dtype == "bf16"


def test_candidate_ranges_beyond_700_nats_take_the_robust_path_and_stay_exact():
    # the candidate gives token 1 e^-750 of the top token's mass (its exp underflows); the reference
    # gives it real mass, so p·log(p/q) there is large: the fast sums would lose it
    zr = np.zeros(40)
    zc = np.zeros(40)
    zc[1] = -750.0
    td = divergence_logits(zr[None], zc[None])
    assert td.robust[0]
    ref = mp_reference(zr, zc)
    assert close(td.forward_kl[0], ref["forward"]) and close(td.reverse_kl[0], ref["reverse"])
    assert close(td.js[0], ref["js"])
    assert not divergence_logits(zr[None], (zc + (zc < -700) * 60.0)[None]).robust[0]  # 690 nats: fast path


def test_storage_dtypes_agree_and_identical_rows_give_exactly_zero():
    rng = np.random.default_rng(4)
    z = (rng.normal(size=(3, 5000)) * 3).astype(np.float32)
    zc = (z + rng.normal(size=z.shape).astype(np.float32) * np.float32(0.05))
    b, bc = _bf16(z), _bf16(zc)
    f32 = (b.astype(np.uint32) << 16).view(np.float32), (bc.astype(np.uint32) << 16).view(np.float32)
    from_bits = divergence_logits(b, bc)
    for pair in (f32, (f32[0].astype(np.float64), f32[1].astype(np.float64))):
        other = divergence_logits(*pair)
        for name in ("forward_kl", "reverse_kl", "js"):
            np.testing.assert_allclose(getattr(other, name), getattr(from_bits, name), rtol=1e-13, atol=0)
        assert np.array_equal(other.top1_ref, from_bits.top1_ref) and np.array_equal(other.top1_cand, from_bits.top1_cand)
    same = divergence_logits(b, b.copy())
    assert not same.forward_kl.any() and not same.reverse_kl.any() and not same.js.any()
    z64 = z[0].astype(np.float64)
    assert row_divergence(z64, z64 + 64.0) == (0.0, 0.0, 0.0)  # an exact constant offset (float32 + 64 in float64)


def test_blocks_single_rows_and_threads_give_the_same_bits():
    rng = np.random.default_rng(5)
    b, bc = _bf16(rng.normal(size=(9, 3000)) * 2), _bf16(rng.normal(size=(9, 3000)) * 2)
    whole = divergence_logits(b, bc, next_token=np.arange(9))
    parts = TokenDivergence.empty(np.arange(9), np.arange(9))
    kern = RowKernel(3000)
    for i0, i1 in ((0, 4), (4, 5), (5, 9)):
        assert kern.fill(b[i0:i1], bc[i0:i1], parts, i0) == []
    single = [kern(b[i], bc[i], i) for i in range(9)]
    assert parts.forward_kl.tobytes() == whole.forward_kl.tobytes() and parts.js.tobytes() == whole.js.tobytes()
    assert [s[0] for s in single] == list(whole.forward_kl) and [s[5] for s in single] == list(whole.p_ref)


SCRIPT = """
import hashlib, json, numpy as np
from kldcard.compare import kernel
from kldcard.compare.divergence import divergence_logits
rng = np.random.default_rng(8)
z = (rng.normal(size=(6, 4000)) * 3).astype(np.float32)
zc = z + rng.normal(size=z.shape).astype(np.float32) * np.float32(0.2)
bits = lambda a: (a.view(np.uint32) >> 16).astype(np.uint16)
h = hashlib.sha256()
for a, b in ((bits(z), bits(zc)), (z, zc), (z.astype(np.float64), zc.astype(np.float64))):
    td = divergence_logits(a, b, next_token=np.arange(6))
    for col in (td.forward_kl, td.reverse_kl, td.js, td.p_ref, td.p_cand):
        h.update(col.tobytes())
print(json.dumps({"sha": h.hexdigest(), "hits": sum(kernel.rows.stats.cache_hits.values()),
                  "misses": sum(kernel.rows.stats.cache_misses.values())}))
"""


def test_values_do_not_depend_on_numbas_disk_cache(tmp_path):
    # a fresh compile and a load from numba's cache must give the same bits (local and Dask
    # workers mix both); a separately compiled inner function once broke this
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba-cache")}

    def run() -> dict:
        out = subprocess.run([sys.executable, "-c", SCRIPT], env=env, capture_output=True, text=True, check=True)
        return json.loads(out.stdout)

    cold, warm = run(), run()
    assert cold["misses"] == 3 and cold["hits"] == 0  # compiled: bf16, f32, f64
    assert warm["hits"] == 3 and warm["misses"] == 0  # loaded from the cache
    assert cold["sha"] == warm["sha"]
    ns: dict = {}
    exec(SCRIPT.replace("print(", "result = ("), ns)  # this process (whatever its cache state)
    assert json.loads(ns["result"])["sha"] == cold["sha"]


def test_blocks_that_do_not_fit_the_kernel_are_refused_not_read_past():
    # the compiled loops skip bounds checks, so RowKernel checks shapes before calling them
    from kldcard.errors import InputError

    kern = RowKernel(100)
    td = TokenDivergence.empty(np.arange(2), np.zeros(2, np.int64))
    for a, b in ((np.zeros((2, 100)), np.zeros((2, 99))), (np.zeros((2, 101)), np.zeros((2, 101))),
                 (np.zeros(100), np.zeros(100))):
        with pytest.raises(InputError, match="do not fit"):
            kern.fill(a, b, td, 0)
    with pytest.raises(InputError, match="do not fit"):
        RowKernel(0).fill(np.zeros((1, 0)), np.zeros((1, 0)), td, 0)
    with pytest.raises(InputError, match="do not fit"):
        row_divergence(np.zeros(5), np.zeros(6))
