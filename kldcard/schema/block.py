"""The whole ``kld_evaluation`` front-matter block: the disclosures, the candidates, the comparison
and, for compact cards, the sidecar file that holds the full block."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field, model_validator

from kldcard.schema.base import ClosedModel, Sha256
from kldcard.schema.candidates import Candidate, Comparison
from kldcard.schema.disclosures import (
    Aggregation,
    Context,
    DirectionDisclosure,
    EvaluationText,
    Positions,
    Reference,
    Vocabulary,
)
from kldcard.schema_rules import SCHEMA_VERSION, expand_runtime_changes


class Sidecar(ClosedModel):
    """Compact cards: the file next to the card that holds the full block (every candidate's full
    runtime and results); the linter checks its sha256 when the file is at hand."""

    file: str = Field(description="path relative to the card, e.g. kld_evaluation.json")
    sha256: Sha256




class KldEvaluation(ClosedModel):
    """The ``kld_evaluation`` front-matter block: all nine disclosures plus results."""

    @model_validator(mode="before")
    @classmethod
    def _expand(cls, data: Any) -> Any:
        return expand_runtime_changes(data)

    schema_version: Literal[1] = SCHEMA_VERSION
    reference: Reference
    evaluation_text: EvaluationText
    context: Context
    positions: Positions
    direction: DirectionDisclosure
    vocabulary: Vocabulary
    aggregation: Aggregation
    candidates: Annotated[list[Candidate], Field(min_length=1)]
    comparison: Comparison | None = Field(None, description="paired ranking of the candidates (and a control)")
    sidecar: Sidecar | None = Field(None, description="compact cards: the full block in a file next to the card")
