"""The machine-readable half of a rendered card: the ``kld_evaluation`` block and ``model-index`` KLD results.

Both are built from a validated :class:`~kldcard.schema.KldEvaluation` and written with a *safe* YAML
dumper, never by pasting strings into YAML. ``model-index`` follows reference/model-cards.md §4:
provenance lives in ``metrics[].args`` (sibling keys are dropped by huggingface_hub), each metric
``type`` is unique within a result, values are floats written in the same digits as the body
section (``fmt_nats``), and ``verified``/``verifyToken`` are never emitted. Divergences are in nats,
forward = KL(P_ref ‖ P_cand).
"""

from __future__ import annotations

from typing import Any

import yaml

from kldcard.card.model_index import candidate_result, default_model_name, model_index_results
from kldcard.card.regions import KLD_KEY
from kldcard.card.yaml import dump_yaml
from kldcard.schema import KldEvaluation

# The model-index builder lives in kldcard.card.model_index (``kldcard lint --fix`` uses it too).
__all__ = ["candidate_result", "default_model_name", "kld_evaluation_yaml", "model_index_results"]


def kld_evaluation_yaml(evaluation: KldEvaluation) -> str:
    """The ``kld_evaluation:`` top-level key as YAML text (LF, ends with a newline).

    The dump is loaded back and re-validated, so what lands in the card is exactly ``evaluation``.
    """
    data = _prune_nulls(evaluation.model_dump(mode="json"))
    text = dump_yaml({KLD_KEY: data})
    back = yaml.safe_load(text)[KLD_KEY]
    if KldEvaluation.model_validate(back) != evaluation:  # pragma: no cover - a dumper bug
        raise AssertionError("kld_evaluation did not survive a YAML round trip")
    return text


def _prune_nulls(data: Any, keep: bool = False) -> Any:
    """Drop ``null`` optional fields, except inside ``runtime`` (a stack fingerprint records fields
    that do not apply as null, so a reader sees they were considered, not forgotten)."""
    if isinstance(data, dict):
        return {
            k: _prune_nulls(v, keep or k == "runtime") for k, v in data.items() if keep or v is not None
        }
    if isinstance(data, list):
        return [_prune_nulls(v, keep) for v in data]
    return data
