"""Plots of a many-stack report (:class:`kldcard.compare.stacks.ManyStackReport`): a heatmap of the pairwise
mean forward KL (nats, KL(P_row ‖ P_col)) and top-1 disagreement, and each stack's per-position
KL(P_stack ‖ M) to the mean-probability centroid with the pairs' top-1 disagreements."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np

from kldcard.compare.stacks_report import ManyStackReport
from kldcard.files import atomic_path

__all__ = ["write_plots"]


def write_plots(report: ManyStackReport, out_dir: str | Path) -> list[Path]:
    """Write ``stacks-heatmap.png`` and ``stacks-per-position.png`` into ``out_dir`` (atomic writes)."""
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as exc:  # pragma: no cover - matplotlib is in the plot extra
        from kldcard.errors import EngineNotInstalled

        raise EngineNotInstalled("matplotlib", "plot", "matplotlib") from exc
    out = Path(out_dir)
    out.mkdir(parents=True, exist_ok=True)
    short = [f"S{i}" for i in range(len(report.labels))]
    written = []

    def save(fig: Any, name: str) -> None:
        try:
            with atomic_path(out / name, suffix=".png") as tmp:
                fig.savefig(tmp, dpi=120, bbox_inches="tight")
        finally:
            plt.close(fig)
        written.append(out / name)

    fig, axes = plt.subplots(1, 2, figsize=(11, 4.8))
    for ax, mat, title, fmt in (
        (axes[0], report.pairwise_kl_mean, "mean KL(P_row ‖ P_col), nats", "{:.2e}"),
        (axes[1], report.top1_disagreement, "top-1 disagreement (fraction of positions)", "{:.3f}"),
    ):
        im = ax.imshow(mat, cmap="viridis")
        ax.set_xticks(range(len(short)), short)
        ax.set_yticks(range(len(short)), short)
        ax.set_title(title, fontsize=10)
        top = float(mat.max()) or 1.0
        for (r, c), v in np.ndenumerate(mat):
            # viridis is dark at the bottom, light at the top: pick a readable text colour.
            colour = "black" if v > 0.6 * top else "white"
            ax.text(c, r, fmt.format(v), ha="center", va="center", fontsize=7, color=colour)
        fig.colorbar(im, ax=ax, fraction=0.046)
    legend = "; ".join(f"{s} = {lab}" for s, lab in zip(short, report.labels))
    fig.suptitle(f"{report.positions.size} positions, full vocabulary ({report.n_vocab})", fontsize=10)
    fig.text(0.01, -0.02, legend, fontsize=7, wrap=True)
    save(fig, "stacks-heatmap.png")

    n_pairs = len(report.pairs)
    fig, (ax1, ax2) = plt.subplots(
        2, 1, figsize=(11, 5 + 0.25 * n_pairs), sharex=True, gridspec_kw={"height_ratios": [3, 1 + 0.3 * n_pairs]}
    )
    floor = 1e-12  # KL of identical stacks is 0; show it at the floor of the log axis
    for k, lab in enumerate(short):
        ax1.plot(report.positions, np.maximum(report.kl_to_centroid[k], floor), lw=0.8, label=lab)
    ax1.set_yscale("log")
    ax1.set_ylabel("KL(P_stack ‖ mean-probability centroid), nats")
    ax1.legend(fontsize=7, loc="upper left")
    events = [report.positions[report.top1[p.a] != report.top1[p.b]] for p in report.pairs]
    if n_pairs:
        ax2.eventplot(events, lineoffsets=range(n_pairs), linelengths=0.8, linewidths=0.8)
        ax2.set_yticks(range(n_pairs), [f"{short[p.a]}≠{short[p.b]}" for p in report.pairs])
    ax2.set_xlabel("position (logits after tokens 0..i)")
    ax2.set_title("top-1 disagreements per pair", fontsize=9)
    fig.text(0.01, -0.02, legend, fontsize=7, wrap=True)
    save(fig, "stacks-per-position.png")
    return written
