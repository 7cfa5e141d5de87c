"""The disclosure schema: pydantic v2 models, the single source of truth.

A card's ``kld_evaluation:`` front-matter block validates against :class:`KldEvaluation`. The nine
disclosures (see DESIGN.md) map to fields as follows (the numbers are the KLD1xx rule codes):

====  ========================  =====================================================
code  disclosure                where
====  ========================  =====================================================
101   reference checkpoint      ``reference`` (model, revision/sha256, dtype)
102   runtime environment       ``reference.runtime`` and ``candidates[].runtime``
103   evaluation text           ``evaluation_text``
104   calibration data          ``candidates[].calibration``
105   context lengths           ``context``
106   sampled positions         ``positions``
107   KL direction              ``direction``
108   vocabulary truncation     ``vocabulary``
109   aggregation               ``aggregation``
====  ========================  =====================================================

"Complete" is encoded as *required*: a block that validates is fully disclosed, and every
validation error maps to exactly one disclosure (see :func:`disclosure_for_loc`). The models are
strict (a YAML 1.1 string such as ``1e-3`` is not silently accepted as a number) and forbid unknown
keys so that typos surface. Numbers are in nats; KL(P_ref ‖ P_cand) is "forward".

The JSON Schemas in ``schemas/`` are generated from these models (``python scripts/generate.py``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from kldcard import schema_rules
from kldcard.schema_rules import (  # noqa: F401  (re-exported: the schema's public names)
    BLOCK_METHODS,
    DISCLOSURES,
    SCHEMA_VERSION,
    UNQUANTIZED_DTYPES,
    disclosure_for_loc,
    expand_runtime_changes,
    is_quantized_dtype,
)

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


def _raise(error: str | None) -> None:
    """A cross-field rule's error (kldcard.schema_rules) as the ValueError pydantic reports."""
    if error is not None:
        raise ValueError(error)


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




# --------------------------------------------------------------------------------------------
# Stack fingerprint (runtime environment, disclosure 2)
# --------------------------------------------------------------------------------------------


class StackFingerprint(ClosedModel):
    """Where logits came from: the exact hardware/software coordinate.

    Each coordinate is bit-reproducible; changing any arithmetic-relevant field (device, SM count,
    attention backend, engine build, tensor-parallel degree, dtypes, prefill chunking) changes the
    logits. Fields that do not apply are ``null`` (e.g. ``sm_count`` on a CPU), never omitted.
    """

    model_config = ConfigDict(strict=True, extra="allow")

    engine: str = Field(description="transformers, llama.cpp, mlx, vllm, sglang, openai-server, ...")
    engine_version: str
    engine_build: str | None = Field(None, description="build id / commit / system-info string")
    backend: str = Field(description="cpu, cuda, rocm, metal, ...")
    device: str = Field(description="GPU model, Apple chip, or CPU model")
    device_count: PosInt = 1
    sm_count: int | None = None
    compute_capability: str | None = None
    driver_version: str | None = None
    cuda_version: str | None = None
    chip_family: str | None = None
    attention_backend: str = Field(description="sdpa, eager, flash_attention_2, flash-attn on/off, ...")
    tensor_parallel: PosInt = 1
    weights_dtype: Dtype
    compute_dtype: Dtype | None = None
    kv_cache_dtype: Dtype
    prefill_chunk: PosInt = Field(description="tokens per forward pass (n_batch / prefill chunk)")
    n_ubatch: PosInt | None = None
    threads: PosInt | None = Field(description="CPU threads; null when the GPU does the work")
    os: str
    python: str | None = None
    libraries: dict[str, str] = Field(default_factory=dict, description="package -> version")
    kldcard_version: str | None = None

    @model_validator(mode="after")
    def _accelerator_details(self) -> StackFingerprint:
        _raise(schema_rules.stack_accelerator_details(vars(self)))
        return self


# --------------------------------------------------------------------------------------------
# The nine disclosures
# --------------------------------------------------------------------------------------------


