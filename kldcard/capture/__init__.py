"""Capturing full-vocabulary logits and storing them.

- :mod:`kldcard.capture.store` — the on-disk capture format (writer, reader, numpy import).
- :mod:`kldcard.capture.manifest` — the manifest models (provenance + storage facts).

Engine adapters live in their own modules and are imported only when used.

Owns the capture store (manifest, shards, sparse top-k captures), the engine adapters, serving
(OpenAI-compatible) capture, positions and the llama-perplexity evaluation plan. May import: errors,
files, engines, schema, progress, stack, tokens. Never compare, render, lint or cli.
"""

from __future__ import annotations

import sys
import types
from typing import Any

from kldcard.capture.manifest import CaptureManifest, CaptureMeta
from kldcard.capture.store import (
    Capture,
    CaptureWriter,
    create_capture_from_arrays,
    open_capture,
    to_float64,
)

__all__ = [
    "Capture",
    "CaptureManifest",
    "CaptureMeta",
    "CaptureWriter",
    "create_capture_from_arrays",
    "open_capture",
    "to_float64",
]


class _CallableModule(types.ModuleType):
    """``kldcard.capture(...)`` is the public capture function (STYLE: lint_card, capture, compare,
    render_section), but importing any ``kldcard.capture.*`` module binds this package to that name
    on ``kldcard``. Making the package callable keeps both meanings working."""

    def __call__(self, *args: Any, **kwargs: Any) -> Capture:
        from kldcard.capture.run import capture

        return capture(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
