"""Plot per-position forward KL(P_ref ‖ P_cand) in nats, with top-1 disagreements marked (PNG).

matplotlib is an optional extra (``kldcard[plot]``); it is imported only here, with the Agg backend
so that no display is needed. The PNG carries no timestamp or software tag, so rerunning on the same
numbers gives the same file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kldcard.errors import EngineNotInstalled, InputError
from kldcard.files import atomic_path

# Log axis: a divergence of exactly 0 (identical distributions) cannot be drawn, so values are
# clipped to this floor (nats) and the axis label says so.
PLOT_FLOOR_NATS = 1e-12


@dataclass(frozen=True)
class PlotSeries:
    """Per-position values of one candidate: ``kld`` in nats (forward), ``top1_agree`` booleans."""

    name: str
    positions: np.ndarray
    kld: np.ndarray
    top1_agree: np.ndarray

    def __post_init__(self) -> None:
        n = len(self.positions)
        if len(self.kld) != n or len(self.top1_agree) != n:
            raise InputError(
                f"per-token values of {self.name!r}: {n} positions but {len(self.kld)} KLD values and "
                f"{len(self.top1_agree)} top-1 flags"
            )
        if n == 0:
            raise InputError(f"per-token values of {self.name!r} are empty; nothing to plot")


def pyplot():
    """matplotlib.pyplot with the Agg backend (no display), or the not-installed error naming the extra."""
    try:
        import matplotlib

        matplotlib.use("Agg", force=True)
        import matplotlib.pyplot as plt
    except ImportError:
        raise EngineNotInstalled("plot (matplotlib)", "plot", "matplotlib") from None
    return plt


def save_figure(fig, path: Path, what: str, *, svg: Path | None = None, **savefig) -> None:
    """Write ``fig`` to ``path`` as PNG (and to ``svg`` as SVG), atomically and byte-reproducibly (no
    software or date stamps); an OSError is one line naming ``what``."""
    try:
        with atomic_path(path, suffix=".png") as tmp:
            fig.savefig(tmp, format="png", dpi=110, metadata={"Software": None}, **savefig)
        if svg is not None:
            with atomic_path(svg, suffix=".svg") as tmp:
                fig.savefig(tmp, format="svg", metadata={"Date": None, "Creator": None}, **savefig)
    except OSError as exc:
        raise InputError(f"{path}: cannot write {what}: {exc.strerror or exc}") from None


def style_panel(ax, title: str, legend_loc: str) -> None:
    """One candidate's panel of a per-token KLD chart: log-scale nats, its name, legend and grid."""
    ax.set_yscale("log")
    ax.set_ylabel("nats (log)")
    ax.set_title(title, fontsize=9, loc="left")
    ax.legend(fontsize=7, loc=legend_loc)
    ax.grid(True, which="major", lw=0.3, alpha=0.5)


def finish_panels(fig, axes, xlabel: str, title: str, out: Path) -> None:
    """The shared x label and title of a column of panels, then the figure written to ``out``."""
    axes[-1, 0].set_xlabel(xlabel)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    save_figure(fig, out, "the plot")


def plot_per_position(path: str | os.PathLike[str], series: list[PlotSeries], *, title: str | None = None) -> Path:
    """Write a PNG of per-position forward KLD (nats, log scale) per candidate; positions where the
    candidate's top-1 token differs from the reference's are marked with a red ``x``. Atomic write."""
    if not series:
        raise InputError("nothing to plot: no per-token values given")
    plt = pyplot()
    out = Path(path)
    fig, axes = plt.subplots(len(series), 1, figsize=(9, 2.6 * len(series)), sharex=True, squeeze=False)
    try:
        for ax, s in zip(axes[:, 0], series):
            kld = np.clip(np.asarray(s.kld, dtype=np.float64), PLOT_FLOOR_NATS, None)
            pos = np.asarray(s.positions)
            ax.plot(pos, kld, lw=0.7, color="#1f77b4", label="KL(P_ref ‖ P_cand)")
            miss = ~np.asarray(s.top1_agree, dtype=bool)
            if miss.any():
                ax.scatter(pos[miss], kld[miss], marker="x", s=14, color="#d62728", lw=0.8,
                           label=f"top-1 differs ({int(miss.sum())} of {len(pos)})", zorder=3)
            style_panel(ax, s.name, "upper right")
        finish_panels(fig, axes, "token position", title or "Per-position forward KL(P_ref ‖ P_cand), nats", out)
    finally:
        plt.close(fig)
    return out
