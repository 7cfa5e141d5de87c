"""The depth plot: per-position forward KL(P_ref ‖ P_cand) in nats over depth (tokens of left context),
the windows overlaid, clusters shaded, the onset drawn. What the per-position plot becomes when the
windows are long (:data:`kldcard.render.depth.LONG_CONTEXT`). matplotlib as in :mod:`kldcard.render.plot`.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kldcard.errors import InputError
from kldcard.render.plot import PLOT_FLOOR_NATS, finish_panels, pyplot, style_panel
from kldcard.schema import DepthProfile

__all__ = ["DepthSeries", "depth_series", "plot_depth"]

MAX_WINDOWS_DRAWN = 24  # more windows than this: the first ones are drawn, the title says how many


@dataclass(frozen=True)
class DepthSeries:
    """Per-position values of one candidate: ``depth`` (position in its window), ``window`` (id),
    ``kld`` in nats (forward), ``top1_agree``; ``profile`` its onset and clusters (None: not measured)."""

    name: str
    depth: np.ndarray
    window: np.ndarray
    kld: np.ndarray
    top1_agree: np.ndarray
    profile: DepthProfile | None = None

    def __post_init__(self) -> None:
        n = len(self.depth)
        if not (len(self.window) == len(self.kld) == len(self.top1_agree) == n) or n == 0:
            raise InputError(f"per-token values of {self.name!r}: empty or of different lengths")


def depth_series(paths: list[str], per_token: list[str], names: list[str] | None = None) -> list[DepthSeries]:
    """One :class:`DepthSeries` per compare result: its per-token file (``per_token`` in order, or the
    file the result names), depths and windows from the reference's context, profile from the result;
    ``names`` label them instead of the names the results hold."""
    from kldcard.render.evaluation import candidate_name, load_result, plot_series

    out = []
    for i, (path, s) in enumerate(zip(paths, plot_series(paths, per_token))):
        r = load_result(path)
        ctx = r.reference.context
        stride = ctx.stride or ctx.n_ctx
        pos = np.asarray(s.positions, np.int64)
        multi = bool(stride) and (ctx.n_chunks or 1) > 1
        depth, win = (pos % stride, pos // stride) if multi else (pos, np.zeros(len(pos), np.int64))
        out.append(DepthSeries(names[i] if names else candidate_name(r), depth, win, s.kld, s.top1_agree, r.depth))
    return out


def plot_depth(path: str | os.PathLike[str], series: list[DepthSeries], *, title: str | None = None) -> Path:
    """Write a PNG: one panel per candidate, KLD (nats, log) against depth, one line per window, red ``x``
    where the top-1 token differs, clusters shaded, the onset a dashed line. Atomic write."""
    if not series:
        raise InputError("nothing to plot: no per-token values given")
    plt = pyplot()
    out = Path(path)
    fig, axes = plt.subplots(len(series), 1, figsize=(9, 2.8 * len(series)), sharex=True, squeeze=False)
    try:
        for ax, s in zip(axes[:, 0], series):
            kld = np.clip(np.asarray(s.kld, dtype=np.float64), PLOT_FLOOR_NATS, None)
            depth, win = np.asarray(s.depth), np.asarray(s.window)
            ids = np.unique(win)
            for w in ids[:MAX_WINDOWS_DRAWN]:
                sel = win == w
                ax.plot(depth[sel], kld[sel], lw=0.6, alpha=0.8 if len(ids) == 1 else 0.45, color="#1f77b4")
            miss = ~np.asarray(s.top1_agree, dtype=bool)
            if miss.any():
                ax.scatter(depth[miss], kld[miss], marker="x", s=12, color="#d62728", lw=0.7,
                           label=f"top-1 differs ({int(miss.sum())} of {len(depth)})", zorder=3)
            p = s.profile
            if p is not None:
                wide = max(1.0, (p.max_depth + 1) / 250)  # a one-position cluster stays visible
                for i, c in enumerate(p.top_clusters):
                    ax.axvspan(c.start - wide / 2, max(c.end + 1, c.start + wide / 2), color="#ff7f0e", alpha=0.35,
                               lw=0, label="clusters (largest shares)" if i == 0 else None)
                if p.onset is not None and p.onset.detected and p.onset.depth is not None:
                    ax.axvline(p.onset.depth, color="black", ls="--", lw=1.0,
                               label=f"onset ~{p.onset.depth:,} tokens")
                elif p.onset is not None:
                    ax.axvline(p.onset.baseline_end, color="grey", ls=":", lw=0.8,
                               label="end of the early part (no onset)")
            shown = f", {min(len(ids), MAX_WINDOWS_DRAWN)} of {len(ids)} windows" if len(ids) > 1 else ""
            style_panel(ax, f"{s.name}{shown}", "best")
        finish_panels(fig, axes, "depth: token position in the context window",
                      title or "Forward KL(P_ref ‖ P_cand) over depth, nats", out)
    finally:
        plt.close(fig)
    return out
