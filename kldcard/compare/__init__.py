"""Compare captures in float64: the numbers themselves.

Owns the pipeline kernel → divergence → stream → summary → result → run (numpy.linalg style: the
compiled :mod:`~kldcard.compare.kernel` checks nothing, :mod:`~kldcard.compare.divergence` validates and
shapes, this namespace re-exports), the result files (:mod:`~kldcard.compare.io`), top-k captures
(:mod:`~kldcard.compare.truncated`), many stacks at once (:mod:`~kldcard.compare.stacks`), block
uncertainty (:mod:`~kldcard.compare.blocklength` → :mod:`~kldcard.compare.bootstrap` →
:mod:`~kldcard.compare.ranking`), the paired ranking of candidates (:mod:`~kldcard.compare.rank`) and
the summaries by reference confidence (:mod:`~kldcard.compare.confidence`).

May import: errors, files, progress, schema, stack, capture. Never card, lint, render or cli.
Every divergence is in nats; "forward" is KL(P_ref ‖ P_cand).
"""

from __future__ import annotations

import sys
import types
from typing import Any

from kldcard.errors import MissingExtra

try:  # the base install is the linter; say which extra brings the numerics
    import numba  # noqa: F401
    import numpy  # noqa: F401
except ModuleNotFoundError as exc:
    raise MissingExtra("kldcard.compare (numpy and the compiled numba kernel)", "compare", exc.name) from exc

from kldcard.compare.io import write_per_token, write_result  # noqa: E402
from kldcard.compare.result import CompareResult  # noqa: E402
from kldcard.compare.rank import RankResult, rank_results  # noqa: E402
from kldcard.compare.run import build_result, check_comparable, compare  # noqa: E402

__all__ = ["CompareResult", "RankResult", "build_result", "check_comparable", "compare", "rank_results",
           "write_per_token", "write_result"]


class _CallableModule(types.ModuleType):
    """``kldcard.compare(...)`` is the public compare function, but importing any ``kldcard.compare.*``
    module binds this package to that name on ``kldcard``; a callable package keeps both meanings."""

    def __call__(self, *args: Any, **kwargs: Any) -> CompareResult:
        return compare(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
