"""Engine adapters, one module each, imported only when used.

Which module serves which engine, and the extra that installs it, is :data:`kldcard.engines.ENGINES`.

Each module exposes ``REQUIRES`` (importable names), ``open_model(path, settings) -> EngineModel``
and ``machine_fingerprint(settings) -> dict`` (the stack fields knowable without a model).
"""

from __future__ import annotations

import importlib
from types import ModuleType
from typing import Any

from kldcard.capture.engines.base import EngineModel, EngineSettings, TokenizedText
from kldcard.engines import ENGINES, canonical_name, require
from kldcard.errors import EngineNotInstalled


def load_engine(name: str) -> ModuleType:
    """Import an engine adapter; raise :class:`EngineNotInstalled` naming the extra if its
    libraries are missing."""
    engine = require(name)
    return importlib.import_module(f"{__name__}.{engine.adapter}")


def installed_engines() -> list[str]:
    """Names of the engines whose libraries import."""
    out = []
    for name in ENGINES:
        try:
            load_engine(name)
        except EngineNotInstalled:
            continue
        out.append(name)
    return out


def open_model(engine: str, path: Any, settings: EngineSettings | None = None) -> EngineModel:
    return load_engine(engine).open_model(path, settings or EngineSettings())


def machine_fingerprints(engines: list[str] | None = None) -> dict[str, dict[str, Any] | str]:
    """Engine name -> fingerprint fields, or the install hint for an engine that is not installed."""
    names = [canonical_name(e) for e in engines] if engines else list(ENGINES)
    out: dict[str, dict[str, Any] | str] = {}
    for name in names:
        try:
            out[name] = load_engine(name).machine_fingerprint()
        except EngineNotInstalled as exc:
            out[name] = str(exc)
    return out


__all__ = [
    "ENGINES",
    "EngineModel",
    "EngineSettings",
    "TokenizedText",
    "canonical_name",
    "installed_engines",
    "load_engine",
    "machine_fingerprints",
    "open_model",
]
