"""Statistics of per-token values: what a card quotes and how uncertain it is.

Conventions follow llama.cpp's ``llama-perplexity --kl-divergence`` where users know them
(see reference/llamacpp-kld.md §4): SE of a mean is sqrt(v/(N−1)) with v the population variance
(tokens treated as i.i.d., no autocorrelation correction); percentiles interpolate linearly at
f·(N−1); top-1 agreement has SE sqrt(p(1−p)/(N−1)); RMS Δp has SE 0.5·SE(Δp²)/RMS. Added here: a
seeded confidence interval of the mean that respects the dependence between tokens (a block
bootstrap, :mod:`kldcard.compare.bootstrap`: whole context windows when the capture has >= 20 of
them, else circular moving blocks of a Politis–White length; the per-token i.i.d. bootstrap stays
available as method ``iid``), with the effective sample size next to n; summaries per output range
(position bucket), and runs of consecutive top-1 disagreement (divergence comes in clusters).

Divergences are in nats; "KLD" is KL(P_ref ‖ P_cand).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import Field

from kldcard.compare.bootstrap import MIN_CLUSTERS, block_bootstrap_mean_ci
from kldcard.errors import UsageError
from kldcard.schema import RecordModel

__all__ = [
    "DEFAULT_PERCENTILES",
    "BootstrapOptions",
    "RangeStats",
    "Runs",
    "Stats",
    "UncertaintyMethod",
    "bucket_edges",
    "disagreement_runs",
    "proportion",
    "range_stats",
    "rms",
    "summarize",
]

# llama.cpp's KLD percentile set.
DEFAULT_PERCENTILES: tuple[float, ...] = (99.9, 99.0, 95.0, 90.0, 10.0, 5.0, 1.0, 0.1)


UncertaintyMethod = Literal["auto", "cluster", "circular-block", "iid"]


class BootstrapOptions(RecordModel):
    """How the interval of a mean is computed (see :mod:`kldcard.compare.bootstrap`)."""

    resamples: int = Field(1000, ge=0, description="0 disables the bootstrap (SE only); otherwise >= 2")
    level: float = Field(0.95, gt=0, lt=1)
    seed: int = 0
    method: UncertaintyMethod = Field(
        "auto", description="auto: cluster (whole context windows) with >= min_windows windows, else "
        "circular-block (moving blocks, Politis-White length); iid: per-token bootstrap (tokens independent)")
    interval: Literal["auto", "studentized", "t", "percentile", "basic"] = Field(
        "auto", description="auto: studentized (bootstrap-t) for the block methods, percentile for iid")
    min_windows: int = Field(MIN_CLUSTERS, ge=2, description="fewest context windows for the cluster method")


class Stats(RecordModel):
    """Summary of one per-token quantity (fields as :class:`kldcard.schema.Summary`, plus counts)."""

    n: int
    n_infinite: int = 0
    mean: float
    se: float | None = Field(None, description="standard error of the mean, tokens i.i.d.")
    ci_low: float | None = None
    ci_high: float | None = None
    se_block: float | None = Field(None, description="standard error of the mean from the block bootstrap "
                                   "(dependence between tokens accounted for)")
    n_eff: float | None = Field(None, description="effective sample size s²/se_block²: the number of "
                                "independent tokens that would give the same standard error")
    block_length: int | None = Field(None, description="tokens per block (circular-block method)")
    n_blocks: int | None = Field(None, description="windows resampled (cluster) or blocks per resample "
                                 "(circular-block)")
    median: float | None = None
    percentiles: dict[str, float] = Field(default_factory=dict, description="'99.9' -> value")
    min: float | None = None
    max: float | None = None


def pct_key(p: float) -> str:
    return f"{p:g}"


def percentiles_of(x: np.ndarray, percentiles: Sequence[float]) -> list[float]:
    """Linear interpolation at f·(N−1) of the sorted values (numpy's default, llama.cpp's rule);
    a percentile that interpolates towards +inf is +inf (numpy would give NaN)."""
    xs = np.sort(x)
    n = len(xs)
    out = []
    for p in percentiles:
        pos = min(max(p / 100.0, 0.0), 1.0) * (n - 1)
        lo = int(math.floor(pos))
        hi = min(lo + 1, n - 1)
        frac = pos - lo
        a, b = float(xs[lo]), float(xs[hi])
        out.append(a if frac == 0.0 or a == b else (math.inf if math.isinf(b) else a + (b - a) * frac))
    return out


def summarize(
    values: np.ndarray,
    *,
    percentiles: Sequence[float] = DEFAULT_PERCENTILES,
    bootstrap: BootstrapOptions | None = None,
    blocks: np.ndarray | None = None,
) -> Stats:
    """Mean ± SE, bootstrap CI, median, percentiles, min and max of ``values`` (NaN entries are
    dropped: positions without a next token). +inf makes the mean inf and drops SE/CI.

    ``blocks``: the context window of each value (one id per value), used by the cluster method."""
    x = np.asarray(values, dtype=np.float64)
    keep = ~np.isnan(x)
    x = x[keep]
    ids = None if blocks is None else np.asarray(blocks)[keep]
    n = len(x)
    if n == 0:
        return Stats(n=0, mean=math.nan)
    n_inf = int(np.count_nonzero(np.isinf(x)))
    mean = float(x.mean())
    se = None
    extra: dict = {}
    if n_inf == 0 and n > 1:
        v = float(np.mean((x - mean) ** 2))
        se = math.sqrt(v / (n - 1))
        extra = _interval(x, ids, bootstrap or BootstrapOptions())
    *qs, median = percentiles_of(x, [*percentiles, 50.0])  # one sort for all of them
    return Stats(
        n=n,
        n_infinite=n_inf,
        mean=mean,
        se=se,
        **extra,
        median=median,
        percentiles={pct_key(p): float(q) for p, q in zip(percentiles, qs)},
        min=float(x.min()),
        max=float(x.max()),
    )


def _interval(x: np.ndarray, ids: np.ndarray | None, opts: BootstrapOptions) -> dict:
    """The interval fields of :class:`Stats` (empty when the bootstrap is off)."""
    if opts.resamples < 2:
        return {}
    try:
        ci = block_bootstrap_mean_ci(x, blocks=ids, level=opts.level, resamples=opts.resamples, seed=opts.seed,
                                     method=opts.method, interval=opts.interval, min_clusters=opts.min_windows)
    except ValueError as exc:  # e.g. method cluster over a single window
        raise UsageError(f"uncertainty method {opts.method}: {exc}") from None
    out = {"ci_low": ci.lo, "ci_high": ci.hi}
    if ci.method != "iid":
        out.update(se_block=ci.se, n_eff=ci.n_eff if math.isfinite(ci.n_eff) else None,
                   block_length=ci.block_length, n_blocks=ci.n_blocks)
    return out


def resolved_method(opts: BootstrapOptions, blocks: np.ndarray | None) -> str:
    """The method ``opts`` resolves to for these window ids: cluster, circular-block, iid or none."""
    if opts.resamples < 2:
        return "none"
    if opts.method != "auto":
        return opts.method
    n_ids = 0 if blocks is None else len(np.unique(blocks))
    return "cluster" if n_ids >= opts.min_windows else "circular-block"


def proportion(flags: np.ndarray) -> tuple[float, float | None]:
    """(p, SE) of a 0/1 array; SE = sqrt(p(1−p)/(N−1))."""
    f = np.asarray(flags, dtype=bool)
    n = len(f)
    if n == 0:
        return math.nan, None
    p = float(f.mean())
    return p, (math.sqrt(p * (1.0 - p) / (n - 1)) if n > 1 else None)


def rms(values: np.ndarray) -> tuple[float, float | None]:
    """(RMS, SE) of ``values`` (NaN dropped); SE = 0.5·SE(x²)/RMS as llama.cpp prints it."""
    x = np.asarray(values, dtype=np.float64)
    x = x[~np.isnan(x)]
    n = len(x)
    if n == 0:
        return math.nan, None
    sq = x * x
    r = math.sqrt(float(sq.mean()))
    if n < 2 or r == 0.0:
        return r, None
    se_sq = math.sqrt(float(np.mean((sq - sq.mean()) ** 2)) / (n - 1))
    return r, 0.5 * se_sq / r


# ----------------------------------------------------------------------------------------------
# Output ranges
# ----------------------------------------------------------------------------------------------


def bucket_edges(positions: np.ndarray, spec: str | Sequence[int] | None = None) -> list[int]:
    """Edges e0 < e1 < ... of position buckets [e_i, e_{i+1}) covering every position.

    ``spec``: None or ``"pow2"`` (default: 0, 128, 256, 512, ... doubling — early positions are
    where short-context effects live, late ones where long-context kernels diverge);
    ``"width:N"`` fixed widths; ``"0,512,2048"`` explicit edges (the last bucket runs to the end);
    or a sequence of ints.
    """
    pos = np.asarray(positions)
    end = int(pos.max()) + 1 if len(pos) else 1
    if spec is None or spec == "pow2":
        edges, e = [0], 128
        while e < end:
            edges.append(e)
            e *= 2
    elif isinstance(spec, str) and spec.startswith("width:"):
        try:
            width = int(spec.split(":", 1)[1])
        except ValueError:
            raise UsageError(f"bad bucket spec {spec!r}: expected width:N") from None
        if width < 1:
            raise UsageError(f"bad bucket spec {spec!r}: width must be >= 1")
        edges = list(range(0, end, width))
    else:
        try:
            edges = [int(e) for e in (spec.split(",") if isinstance(spec, str) else spec)]
        except ValueError:
            raise UsageError(f"bad bucket spec {spec!r}: expected pow2, width:N or comma-separated edges") from None
        if not edges or edges[0] != 0 or any(b <= a for a, b in zip(edges, edges[1:])):
            raise UsageError(f"bad bucket edges {spec!r}: must start at 0 and increase strictly")
        edges = [e for e in edges if e < end] or [0]
    return [*edges, max(end, edges[-1] + 1)]


class RangeStats(RecordModel):
    """One output range [start, end) of positions. Divergences in nats."""

    start: int
    end: int
    n: int
    forward_kl: Stats
    reverse_kl_mean: float
    js_mean: float
    top1_agreement: float
    top1_agreement_se: float | None
    rms_delta_p: float | None


def range_stats(
    positions: np.ndarray,
    forward: np.ndarray,
    reverse: np.ndarray,
    js: np.ndarray,
    agree: np.ndarray,
    delta_p: np.ndarray,
    edges: Sequence[int],
    *,
    percentiles: Sequence[float] = DEFAULT_PERCENTILES,
    bootstrap: BootstrapOptions | None = None,
    blocks: np.ndarray | None = None,
) -> list[RangeStats]:
    """Per-bucket summaries; empty buckets are left out. ``bootstrap`` (default: none, SE only) gives each
    range's mean KLD the same kind of block interval and effective n as the whole (``blocks``: the
    context window of each value; a range with fewer windows than the cluster method needs falls back
    to circular blocks, as ``auto`` does for the whole)."""
    out = []
    boot = bootstrap or BootstrapOptions(resamples=0)
    for a, b in zip(edges, edges[1:]):
        sel = (positions >= a) & (positions < b)
        if not sel.any():
            continue
        p, se = proportion(agree[sel])
        r, _ = rms(delta_p[sel])
        ids = None if blocks is None else blocks[sel]
        opts = boot
        if boot.method == "cluster" and (ids is None or len(np.unique(ids)) < 2):
            opts = boot.model_copy(update={"method": "circular-block"})
        out.append(
            RangeStats(
                start=int(a),
                end=int(b),
                n=int(sel.sum()),
                forward_kl=summarize(forward[sel], percentiles=percentiles, bootstrap=opts, blocks=ids),
                reverse_kl_mean=float(reverse[sel].mean()),
                js_mean=float(js[sel].mean()),
                top1_agreement=p,
                top1_agreement_se=se,
                rms_delta_p=None if math.isnan(r) else r,
            )
        )
    return out


# ----------------------------------------------------------------------------------------------
# Runs of top-1 disagreement
# ----------------------------------------------------------------------------------------------


class Run(RecordModel):
    start: int = Field(description="position of the first disagreeing token")
    length: int = Field(description="consecutive scored positions that disagree")


class Runs(RecordModel):
    """Maximal runs of consecutive scored positions whose top-1 tokens differ."""

    n_runs: int
    n_disagreements: int
    longest: int
    mean_length: float | None
    length_histogram: dict[str, int] = Field(description="run length ('1', '2', '3-4', '5-8', ...) -> count")
    top: list[Run] = Field(description="the longest runs, longest first (ties: earliest first)")


def disagreement_runs(positions: np.ndarray, agree: np.ndarray, top: int = 10) -> Runs:
    """Runs over the scored positions in order (a gap in positions does not break a run: the
    positions between were not scored)."""
    dis = ~np.asarray(agree, dtype=bool)
    padded = np.concatenate([[False], dis, [False]]).astype(np.int8)
    change = np.flatnonzero(np.diff(padded))
    starts, ends = change[::2], change[1::2]
    lengths = ends - starts
    hist: dict[str, int] = {}
    for length in lengths:
        lo = 1 << max(0, int(length - 1).bit_length() - 1) if length > 2 else int(length)
        key = str(length) if length <= 2 else f"{lo + 1}-{lo * 2}"
        hist[key] = hist.get(key, 0) + 1
    order = np.lexsort((starts, -lengths))[:top]
    return Runs(
        n_runs=len(lengths),
        n_disagreements=int(dis.sum()),
        longest=int(lengths.max()) if len(lengths) else 0,
        mean_length=float(lengths.mean()) if len(lengths) else None,
        length_histogram=hist,
        top=[Run(start=int(positions[starts[i]]), length=int(lengths[i])) for i in order],
    )
