"""A bf16 split-softmax simulator: one query, configurable group boundaries.

Attention for one query over keys ``K`` and values ``V`` is computed group by group, as split-KV
kernels do (FlashAttention 2's split kernel, FlashInfer, Triton decode kernels). Within a group the
keys are visited in blocks of ``block_n`` with the online softmax: a running maximum ``m``, a running
sum ``l`` and an output accumulator ``acc`` that are rescaled by ``exp(m_old - m_new)`` whenever the
maximum grows. Each group ends with a partial output ``o_g = acc / l`` and its log-sum-exp
``lse_g = m + log l``; the groups are then combined: ``lse = log Σ exp(lse_g)``,
``o = Σ exp(lse_g - lse) · o_g``.

``precision="bf16"`` reproduces the kernels' rounding points:

- inputs ``q, K, V`` are bf16; scores ``q·k × scale`` and all softmax statistics are float32;
- the probability tile ``exp(s - m)`` is rounded to bf16 before the P·V product (tensor cores
  multiply bf16), relative to the *group's* running maximum: this is the rounding that does not
  commute with rescaling, so moving a group boundary changes the result;
- partial outputs are rounded to bf16 when ``partial_dtype="bf16"`` (kernels that keep partial states
  in the activation dtype; FA2 keeps them in float32 — use ``partial_dtype="f32"`` for it, the P-tile
  rounding alone already makes groupings differ);
- the combined output is rounded to bf16.

``precision="f64"`` does the same algorithm in float64 with no rounding: every grouping gives the
exact result up to float64 rounding (~1e-15 relative).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from kldcard.errors import UsageError


def round_bf16(x: np.ndarray) -> np.ndarray:
    """Round float32 values to the nearest bf16 (ties to even); returns float32 holding bf16 values."""
    a = np.ascontiguousarray(x, dtype=np.float32)
    bits = a.view(np.uint32)
    # Round to nearest even on the 16 dropped bits; NaN stays NaN (keep a mantissa bit set).
    rounded = (bits + np.uint32(0x7FFF) + ((bits >> np.uint32(16)) & np.uint32(1))) & np.uint32(0xFFFF0000)
    rounded = np.where(np.isnan(a), bits | np.uint32(0x00400000), rounded).astype(np.uint32)
    return rounded.view(np.float32).reshape(a.shape)


def even_boundaries(n_keys: int, n_groups: int, block_n: int = 64) -> list[int]:
    """Boundaries of ``n_groups`` groups of whole KV blocks, as FA2's split kernel assigns them.

    Each group gets ``ceil(n_blocks / n_groups)`` blocks; the last one gets what is left. Returns the
    list ``[0, b1, ..., n_keys]``.
    """
    if n_keys < 1 or n_groups < 1 or block_n < 1:
        raise UsageError("keys, groups and block size must all be at least 1")
    n_blocks = -(-n_keys // block_n)
    per = -(-n_blocks // n_groups) * block_n
    cuts = list(range(0, n_keys, per)) + [n_keys]
    return cuts


def _check_boundaries(boundaries: Sequence[int], n_keys: int) -> list[int]:
    b = [int(x) for x in boundaries]
    if len(b) < 2 or b[0] != 0 or b[-1] != n_keys or any(x >= y for x, y in zip(b, b[1:])):
        raise UsageError(
            f"group boundaries must rise strictly from 0 to the number of keys ({n_keys}), got {b[:6]}..."
        )
    return b


def split_attention(
    q: np.ndarray,
    k: np.ndarray,
    v: np.ndarray,
    boundaries: Sequence[int],
    *,
    precision: str = "bf16",
    block_n: int = 64,
    partial_dtype: str = "bf16",
    scale: float | None = None,
) -> np.ndarray:
    """Attention output for one query ``q [d]`` over ``k [n, d]``, ``v [n, dv]`` in the given groups.

    ``boundaries`` is ``[0, b1, ..., n]``; group ``g`` covers keys ``[b_g, b_{g+1})``. Returns
    float64 holding exact float64 values (``precision="f64"``) or bf16 values (``"bf16"``).
    """
    if precision not in ("bf16", "f64"):
        raise UsageError(f"precision must be bf16 or f64, got {precision!r}")
    if partial_dtype not in ("bf16", "f32"):
        raise UsageError(f"partial dtype must be bf16 or f32, got {partial_dtype!r}")
    q = np.asarray(q)
    k = np.asarray(k)
    v = np.asarray(v)
    if q.ndim != 1 or k.ndim != 2 or v.ndim != 2 or k.shape[1] != q.shape[0] or v.shape[0] != k.shape[0]:
        raise UsageError("shapes must be q [d], k [n, d], v [n, dv]")
    n = k.shape[0]
    b = _check_boundaries(boundaries, n)
    scale = 1.0 / np.sqrt(q.shape[0]) if scale is None else scale

    if precision == "f64":
        ft = np.float64
        qf, kf, vf = (x.astype(np.float64) for x in (q, k, v))
        tile = partial = final = lambda x: x  # noqa: E731  (no rounding in float64 mode)
    else:
        ft = np.float32
        qf, kf, vf = (round_bf16(x.astype(np.float32)) for x in (q, k, v))
        tile = final = round_bf16
        partial = round_bf16 if partial_dtype == "bf16" else (lambda x: x)
    scores = (kf @ qf).astype(ft) * ft(scale)

    lses, outs = [], []
    for g0, g1 in zip(b, b[1:]):
        m = ft(-np.inf)
        l_sum = ft(0.0)
        acc = np.zeros(vf.shape[1], dtype=ft)
        for s0 in range(g0, g1, block_n):
            s = scores[s0 : min(s0 + block_n, g1)]
            m_new = max(m, ft(s.max()))
            alpha = ft(np.exp(m - m_new)) if np.isfinite(m) else ft(0.0)
            p = np.exp(s - m_new).astype(ft)
            # The row sum uses the unrounded probabilities; the P·V product sees the rounded tile.
            l_sum = ft(l_sum * alpha + p.sum(dtype=ft))
            acc = (acc * alpha + tile(p) @ vf[s0 : s0 + len(s)]).astype(ft)
            m = m_new
        outs.append(partial((acc / l_sum).astype(ft)))
        lses.append(ft(m + np.log(l_sum)))
    lse_arr = np.array(lses, dtype=ft)
    lse = ft(lse_arr.max() + np.log(np.exp(lse_arr - lse_arr.max()).sum(dtype=ft)))
    weights = np.exp(lse_arr - lse).astype(ft)
    out = (weights[:, None] * np.stack(outs)).sum(axis=0, dtype=ft)
    return final(out.astype(ft)).astype(np.float64)


def exact_attention(q: np.ndarray, k: np.ndarray, v: np.ndarray, scale: float | None = None) -> np.ndarray:
    """Plain float64 softmax attention (one group, no online rescaling): the exact reference."""
    qf, kf, vf = (np.asarray(x, dtype=np.float64) for x in (q, k, v))
    scale = 1.0 / np.sqrt(qf.shape[0]) if scale is None else scale
    s = kf @ qf * scale
    w = np.exp(s - s.max())
    return (w / w.sum()) @ vf


@dataclass
class Divergence:
    """Two groupings' outputs for the same inputs."""

    boundaries_a: list[int]
    boundaries_b: list[int]
    out_a: np.ndarray
    out_b: np.ndarray
    n_different: int  # output elements whose bf16 values differ
    max_abs_diff: float
    inputs: dict[str, np.ndarray] = field(repr=False, default_factory=dict)
    seed: int | None = None
    tries: int = 0

    def to_dict(self) -> dict[str, object]:
        return {
            "groups_a": len(self.boundaries_a) - 1,
            "groups_b": len(self.boundaries_b) - 1,
            "n_different": self.n_different,
            "n_elements": int(self.out_a.size),
            "max_abs_diff": self.max_abs_diff,
            "seed": self.seed,
            "tries": self.tries,
        }


