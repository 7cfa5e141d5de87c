"""Capturing full-vocabulary logits and storing them.

- :mod:`kldcard.capture.store` — the on-disk capture format (writer, reader, numpy import).
- :mod:`kldcard.capture.manifest` — the manifest models (provenance + storage facts).

Engine adapters live in their own modules and are imported only when used.
"""

from __future__ import annotations

from .manifest import CaptureManifest, CaptureMeta
from .store import Capture, CaptureWriter, create_capture_from_arrays, open_capture, to_float64

__all__ = [
    "Capture",
    "CaptureManifest",
    "CaptureMeta",
    "CaptureWriter",
    "create_capture_from_arrays",
    "open_capture",
    "to_float64",
]
