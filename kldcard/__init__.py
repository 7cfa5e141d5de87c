"""kldcard: make KL-divergence claims on model cards mean something.

Public API (imported lazily so that a base install lints cards without any engine):

- :func:`lint_card` — lint a model card (path or ``hf://owner/name[@rev]``), returns a LintResult.
- :func:`compare` — compare a reference capture against a candidate capture in float64.
- :func:`capture` — capture full-vocabulary logits from an engine into a capture store.
- :func:`render_section` — render the compliant KLD card section from compare results.

All divergences are in nats; "KLD" without qualification means the forward divergence
KL(P_ref ‖ P_cand).
"""

from __future__ import annotations

from importlib import import_module
from typing import Any

from kldcard import _moved

__version__ = "0.1.0"

_LAZY = {
    "lint_card": "kldcard.lint.runner",
    "compare": "kldcard.compare",
    "capture": "kldcard.capture.run",
    "render_section": "kldcard.render",
}

__all__ = ["__version__", *_LAZY]

_moved.install()  # old module paths keep working for one release, with a DeprecationWarning


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'kldcard' has no attribute {name!r}")