def random_inputs(
    n_keys: int, head_dim: int, seed: int, score_scale: float = 1.0
) -> dict[str, np.ndarray]:
    """bf16-representable Gaussian q, K, V; ``score_scale`` widens the score spread (peakier softmax)."""
    rng = np.random.default_rng(seed)
    q = round_bf16(rng.standard_normal(head_dim).astype(np.float32) * np.float32(score_scale))
    k = round_bf16(rng.standard_normal((n_keys, head_dim)).astype(np.float32))
    v = round_bf16(rng.standard_normal((n_keys, head_dim)).astype(np.float32))
    return {"q": q, "k": k, "v": v}


def compare_groupings(
    inputs: dict[str, np.ndarray],
    boundaries_a: Sequence[int],
    boundaries_b: Sequence[int],
    *,
    precision: str = "bf16",
    block_n: int = 64,
    partial_dtype: str = "bf16",
) -> Divergence:
    """Run both groupings on the same inputs and count differing output elements."""
    kw = {"precision": precision, "block_n": block_n, "partial_dtype": partial_dtype}
    a = split_attention(inputs["q"], inputs["k"], inputs["v"], boundaries_a, **kw)
    b = split_attention(inputs["q"], inputs["k"], inputs["v"], boundaries_b, **kw)
    diff = np.abs(a - b)
    return Divergence(
        boundaries_a=list(boundaries_a),
        boundaries_b=list(boundaries_b),
        out_a=a,
        out_b=b,
        n_different=int(np.count_nonzero(a != b)),
        max_abs_diff=float(diff.max()),
        inputs=inputs,
    )


