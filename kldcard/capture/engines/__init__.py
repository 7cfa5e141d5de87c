"""Engine adapters, one module each, imported only when used.

=============  ====================================  ======================================
engine         module                                install
=============  ====================================  ======================================
transformers   :mod:`.transformers_engine`           ``pip install 'kldcard[hf]'``
llama.cpp      :mod:`.llamacpp_engine`               ``pip install 'kldcard[llama]'``
mlx            :mod:`.mlx_engine`                    ``pip install 'kldcard[mlx]'``
=============  ====================================  ======================================

Each module exposes ``REQUIRES`` (importable names), ``open_model(path, settings) -> EngineModel``
and ``machine_fingerprint(settings) -> dict`` (the stack fields knowable without a model).
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass
from types import ModuleType
from typing import Any

from ...errors import EngineNotInstalled, UsageError
from .base import EngineModel, EngineSettings, TokenizedText


@dataclass(frozen=True)
class EngineInfo:
    name: str
    module: str
    extra: str
    requires: tuple[str, ...]


ENGINES: dict[str, EngineInfo] = {
    "transformers": EngineInfo("transformers", "transformers_engine", "hf", ("torch", "transformers")),
    "llama.cpp": EngineInfo("llama.cpp", "llamacpp_engine", "llama", ("llama_cpp",)),
    "mlx": EngineInfo("mlx", "mlx_engine", "mlx", ("mlx.core", "mlx_lm")),
}
ALIASES = {"hf": "transformers", "llama": "llama.cpp", "llamacpp": "llama.cpp", "llama-cpp": "llama.cpp", "mlx-lm": "mlx"}


def canonical_name(name: str) -> str:
    key = ALIASES.get(name.lower(), name.lower())
    if key not in ENGINES:
        raise UsageError(f"unknown engine {name!r}; choose one of: {', '.join(ENGINES)}")
    return key


def load_engine(name: str) -> ModuleType:
    """Import an engine adapter; raise :class:`EngineNotInstalled` naming the extra if its
    libraries are missing."""
    info = ENGINES[canonical_name(name)]
    for mod in info.requires:
        try:
            importlib.import_module(mod)
        except ImportError as exc:
            raise EngineNotInstalled(info.name, info.extra, missing=mod) from exc
    return importlib.import_module(f"{__name__}.{info.module}")


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


__all__ = [
    "ENGINES",
    "EngineModel",
    "EngineSettings",
    "TokenizedText",
    "canonical_name",
    "installed_engines",
    "load_engine",
    "open_model",
]
