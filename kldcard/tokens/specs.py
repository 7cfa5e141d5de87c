"""Engine specs on the command line: ``hf:DIR``, ``llama.cpp:FILE.gguf``, ``mlx:DIR``."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..errors import InputError

# Accepted prefixes -> canonical engine name.
_ALIASES = {
    "hf": "hf",
    "transformers": "hf",
    "llama.cpp": "llama.cpp",
    "llama": "llama.cpp",
    "gguf": "llama.cpp",
    "mlx": "mlx",
    "mlx-lm": "mlx",
}


@dataclass(frozen=True)
class EngineSpec:
    """Which engine tokenizes, and from which files."""

    engine: str  # hf | llama.cpp | mlx
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
    canonical = _ALIASES.get(engine.lower())
    if canonical is None:
        raise InputError(
            f"unknown engine {engine!r} in {spec!r}; known engines: hf, llama.cpp, mlx"
        )
    p = Path(path).expanduser()
    if canonical == "llama.cpp":
        if not p.is_file():
            raise InputError(f"{spec}: no such GGUF file")
    elif not p.is_dir():
        raise InputError(f"{spec}: no such directory (expected a folder with tokenizer.json)")
    return EngineSpec(canonical, p)
