"""Engine specs on the command line: ``hf:DIR``, ``llama.cpp:FILE.gguf``, ``mlx:DIR``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from kldcard.engines import ENGINES, lookup
from kldcard.errors import InputError


@dataclass(frozen=True)
class EngineSpec:
    """Which engine tokenizes, and from which files."""

    engine: str  # canonical name (kldcard.engines): transformers | llama.cpp | mlx
    path: Path

    @property
    def label(self) -> str:
        return f"{self.engine}:{self.path}"

    def __str__(self) -> str:
        return self.label


def parse_spec(spec: str | EngineSpec) -> EngineSpec:
    """Parse ``ENGINE:PATH``; raise :class:`InputError` (one line) when it cannot be used."""
    if isinstance(spec, EngineSpec):
        return spec
    engine, sep, path = spec.partition(":")
    if not sep or not path:
        raise InputError(
            f"engine spec {spec!r} is not ENGINE:PATH (use hf:DIR, llama.cpp:FILE.gguf or mlx:DIR)"
        )
    found = lookup(engine)
    if found is None:
        raise InputError(f"unknown engine {engine!r} in {spec!r}; known engines: {', '.join(ENGINES)} (or hf)")
    canonical = found.name
    p = Path(path).expanduser()
    if canonical == "llama.cpp":
        if not p.is_file():
            raise InputError(f"{spec}: no such GGUF file")
    elif not p.is_dir():
        raise InputError(f"{spec}: no such directory (expected a folder with tokenizer.json)")
    return EngineSpec(canonical, p)
