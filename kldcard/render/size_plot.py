"""The chart every quantizer publishes: mean KLD (with its interval) and p99 against bits per weight.

One point per candidate with a known size: the mean forward KL(P_ref ‖ P_cand) in nats with its
interval as an error bar, the p99 as a hollow triangle above it, candidates on the Pareto front
(:mod:`kldcard.compare.pareto`) filled and joined by a line, dominated ones hollow. Candidates measured
across stacks on purpose are drawn apart (grey squares, own legend entry, never on the front line):
their KLD holds the stack difference too. Written as PNG (for the card) and SVG (the Hub renders it
sharp), both without timestamps so a rerun on the same numbers gives the same files.
"""

from __future__ import annotations

import os
from pathlib import Path

from kldcard.errors import InputError
from kldcard.render.fidelity import SizePoint, size_points, standings
from kldcard.render.plot import PLOT_FLOOR_NATS, pyplot, save_figure

__all__ = ["SIZE_CHART", "SizePoint", "plot_kld_vs_size", "size_chart_for", "write_size_chart"]

SIZE_CHART = "kld_vs_size.png"  # written next to the per-position plot (and its .svg twin)


def plot_kld_vs_size(path: str | os.PathLike[str], points: list[SizePoint], *, title: str | None = None
                     ) -> tuple[Path, Path]:
    """Write ``path`` (PNG) and the same chart as SVG next to it; returns both paths. Atomic writes."""
    if not points:
        raise InputError("nothing to plot: no candidate has a known size")
    plt = pyplot()
    import matplotlib as mpl

    mpl.rcParams["svg.hashsalt"] = "kldcard"  # stable element ids in the SVG
    png = Path(path)
    svg = png.with_suffix(".svg")

    def y(v: float) -> float:
        return max(v, PLOT_FLOOR_NATS)

    fig, ax = plt.subplots(figsize=(7.5, 4.8))
    try:
        same = sorted((p for p in points if not p.cross_stack), key=lambda p: p.bits_per_weight)
        front = [p for p in same if p.front]
        if len(front) > 1:
            ax.plot([p.bits_per_weight for p in front], [y(p.mean) for p in front], color="#1f77b4", lw=1,
                    alpha=0.6, zorder=1, label="Pareto front (no smaller candidate is closer)")
        labelled: set[str] = set()
        for p in points:
            if p.cross_stack:
                color, marker, face, key = "#7f7f7f", "s", "#7f7f7f", "measured across stacks (not comparable)"
            elif p.front:
                color, marker, face, key = "#1f77b4", "o", "#1f77b4", "mean KLD, on the front"
            else:
                color, marker, face, key = "#d62728", "o", "white", "mean KLD, behind or dominated"
            err = None
            if p.ci_low is not None and p.ci_high is not None:
                err = [[max(y(p.mean) - y(p.ci_low), 0.0)], [max(y(p.ci_high) - y(p.mean), 0.0)]]
            ax.errorbar([p.bits_per_weight], [y(p.mean)], yerr=err, fmt=marker, color=color, mfc=face, ms=7,
                        capsize=3, lw=1, zorder=3, label=None if key in labelled else key)
            labelled.add(key)
            if p.p99 is not None:
                ax.scatter([p.bits_per_weight], [y(p.p99)], marker="^", s=30, facecolors="none", edgecolors=color,
                           lw=1, zorder=2, label=None if "p99" in labelled else "p99 KLD")
                labelled.add("p99")
            ax.annotate(p.name, (p.bits_per_weight, y(p.mean)), textcoords="offset points", xytext=(7, -3),
                        fontsize=8, color="#333333")
        ax.set_yscale("log")
        ax.set_xlabel("bits per weight (from the file's own tensor table)")
        ax.set_ylabel("forward KL(P_ref ‖ P_cand), nats (log)")
        lo = min(p.bits_per_weight for p in points)
        hi = max(p.bits_per_weight for p in points)
        pad = max(0.5, 0.15 * (hi - lo))
        ax.set_xlim(lo - pad, hi + 2.5 * pad)  # room for the names on the right
        ax.grid(True, which="major", lw=0.3, alpha=0.5)
        # below the axes: inside, it can hide a point (a p99 near the top, a name on the right)
        ax.legend(fontsize=7, loc="upper center", bbox_to_anchor=(0.5, -0.2), ncol=2, frameon=False)
        ax.set_title(title or "Fidelity per bit: mean KLD with its interval, and p99, against size",
                     fontsize=10, loc="left")
        fig.tight_layout()
        save_figure(fig, png, "the size chart", svg=svg, bbox_inches="tight")
    finally:
        plt.close(fig)
    return png, svg


def size_chart_for(evaluation, plot: str | os.PathLike[str]) -> Path | None:
    """Where the size chart of ``evaluation`` goes (next to the per-position ``plot``), or None when no
    candidate's size is known (older results): then no chart is drawn or referenced."""
    if not any(c.model.size is not None for c in evaluation.candidates):
        return None
    return Path(plot).with_name(SIZE_CHART)


def write_size_chart(evaluation, plot: str | os.PathLike[str]) -> Path | None:
    """Draw the size chart of ``evaluation`` next to ``plot`` (PNG and SVG); its PNG path, or None."""
    path = size_chart_for(evaluation, plot)
    if path is None:
        return None
    return plot_kld_vs_size(path, size_points(evaluation, standings(evaluation)))[0]
