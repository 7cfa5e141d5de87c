"""The candidates of a block (what was quantized, its size, its runtime, its results) and the
paired comparison that ranks them."""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import Field

from kldcard.schema.base import ClosedModel, GitRevision, NonNegInt, PosInt, Sha256
from kldcard.schema.disclosures import Calibration, StackFingerprint, Vocabulary
from kldcard.schema.results import Results


class TensorTypes(ClosedModel):
    """What the file quantized, read from it (a GGUF's tensor table, or a directory's quantization
    config): the tensor types per role; several types read ``Q4_K ×7, Q6_K ×1``."""

    file_type: str | None = Field(None, description="GGUF general.file_type, e.g. MOSTLY_Q4_K_M")
    token_embd: str | None = None
    output: str | None = Field(None, description="output head; 'tied to token_embd' when it has no tensor")
    attention: str | None = None
    feed_forward: str | None = None
    experts: str | None = None
    quantization_config: dict[str, Any] | None = Field(None, description="config.json quantization (HF/MLX)")


class ModelSize(ClosedModel):
    """How big the model is, read from its own tables (a GGUF's tensor table, safetensors headers);
    see :mod:`kldcard.stack.model_size`."""

    bytes: NonNegInt = Field(description="the model files on disk, headers included")
    tensor_bytes: NonNegInt = Field(description="bytes of tensor data")
    parameters: PosInt = Field(description="weights' element count (packed tensors counted unpacked)")
    bits_per_weight: float = Field(gt=0, description="8 · tensor_bytes / parameters")
    source: str = Field(description="where the figures were read: gguf tensor table, safetensors headers, ...")


class CandidateModel(ClosedModel):
    model: str
    revision: GitRevision | None = None
    sha256: Sha256 | None = None
    quantization: str = Field(description="q4_k_m, 4bit-awq, ...")
    tensors: TensorTypes | None = Field(None, description="what the file quantized, read from the file")
    size: ModelSize | None = Field(None, description="file size and bits per weight, read from the file")


class CrossStack(ClosedModel):
    """The publisher's statement that a candidate was measured on another stack than the reference on
    purpose (an MLX file against a llama.cpp reference): its KLD includes the stack difference. The
    linter (KLD207) stays quiet for exactly these coordinates and reports one that does not differ."""

    coordinates: Annotated[list[str], Field(min_length=1)] = Field(
        description="the stack coordinates, as KLD207 names them (engine, attention_backend, compute_dtype, "
        "...), in which the candidate's runtime knowingly differs from reference.runtime")
    reason: str = Field(min_length=1, description="why this candidate was measured across stacks")


class Candidate(ClosedModel):
    name: str
    model: CandidateModel
    runtime: StackFingerprint
    runtime_changes: dict[str, Any] | None = Field(
        None, description="compact cards: only the runtime fields that differ from reference.runtime (the "
        "full runtime is reference.runtime with these applied; written instead of runtime)")
    cross_stack: CrossStack | None = Field(
        None, description="measured on another stack than the reference on purpose: which coordinates, and why")
    vocabulary: Vocabulary | None = Field(
        None, description="this candidate's own vocabulary treatment when it differs from the block's (a served "
        "candidate's top-k log-probabilities: its KLD is the truncated one, e.g. a lower bound with tail lumped)")
    calibration: Calibration
    results: Results


class RankEntry(ClosedModel):
    """One candidate in the paired ranking (forward KL(P_ref ‖ P_cand), nats)."""

    rank: PosInt
    name: str
    kld_mean: float
    ci_low: float | None = None
    ci_high: float | None = None
    n_eff: float | None = None
    group: str = Field(description="candidates sharing a letter are not distinguishable on this text")
    not_distinguishable_from: list[str] = Field(default_factory=list)


class PairedDifference(ClosedModel):
    """mean(KLD_b − KLD_a) over the same positions, with its paired block-bootstrap interval (nats)."""

    a: str
    b: str
    mean_difference: float
    ci_low: float
    ci_high: float
    distinguishable: bool = Field(description="the interval excludes 0")


class ControlExcess(ClosedModel):
    """A candidate's mean KLD minus the control's, on the same positions: an estimate (it can be
    negative), valid only on the same stack and text as the control."""

    candidate: str
    excess: float
    ci_low: float
    ci_high: float


class Comparison(ClosedModel):
    """Paired comparison of the candidates on the same positions (block bootstrap of the
    per-position difference; nats)."""

    method: Literal["window-bootstrap", "block-bootstrap", "bootstrap"]
    level: float = Field(gt=0, lt=1)
    resamples: PosInt
    seed: int
    ranking: Annotated[list[RankEntry], Field(min_length=1)]
    pairs: list[PairedDifference] = Field(default_factory=list)
    control: str | None = Field(None, description="the candidate measured as a floor (the comparison's own price)")
    excess_over_control: list[ControlExcess] = Field(default_factory=list)
