"""``kldcard evaluate``: from model files to a linted card in one command (see :mod:`kldcard.evaluate.run`)."""

from kldcard.evaluate.project import Project, load_project
from kldcard.evaluate.run import EvaluateResult, evaluate

__all__ = ["EvaluateResult", "Project", "evaluate", "load_project"]
