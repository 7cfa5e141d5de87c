"""The capture manifest: what a capture directory holds and where its logits came from.

A capture is a directory with ``manifest.json`` (a :class:`CaptureManifest`), safetensors shards of
raw logits and ``tokens.safetensors``. :class:`CaptureMeta` is the provenance a capturer supplies
(model, text, BOS handling, positions, context, stack, tokenizer parity, truncation); the writer adds
the storage facts (vocabulary size, dtype, counts, shard sizes and sha256, token/position hashes).

The manifest feeds the card's disclosures: model -> 1, stack -> 2, text/tokens/tokenizer_parity -> 3,
context -> 5, positions -> 6, truncation -> 8. Sub-models allow extra keys (more provenance is
welcome); the top level forbids them so that a misspelt section name surfaces.

The JSON Schema ``schemas/capture-manifest.schema.json`` is generated from :class:`CaptureManifest` by
``python scripts/generate.py``.
"""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from kldcard.schema import ModelSize, OpenModel, RecordModel, StackFingerprint

FORMAT = "kldcard-capture"
FORMAT_VERSION = 1

Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$", description="lower-case hex sha256")]


class ModelInfo(OpenModel):
    """The model whose logits these are (disclosure 1 for a reference, candidate model otherwise)."""

    name: str = Field(description="repo id, directory or file name")
    path: str | None = None
    format: str | None = Field(None, description="transformers, gguf, mlx, npy, safetensors, ...")
    revision: str | None = Field(None, description="pinned commit of the repo, when known")
    files: dict[str, str] = Field(default_factory=dict, description="file name -> sha256")
    dtype: str | None = Field(None, description="weights dtype or quantization label")
    quantization: str | None = None
    size: ModelSize | None = Field(None, description="bytes and bits per weight, read from the model's own "
                                   "tables (GGUF tensor table, safetensors headers)")


class TextInfo(OpenModel):
    """The evaluation text (disclosure 3)."""

    name: str | None = None
    sha256: Sha256 | None = Field(None, description="sha256 of the exact UTF-8 text")
    n_bytes: int | None = Field(None, ge=0)
    source: dict | str | None = Field(None, description="dataset id/revision/split or URL")
    chat_template: bool | None = None


class TokensInfo(OpenModel):
    """How the token ids were produced (BOS handling is part of disclosure 3)."""

    bos: Literal["added", "none", "chunk-start-overwrite", "in-text"] | None = None
    add_bos: bool | None = None
    bos_id: int | None = None
    tokenizer: str | None = Field(None, description="tokenizer name or sha256 of tokenizer.json")


class PositionsInfo(OpenModel):
    """Which positions were captured (disclosure 6). Position i predicts token_ids[i + 1]."""

    scheme: Literal["all", "every-n", "second-half", "explicit", "llama-perplexity"] = "explicit"
    every_n: int | None = Field(None, ge=1)
    offset: int | None = Field(None, ge=0)


class ContextInfo(OpenModel):
    """Context lengths (disclosure 5)."""

    n_ctx: int | None = Field(None, ge=1)
    n_chunks: int | None = Field(None, ge=1)
    stride: int | None = Field(None, ge=1)
    prefill_chunk: int | None = Field(None, ge=1)


class TokenizerParityInfo(OpenModel):
    engines: list[str] = Field(default_factory=list)
    tokens_checked: int = Field(0, ge=0)
    outcome: Literal["identical", "mismatch", "overridden"]


class TruncationInfo(OpenModel):
    """How much of the vocabulary was stored (disclosure 8)."""

    kind: Literal["full", "top-k", "floor"] = "full"
    top_k: int | None = Field(None, ge=1)
    floor_nats: float | None = None


class CaptureMeta(RecordModel):
    """Provenance supplied by whoever produced the logits."""

    model: ModelInfo
    text: TextInfo = Field(default_factory=TextInfo)
    tokens: TokensInfo = Field(default_factory=TokensInfo)
    positions: PositionsInfo = Field(default_factory=PositionsInfo)
    context: ContextInfo = Field(default_factory=ContextInfo)
    stack: StackFingerprint | None = None
    tokenizer_parity: TokenizerParityInfo | None = None
    truncation: TruncationInfo = Field(default_factory=TruncationInfo)
    notes: list[str] = Field(default_factory=list, description="free-form provenance lines")


class ShardInfo(RecordModel):
    file: str
    n_positions: int = Field(ge=1)
    first_position: int = Field(ge=0)
    last_position: int = Field(ge=0)
    bytes: int = Field(ge=0)
    sha256: Sha256


class FileInfo(RecordModel):
    file: str
    bytes: int = Field(ge=0)
    sha256: Sha256


class CaptureManifest(CaptureMeta):
    """``manifest.json``: the provenance plus the storage facts the writer records."""

    format: Literal["kldcard-capture"] = FORMAT
    format_version: Literal[1] = FORMAT_VERSION
    kldcard_version: str
    created_utc: str | None = None
    n_vocab: int = Field(ge=1)
    dtype: Literal["bf16", "f32"] = Field(description="storage dtype of the raw logits")
    n_positions: int = Field(ge=0)
    n_tokens: int = Field(ge=1)
    token_ids_sha256: Sha256 = Field(description="sha256 of the int32 little-endian token ids")
    positions_sha256: Sha256 = Field(description="sha256 of the int64 little-endian positions")
    tokens_file: FileInfo
    shards: list[ShardInfo]
