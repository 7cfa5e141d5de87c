"""The constrained field types and the three model bases every kldcard model derives from.

Which base a model takes says how strictly it reads: :class:`ClosedModel` for what a person writes
(card disclosures), :class:`RecordModel` for what kldcard writes and reads back, :class:`OpenModel`
for provenance records later versions may extend.
"""

from __future__ import annotations

from typing import Annotated

from pydantic import BaseModel, ConfigDict, Field

Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$", description="lower-case hex sha256")]
GitRevision = Annotated[
    str, Field(pattern=r"^[0-9a-f]{40}$", description="a pinned 40-hex commit (not a branch name)")
]
NonNegInt = Annotated[int, Field(ge=0)]
PosInt = Annotated[int, Field(ge=1)]
Nats = Annotated[float, Field(description="nats (natural log)")]

Dtype = Annotated[
    str,
    Field(
        pattern=r"^[A-Za-z0-9_.\-]+$",
        description="dtype or quantization label, e.g. bf16, f16, f32, fp8, q8_0, q4_k_m, 6.0bpw",
        examples=["bf16", "q4_k_m"],
    ),
]


class ClosedModel(BaseModel):
    """The one base of kldcard's closed models (card disclosures, compare results): unknown keys are
    errors, so a typo in a card is a finding rather than a silently ignored field."""

    model_config = ConfigDict(strict=True, extra="forbid", populate_by_name=True)


class RecordModel(BaseModel):
    """The base of what kldcard writes and reads back itself (capture manifests, compare results,
    disclosure files): unknown keys are errors, values are coerced as JSON would, and an infinite
    statistic (a real outcome: a candidate masks a token the reference can emit) is written as
    ``Infinity`` rather than refused."""

    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants")


class OpenModel(BaseModel):
    """The base of provenance records (capture manifests) that later versions may extend."""

    model_config = ConfigDict(extra="allow")
