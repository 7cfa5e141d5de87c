"""The many-stack report (what :func:`kldcard.compare.stacks.compare_stacks` returns, the plots draw and
``kldcard stacks`` writes as JSON). All divergences in nats over the full vocabulary."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from kldcard.stack.portability import stack_differences

CENTROID = "mean-probability"
CENTROID_WHY = (
    "M = (1/N) Σ_k P_k minimises Σ_k KL(P_k ‖ M), so each stack's KL(P_k ‖ M) is its share of the "
    "generalised Jensen-Shannon divergence; bounded by log N and finite even where one stack gives a "
    "token (near) zero probability, unlike the normalised geometric mean, which any single outlier "
    "stack drags towards zero"
)
# Memory for one block of positions: N stacks × block × vocab × (logits + log-probs), float64.


def _json_values(a: np.ndarray) -> list:
    """Nested lists for JSON; +inf (a stack masks a token another can emit) becomes the string "inf"."""
    return [_json_values(x) for x in a] if a.ndim > 1 else [x if np.isfinite(x) else "inf" for x in a.tolist()]


@dataclass
class PairDivergence:
    a: int
    b: int
    n_disagreements: int
    first_position: int | None  # first captured position whose top-1 differs, or None
    clusters: list[tuple[int, int, int]]  # (first position, last position, disagreements)

    def to_dict(self, max_clusters: int = 200) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "n_top1_disagreements": self.n_disagreements,
            "first_top1_divergence": self.first_position,
            "n_clusters": len(self.clusters),
            "clusters": [list(c) for c in self.clusters[:max_clusters]],
        }


@dataclass
class ManyStackReport:
    """Result of :func:`compare_stacks`. All divergences in nats over the full vocabulary."""

    labels: list[str]
    paths: list[str]
    stacks: list[dict[str, Any] | None]
    n_vocab: int
    positions: np.ndarray  # int64 [n]
    pairwise_kl_mean: np.ndarray  # [N, N], KL(P_row ‖ P_col)
    pairwise_kl_max: np.ndarray  # [N, N]
    top1_disagreement: np.ndarray  # [N, N], fraction of positions
    kl_to_centroid: np.ndarray  # [N, n] per position, KL(P_stack ‖ M)
    pairwise_kl: np.ndarray  # [N, N, n] per position, KL(P_i ‖ P_j)
    top1: np.ndarray  # int64 [N, n]
    pairs: list[PairDivergence] = field(default_factory=list)
    gap: int = 8

    @property
    def kl_to_centroid_mean(self) -> np.ndarray:
        return self.kl_to_centroid.mean(axis=1)

    def to_dict(self) -> dict[str, Any]:
        n = int(self.positions.size)
        portability = []
        for i in range(len(self.labels)):
            for j in range(i + 1, len(self.labels)):
                diffs = stack_differences(self.stacks[i], self.stacks[j])
                portability.append({"a": i, "b": j, "differences": [d.to_dict() for d in diffs]})
        return {
            "kind": "kldcard-stacks-report",
            "version": 1,
            "units": "nats",
            "vocabulary": f"full ({self.n_vocab} tokens)",
            "positions": {
                "n": n,
                "first": int(self.positions[0]) if n else None,
                "last": int(self.positions[-1]) if n else None,
            },
            "stacks": [
                {"index": i, "label": lab, "path": p, "stack": s}
                for i, (lab, p, s) in enumerate(zip(self.labels, self.paths, self.stacks))
            ],
            "pairwise_kl": {
                "direction": "forward: KL(P_row ‖ P_col), row stack as reference",
                "statistic": "token mean over the positions",
                "mean": _json_values(self.pairwise_kl_mean),
                "max": _json_values(self.pairwise_kl_max),
            },
            "top1_disagreement": {
                "statistic": "fraction of positions whose argmax token differs (ties: lowest id)",
                "matrix": self.top1_disagreement.tolist(),
            },
            "centroid": {
                "kind": CENTROID,
                "why": CENTROID_WHY,
                "direction": "KL(P_stack ‖ M)",
                "kl_mean": self.kl_to_centroid_mean.tolist(),
                "kl_max": self.kl_to_centroid.max(axis=1).tolist() if n else [],
            },
            "top1_divergence": {
                "cluster_gap": self.gap,
                "pairs": [p.to_dict() for p in self.pairs],
            },
            "portability": portability,
        }
