"""The one engine registry: canonical names, accepted spellings, the pip extra, the import check.

Capture, tokens, stack, demo and every "not installed" message read this table, so an engine has one
name everywhere (``transformers``, ``llama.cpp``, ``mlx``) and one install command. Nothing here imports
an engine: :func:`available` asks importlib whether the modules exist, :func:`require` imports them.
"""

from __future__ import annotations

import importlib
import importlib.util
from dataclasses import dataclass

from kldcard.errors import EngineNotInstalled, MissingExtra, UsageError


@dataclass(frozen=True)
class Engine:
    name: str  # canonical
    aliases: tuple[str, ...]  # other accepted spellings, lower case (also ENGINE: prefixes in specs)
    extra: str  # pip install 'kldcard[EXTRA]'
    requires: tuple[str, ...]  # modules that must import
    adapter: str  # capture adapter module under kldcard.capture.engines
    files: str  # what a model path is, for messages

    @property
    def install(self) -> str:
        return f"pip install 'kldcard[{self.extra}]'"


ENGINES: dict[str, Engine] = {
    e.name: e
    for e in (
        Engine("transformers", ("hf", "huggingface"), "hf", ("torch", "transformers"), "transformers_engine",
               "a model directory (config.json, tokenizer.json, weights)"),
        Engine("llama.cpp", ("llama", "llamacpp", "llama-cpp", "llama_cpp", "llama-cpp-python", "gguf"), "llama",
               ("llama_cpp",), "llamacpp_engine", "a GGUF file"),
        Engine("mlx", ("mlx-lm", "mlx_lm"), "mlx", ("mlx.core", "mlx_lm"), "mlx_engine",
               "a model directory (config.json, tokenizer.json, weights)"),
    )
}
_BY_SPELLING = {s: e.name for e in ENGINES.values() for s in (e.name, *e.aliases)}


def lookup(name: str) -> Engine | None:
    """The engine ``name`` spells (any accepted spelling, any case), or None."""
    key = _BY_SPELLING.get(name.strip().lower())
    return ENGINES[key] if key else None


def canonical_name(name: str) -> str:
    """The canonical name of ``name``; :class:`UsageError` naming the choices when it is unknown."""
    engine = lookup(name)
    if engine is None:
        raise UsageError(f"unknown engine {name!r}; choose one of: {', '.join(ENGINES)}")
    return engine.name


def available(name: str) -> bool:
    """Whether the engine's modules are installed (found, not imported)."""
    engine = ENGINES[canonical_name(name)]
    for mod in engine.requires:
        try:
            if importlib.util.find_spec(mod) is None:
                return False
        except (ImportError, ValueError):  # a parent package is missing or broken
            return False
    return True


def require(name: str) -> Engine:
    """Import the engine's modules; :class:`EngineNotInstalled` with the install command if one fails."""
    engine = ENGINES[canonical_name(name)]
    for mod in engine.requires:
        try:
            importlib.import_module(mod)
        except ImportError as exc:
            raise EngineNotInstalled(engine.name, engine.extra, missing=mod) from exc
    return engine


# Optional modules -> the extra that installs them. A ModuleNotFoundError for one of these anywhere in a
# command becomes "pip install 'kldcard[EXTRA]'" (kldcard.cli.main); the base install is the linter.
EXTRA_OF_MODULE = {
    **{m: "compare" for m in ("numpy", "numba", "llvmlite", "safetensors", "threadpoolctl", "jinja2", "rich")},
    **{m.split(".")[0]: e.extra for e in ENGINES.values() for m in e.requires},
    "gguf": "llama",
    "matplotlib": "plot",
    **{m: "dist" for m in ("dask", "distributed", "fsspec")},
}


def missing_extra(exc: ModuleNotFoundError) -> MissingExtra | None:
    """The install hint for a missing optional module (None for anything else: that is a bug)."""
    top = (exc.name or "").split(".")[0]
    extra = EXTRA_OF_MODULE.get(top)
    return None if extra is None else MissingExtra(f"{top} (kldcard[{extra}])", extra, missing=top)


def not_installed(name: str, missing: str | None = None) -> EngineNotInstalled:
    """The error for engine ``name`` missing (for callers that caught their own ImportError)."""
    engine = ENGINES[canonical_name(name)]
    return EngineNotInstalled(engine.name, engine.extra, missing=missing)


__all__ = ["ENGINES", "EXTRA_OF_MODULE", "Engine", "available", "canonical_name", "lookup", "missing_extra",
           "not_installed", "require"]