def find_divergent_inputs(
    n_keys: int,
    head_dim: int,
    boundaries_a: Sequence[int],
    boundaries_b: Sequence[int],
    *,
    seed: int = 0,
    max_tries: int = 64,
    block_n: int = 64,
    partial_dtype: str = "bf16",
) -> Divergence | None:
    """Search random inputs until two groupings give different bf16 outputs; None if none found.

    Seeds ``seed, seed + 1, ...`` are tried with score spreads cycling through 0.5, 1, 2 and 4 (a
    peakier softmax puts more weight on few keys, which changes which rounding dominates).
    """
    spreads = (0.5, 1.0, 2.0, 4.0)
    for t in range(max_tries):
        inputs = random_inputs(n_keys, head_dim, seed + t, spreads[t % len(spreads)])
        d = compare_groupings(
            inputs, boundaries_a, boundaries_b, precision="bf16", block_n=block_n, partial_dtype=partial_dtype
        )
        if d.n_different:
            d.seed, d.tries = seed + t, t + 1
            return d
    return None


def simulate_groupings(
    n_keys: int,
    head_dim: int,
    group_counts: Sequence[int],
    *,
    block_n: int = 64,
    seed: int = 0,
    tries: int = 16,
    partial_dtype: str = "bf16",
) -> dict[str, object]:
    """Same random inputs, several group counts: how far apart are the bf16 and float64 outputs?

    Compares every grouping with the first one. Seeds ``seed .. seed + tries - 1`` are searched for
    inputs where the bf16 outputs differ (the first seed that shows a difference is kept). Returns a
    dict with stable keys; differences are absolute differences of output elements.
    """
    counts = [int(g) for g in group_counts]
    if len(counts) < 2:
        raise UsageError("give at least two group counts to compare")
    if n_keys < 1 or head_dim < 1 or tries < 1:
        raise UsageError("keys, head dimension and tries must all be at least 1")
    bounds = [even_boundaries(n_keys, g, block_n) for g in counts]
    chosen = None
    for t in range(tries):
        inputs = random_inputs(n_keys, head_dim, seed + t, (0.5, 1.0, 2.0, 4.0)[t % 4])
        runs = [compare_groupings(inputs, bounds[0], b, block_n=block_n, partial_dtype=partial_dtype) for b in bounds[1:]]
        chosen = (seed + t, t + 1, inputs, runs)
        if any(r.n_different for r in runs):
            break
    assert chosen is not None
    used_seed, n_tries, inputs, runs = chosen
    exact = exact_attention(inputs["q"], inputs["k"], inputs["v"])
    rows = []
    for g, b, r in zip(counts[1:], bounds[1:], runs):
        f64 = compare_groupings(inputs, bounds[0], b, precision="f64", block_n=block_n)
        rows.append(
            {
                "groups": g,
                "actual_groups": len(b) - 1,
                "group_tokens": b[1] - b[0],
                "bf16_n_different": r.n_different,
                "bf16_max_abs_diff": r.max_abs_diff,
                "f64_max_abs_diff": f64.max_abs_diff,
                "bf16_max_abs_error_vs_exact": float(np.abs(r.out_b - exact).max()),
            }
        )
    return {
        "n_keys": n_keys,
        "head_dim": head_dim,
        "block_n": block_n,
        "partial_dtype": partial_dtype,
        "seed": used_seed,
        "tries": n_tries,
        "baseline": {
            "groups": counts[0],
            "actual_groups": len(bounds[0]) - 1,
            "group_tokens": bounds[0][1] - bounds[0][0],
            "bf16_max_abs_error_vs_exact": float(np.abs(runs[0].out_a - exact).max()),
        },
        "compared": rows,
    }