class Reference(ClosedModel):
    """Disclosure 1: the reference checkpoint (and, for disclosure 2, its runtime)."""

    model: str = Field(description="repo id (owner/name) or a file name")
    revision: GitRevision | None = Field(None, description="pinned commit of the repo")
    sha256: Sha256 | None = Field(None, description="sha256 of the reference file(s)")
    dtype: Dtype = Field(description="bf16 expected; anything else is a quantized reference")
    runtime: StackFingerprint

    @model_validator(mode="after")
    def _pinned(self) -> Reference:
        _raise(schema_rules.reference_pinned(vars(self)))
        return self


class DatasetSource(ClosedModel):
    dataset: str = Field(description="dataset repo id, e.g. Salesforce/wikitext")
    config: str | None = None
    split: str
    revision: GitRevision


class UrlSource(ClosedModel):
    url: Annotated[str, Field(pattern=r"^https?://")]


class RepoFileSource(ClosedModel):
    """A text (or calibration file) kept in the model repo itself: its path there and sha256."""

    repo_file: str = Field(description="path of the file inside the model repo, e.g. eval/text.txt")
    sha256: Sha256 = Field(description="sha256 of the file's bytes")
    repo: str | None = Field(None, description="repo id (owner/name); default: the repo of this card")
    revision: GitRevision | None = None


class TokenizerParity(ClosedModel):
    engines: Annotated[list[str], Field(min_length=1)]
    tokens_checked: NonNegInt
    outcome: Literal["identical", "mismatch", "overridden"]


class EvaluationText(ClosedModel):
    """Disclosure 3: the exact text the logits were computed on."""

    name: str
    source: DatasetSource | UrlSource | RepoFileSource
    sha256: Sha256 = Field(description="sha256 of the exact UTF-8 text fed to the tokenizer")
    n_tokens: PosInt
    chat_template: bool = Field(description="whether a chat template was applied")
    bos: Literal["added", "none", "chunk-start-overwrite", "in-text"] = Field(
        description="added: tokenizer prepends BOS; chunk-start-overwrite: llama-perplexity protocol"
    )
    tokenizer_parity: TokenizerParity


class Calibration(ClosedModel):
    """Disclosure 4 (per candidate): calibration data, or an explicit none."""

    none: bool = Field(False, description="true when the quantization used no calibration data")
    dataset: str | None = None
    sha256: Sha256 | None = None
    n_tokens: NonNegInt | None = None
    overlaps_evaluation_text: bool | None = Field(
        None, description="whether the calibration data overlaps the evaluation text"
    )

    @model_validator(mode="after")
    def _complete(self) -> Calibration:
        _raise(schema_rules.calibration_complete(vars(self)))
        return self


class Context(ClosedModel):
    """Disclosure 5: context lengths."""

    n_ctx: PosInt = Field(description="tokens per sequence / chunk")
    n_chunks: PosInt
    stride: PosInt = Field(description="start-to-start distance of chunks; = n_ctx when non-overlapping")
    prefill_chunk: PosInt = Field(description="tokens per forward pass within a chunk")


class Positions(ClosedModel):
    """Disclosure 6: which positions were scored."""

    scheme: Literal["all", "every-n", "second-half", "explicit", "llama-perplexity"]
    every_n: PosInt | None = None
    offset: NonNegInt | None = None
    explicit: list[NonNegInt] | None = None
    n_scored: PosInt = Field(description="number of scored positions in total")

    @model_validator(mode="after")
    def _scheme_params(self) -> Positions:
        _raise(schema_rules.positions_scheme_params(vars(self)))
        return self


Direction = Literal["forward", "reverse", "js"]


class DirectionDisclosure(ClosedModel):
    """Disclosure 7: forward = KL(P_ref ‖ P_cand), reverse = KL(P_cand ‖ P_ref), js = Jensen-Shannon."""

    reported: Annotated[list[Direction], Field(min_length=1)]
    log_base: Literal["e"] = Field(description="e: all values in nats")


