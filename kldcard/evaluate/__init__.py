"""``kldcard evaluate``: from model files to a linted card in one command (see :mod:`kldcard.evaluate.run`).

Owns the project file (``project``), the content-addressed cache (``cache``), the one-pass streaming
compare (``stream``), the orchestration (``run``), the card step (``card``) and publishing
(``publish``). May import everything below it: render, llamacpp, compare, capture, tokens, lint,
card, stack and the bottom modules; only the demo and the CLI import it.
"""

from kldcard.evaluate.project import Project, load_project
from kldcard.evaluate.run import EvaluateResult, evaluate

__all__ = ["EvaluateResult", "Project", "evaluate", "load_project"]
