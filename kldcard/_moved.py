"""Import shims for the module paths of kldcard 0.1 that moved in the stage layout (kept one release).

``import kldcard.divergence`` still works and gives :mod:`kldcard.compare.divergence`, with a
DeprecationWarning naming the new path. The table is the whole mechanism: no stub files, so
``ls kldcard/`` shows the layout and not its history.
"""

from __future__ import annotations

import importlib
import importlib.machinery
import sys
import warnings
from types import ModuleType

MOVED = {
    "kldcard.atomic": "kldcard.files",
    "kldcard.hub": "kldcard.card.hub",
    "kldcard.splice": "kldcard.card.splice",
    "kldcard.config": "kldcard.lint.config",
    "kldcard.formatting": "kldcard.card.numbers",
    "kldcard.compare_io": "kldcard.compare.io",
    "kldcard.divergence": "kldcard.compare.divergence",
    "kldcard.kernel": "kldcard.compare.kernel",
    "kldcard.stream": "kldcard.compare.stream",
    "kldcard.summary": "kldcard.compare.summary",
    "kldcard.truncated": "kldcard.compare.truncated",
    "kldcard.render_inputs": "kldcard.render.disclosures",
    "kldcard.render_compare": "kldcard.render.evaluation",
    "kldcard.card_metadata": "kldcard.render.metadata",
    "kldcard.card_update": "kldcard.render.update",
    "kldcard.plot": "kldcard.render.plot",
    "kldcard.demo_steps": "kldcard.demo.steps",
    "kldcard.testmodels": "kldcard.demo.tiny_models",
    "kldcard.tokenizer_files": "kldcard.demo.tokenizer_files",
    "kldcard.llamacpp.protocol": "kldcard.capture.llama_perplexity",
    "kldcard.stack.many": "kldcard.compare.stacks",
    "kldcard.stack.plots": "kldcard.compare.stacks_plots",
    "kldcard.lint.rules_prose": "kldcard.lint.rules.prose",
    "kldcard.lint.rules_structured": "kldcard.lint.rules.structured",
    "kldcard.distributed.cli": "kldcard.cli.cluster",
}


# plain classes, not importlib.abc's: the import system needs only the methods, and importing importlib.abc
# (it pulls importlib.resources and tempfile) was a tenth of a one-card lint's import time
class _Alias:
    def __init__(self, target: str) -> None:
        self.target = target

    def create_module(self, spec: importlib.machinery.ModuleSpec) -> ModuleType:
        warnings.warn(f"{spec.name} moved to {self.target}; the old path goes in the next release",
                      DeprecationWarning, stacklevel=2)
        return importlib.import_module(self.target)

    def exec_module(self, module: ModuleType) -> None:
        pass  # the target module ran already


class MovedFinder:
    def find_spec(self, fullname: str, path: object = None, target: object = None):
        new = MOVED.get(fullname)
        if new is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, _Alias(new))


def install() -> None:
    if not any(isinstance(f, MovedFinder) for f in sys.meta_path):
        sys.meta_path.append(MovedFinder())