class Vocabulary(ClosedModel):
    """Disclosure 8: how much of the vocabulary entered the sum."""

    truncation: Literal["full", "top-k", "floor"]
    top_k: PosInt | None = None
    tail: str | None = Field(None, description="tail treatment for top-k, e.g. lumped, renormalised")
    floor_nats: float | None = Field(None, description="storage floor below the max log-prob (llama.cpp: 16)")
    reference_vocab_size: PosInt
    candidate_vocab_size: PosInt
    alignment: Literal["identical", "common-prefix"] = Field(
        description="identical sizes, or padded vocabularies cut to their common prefix"
    )

    @model_validator(mode="after")
    def _params(self) -> Vocabulary:
        _raise(schema_rules.vocabulary_params(vars(self)))
        return self




class BlockDefinition(ClosedModel):
    """What one resampled block is (block methods only)."""

    unit: Literal["context-window", "moving-block"] = Field(
        description="context-window: every scored position of one context window (position // stride); "
        "moving-block: runs of consecutive scored positions, wrapped circularly"
    )
    length_rule: str | None = Field(None, description="how the moving-block length was chosen, e.g. "
                                    "politis-white-2004 (per series; the length is in each summary)")
    min_windows: PosInt | None = Field(None, description="fewest context windows for the context-window unit")


class Uncertainty(ClosedModel):
    """How the interval of a mean was computed. ``bootstrap`` and ``se-iid`` treat tokens as
    independent; ``window-bootstrap`` and ``block-bootstrap`` resample blocks (see ``block``)."""

    method: Literal["bootstrap", "se-iid", "none", "window-bootstrap", "block-bootstrap"]
    level: float | None = Field(None, gt=0, lt=1)
    resamples: PosInt | None = None
    seed: int | None = None
    interval: Literal["studentized", "t", "percentile", "basic"] | None = Field(
        None, description="studentized: bootstrap-t; percentile: quantiles of the resampled means")
    block: BlockDefinition | None = None

    @model_validator(mode="after")
    def _bootstrap(self) -> Uncertainty:
        _raise(schema_rules.uncertainty_bootstrap(vars(self)))
        return self


class Aggregation(ClosedModel):
    """Disclosure 9: how per-token values became the numbers shown."""

    statistic: Literal["token-mean", "sequence-mean", "median"]
    percentiles: list[float] = Field(description="percentiles reported, in percent (99.9, 99, ...)")
    output_ranges: list[Annotated[list[NonNegInt], Field(min_length=2, max_length=2)]] = Field(
        description="buckets [start, end) of position within the context window (tokens of left "
        "context) that the results are also summarised over"
    )
    uncertainty: Uncertainty


# --------------------------------------------------------------------------------------------
# Results
# --------------------------------------------------------------------------------------------


class Summary(ClosedModel):
    """Summary of one per-token quantity (nats for divergences)."""

    mean: float
    se: float | None = Field(None, description="standard error of the mean (i.i.d.)")
    ci_low: float | None = None
    ci_high: float | None = None
    se_block: float | None = Field(None, description="standard error of the mean from the block bootstrap")
    n_eff: float | None = Field(None, description="effective sample size (s²/se_block²) next to n")
    block_length: PosInt | None = Field(None, description="tokens per moving block")
    n_blocks: PosInt | None = Field(None, description="windows resampled, or moving blocks per resample")
    median: float | None = None
    percentiles: dict[str, float] = Field(default_factory=dict, description="'99.9' -> value")
    min: float | None = None
    max: float | None = None


class RangeResult(ClosedModel):
    start: NonNegInt
    end: NonNegInt
    n: NonNegInt
    kld_mean: float
    kld_p99: float | None = None
    top1_agreement: float | None = None
    kld_ci_low: float | None = Field(None, description="interval of kld_mean (level and method: aggregation.uncertainty)")
    kld_ci_high: float | None = None
    n_eff: float | None = Field(None, description="effective sample size of kld_mean (s²/se_block²); above n when "
                                "neighbouring values are anti-correlated")


