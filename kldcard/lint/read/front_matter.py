"""Front-matter keys the Hugging Face Hub defines for model cards, read as disclosure evidence.

https://huggingface.co/docs/hub/model-cards#model-card-metadata: ``base_model`` (the model this one
derives from; with ``base_model_relation: quantized``, the checkpoint it quantizes: the natural
reference), ``datasets`` (a calibration set when its name says so), ``library_name`` (the library
that loads the model: an engine, never a version). A key is evidence only for what the Hub says it
means; ``quantized_by`` names a person, not a disclosure, and is not read.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

# base_model_relation values under which base_model is the checkpoint the card's model was made from
# without training (the KLD reference a reader assumes); "finetune", "adapter", "merge" are not.
REFERENCE_RELATIONS = {None, "quantized"}
CALIBRATION_NAME = re.compile(r"calib|imatrix", re.IGNORECASE)
@dataclass(frozen=True)
class MetaEvidence:
    disclosure: int
    key: str  # JSON pointer into the front matter
    text: str  # the value as written
    value: dict[str, Any]


def _strings(v: Any) -> list[str]:
    items = v if isinstance(v, list) else [v]
    return [s.strip() for s in items if isinstance(s, str) and s.strip()]


def read(metadata: dict[str, Any] | None) -> dict[int, list[MetaEvidence]]:
    """Disclosure number -> what the front matter says about it."""
    out: dict[int, list[MetaEvidence]] = {}
    if not metadata:
        return out
    relation = metadata.get("base_model_relation")
    bases = _strings(metadata.get("base_model"))
    if len(bases) == 1 and (relation if isinstance(relation, str) else None) in REFERENCE_RELATIONS:
        key = "/base_model" if isinstance(metadata.get("base_model"), str) else "/base_model/0"
        out.setdefault(1, []).append(MetaEvidence(1, key, bases[0], {"repo": bases[0]}))
    datasets = metadata.get("datasets")
    for i, name in enumerate(_strings(datasets)):
        if CALIBRATION_NAME.search(name):
            key = "/datasets" if isinstance(datasets, str) else f"/datasets/{i}"
            out.setdefault(4, []).append(MetaEvidence(4, key, name, {"dataset": name}))
            break
    return out
