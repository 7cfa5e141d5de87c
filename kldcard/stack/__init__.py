"""Why references don't travel between stacks.

- :mod:`kldcard.stack.splits` — FlashAttention-2's split-KV heuristic: how many groups a GPU cuts
  a KV sequence into, from its SM count.
- :mod:`kldcard.stack.simulate` — a bf16 split-softmax simulator: the same inputs give different
  bf16 attention outputs under different group boundaries.
- :mod:`kldcard.stack.differences` — which recorded stack coordinates change arithmetic between two
  stack fingerprints (used by compare, lint and render);
- :mod:`kldcard.stack.portability` — lint rule KLD207 on a card's block (and the names of
  :mod:`~kldcard.stack.differences`, re-exported).
- :mod:`kldcard.compare.stacks` — many stacks at once: pairwise forward KL, top-1 disagreement and each
  stack's KL to the centroid of stacks.
- :mod:`kldcard.compare.stacks_plots` — the many-stack report's heatmap and per-position plots.

Knowledge about stacks only (no captures, no numbers of a run). May import: errors. The modules
lint uses (splits, differences, portability) load no numpy.
"""

from __future__ import annotations

from kldcard.stack.splits import (
    GPU_SM_COUNTS,
    SplitPrediction,
    fa2_num_splits,
    lookup_gpu,
    predict_splits,
)

__all__ = ["GPU_SM_COUNTS", "SplitPrediction", "fa2_num_splits", "lookup_gpu", "predict_splits"]