class DepthOnset(ClosedModel):
    """Where a candidate starts to disagree: the first depth (tokens of left context) at which the
    per-position KLD or top-1 disagreement leaves the band of the early part of the window, by a
    one-sided CUSUM whose threshold is set by block permutations for a stated false-alarm rate."""

    detected: bool
    depth: NonNegInt | None = Field(None, description="tokens of left context where the excursion that raised "
                                    "the alarm began (agreement up to here)")
    alarm_depth: NonNegInt | None = Field(None, description="where the CUSUM crossed its threshold")
    series: Literal["kld", "top1"] | None = Field(None, description="which series crossed first")
    baseline_end: NonNegInt = Field(description="the early part (the band) is depths below this")
    test: str = Field(description="the sequential test, in words")
    false_alarm_rate: float = Field(gt=0, lt=1, description="probability of an alarm on a series with no onset")
    p_value: float | None = Field(None, ge=0, le=1)


class DivergenceCluster(ClosedModel):
    """A run of consecutive scored positions of one window where the top-1 token differs or the KLD
    exceeds the early part's 99th percentile."""

    window: NonNegInt
    start: NonNegInt = Field(description="first position (depth in the window)")
    end: NonNegInt = Field(description="last position (inclusive)")
    n: PosInt = Field(description="scored positions in the run")
    kld_share: float = Field(ge=0, le=1, description="share of the total KLD over all scored positions")


class RangeDifference(ClosedModel):
    """Mean KLD of a late output range minus an early one (nats), with its interval."""

    early: Annotated[list[NonNegInt], Field(min_length=2, max_length=2)]
    late: Annotated[list[NonNegInt], Field(min_length=2, max_length=2)]
    early_mean: float
    late_mean: float
    diff: float
    ci_low: float
    ci_high: float
    level: float = Field(gt=0, lt=1)
    method: str


class DepthProfile(ClosedModel):
    """Where divergence lives along the window: onset, clusters, late against early (nats)."""

    max_depth: NonNegInt = Field(description="deepest scored position in a window")
    onset: DepthOnset | None = Field(None, description="None: too few depth points for the test")
    kld_threshold: float = Field(description="the early part's 99th percentile of KLD (a cluster criterion)")
    n_clusters: NonNegInt
    clusters_share: float = Field(ge=0, le=1, description="share of the total KLD inside clusters")
    n_clusters_after_onset: NonNegInt | None = None
    share_after_onset: float | None = Field(None, ge=0, le=1, description="share of the total KLD in the clusters "
                                            "that start at or after the onset")
    top_clusters: list[DivergenceCluster] = Field(default_factory=list, description="largest shares first")
    late_vs_early: RangeDifference | None = None


class ConfidenceBucket(ClosedModel):
    """Scored positions whose reference top-1 probability lies in [low, high) ([low, 1] for the last)."""

    low: float = Field(ge=0, le=1)
    high: float = Field(ge=0, le=1)
    n: NonNegInt
    kld_mean: float | None = None
    top1_agreement: float | None = None


class TopK(ClosedModel):
    """Label in top-k: share of positions (with a next token) whose actual next token is among the
    k most likely tokens of each side."""

    k: PosInt
    reference: float = Field(ge=0, le=1)
    candidate: float = Field(ge=0, le=1)


class Results(ClosedModel):
    """Per-candidate numbers. All divergences in nats, over the scored positions."""

    n_positions: PosInt
    kld: Summary = Field(description="forward KL(P_ref ‖ P_cand)")
    reverse_kld: Summary | None = Field(None, description="KL(P_cand ‖ P_ref)")
    js: Summary | None = None
    top1_agreement: float = Field(ge=0, le=1)
    top1_agreement_se: float | None = None
    rms_delta_p: float | None = None
    ranges: list[RangeResult] = Field(default_factory=list)
    confidence: list[ConfidenceBucket] = Field(
        default_factory=list, description="the results by the reference's top-1 probability")
    label_in_top_k: list[TopK] = Field(
        default_factory=list, description="share of positions whose actual next token is in each side's top k")
    depth: DepthProfile | None = Field(None, description="onset of disagreement, clusters, late against early ranges")


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
