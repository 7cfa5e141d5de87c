"""The nine disclosures of a ``kld_evaluation`` block (KLD101–KLD109), the runtime fingerprint among them.

Each cross-field rule is the one in :mod:`kldcard.schema_rules` (which the linter applies without
pydantic), raised here as the ValueError pydantic reports.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import ConfigDict, Field, model_validator

from kldcard import schema_rules
from kldcard.schema.base import ClosedModel, Dtype, GitRevision, NonNegInt, PosInt, Sha256


def _raise(error: str | None) -> None:
    """A cross-field rule's error (kldcard.schema_rules) as the ValueError pydantic reports."""
    if error is not None:
        raise ValueError(error)


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
