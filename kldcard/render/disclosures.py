"""Build the validated :class:`~kldcard.schema.KldEvaluation` that ``kldcard render`` renders.

Two kinds of input:

- one ``kld_evaluation`` file (JSON or YAML; the bare block or ``{kld_evaluation: ...}``), e.g. one
  copied out of another card: validated and used as is;
- compare results (``kldcard compare`` JSON, one per candidate, same reference and text) plus a
  *disclosures* file for what a capture cannot know: the reference's repo id and pinned revision,
  the evaluation text's name and source, and each candidate's calibration data. Missing disclosures
  are one :class:`InputError` that lists every key to supply.

Disclosures file (YAML or JSON)::

    reference: {model: owner/name, revision: <40-hex commit>}     # or sha256: <hex>
    evaluation_text:
      name: WikiText-2 (raw, test)
      source: {dataset: Salesforce/wikitext, config: wikitext-2-raw-v1, split: test, revision: <40-hex>}
    calibration: {none: true}                   # default for every candidate
    candidates:                                 # per candidate name (optional overrides)
      model-Q4_K_M:
        model: {model: owner/name-GGUF, quantization: q4_k_m}
        calibration: {dataset: owner/calib, sha256: <hex>, n_tokens: 100000, overlaps_evaluation_text: false}
      model-mlx-4bit:                           # run on MLX against a llama.cpp reference, on purpose
        cross_stack: {coordinates: [engine, attention_backend, compute_dtype, kv_cache_dtype],
                      reason: the MLX build is what Apple-silicon users run}
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from pydantic import Field, ValidationError

from kldcard.card.document import yaml_error_parts
from kldcard.card.yaml import compose_and_load
from kldcard.errors import InputError
from kldcard.files import loads_json
from kldcard.schema import KldEvaluation, RecordModel

MAX_INPUT_BYTES = 64 * 1024 * 1024


class ReferenceDisclosure(RecordModel):
    model: str | None = None
    revision: str | None = None
    sha256: str | None = None
    dtype: str | None = None


class CandidateDisclosure(RecordModel):
    model: dict[str, Any] | None = Field(None, description="CandidateModel fields (model, revision, sha256, quantization)")
    calibration: dict[str, Any] | None = None
    cross_stack: dict[str, Any] | None = Field(
        None, description="measured on another stack than the reference on purpose: {coordinates: [...], reason}")


class Disclosures(RecordModel):
    """What a capture cannot know, supplied by the person rendering the card."""

    reference: ReferenceDisclosure = Field(default_factory=ReferenceDisclosure)
    evaluation_text: dict[str, Any] = Field(default_factory=dict, description="name, source (and overrides)")
    calibration: dict[str, Any] | None = Field(None, description="default calibration for every candidate")
    candidates: dict[str, CandidateDisclosure] = Field(default_factory=dict)


def read_structured(path: str | Path, what: str) -> Any:
    """JSON or YAML (safe loader) from ``path``; one-line InputError when unreadable."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such {what} file")
    if p.stat().st_size > MAX_INPUT_BYTES:
        raise InputError(f"{p}: too large for a {what} file")
    try:
        text = p.read_text(encoding="utf-8-sig")
    except (OSError, UnicodeDecodeError) as exc:
        raise InputError(f"{p}: cannot read {what}: {exc}") from None
    try:
        if p.suffix.lower() == ".json":  # nesting, 1e400 and huge integers are one line too
            return loads_json(text, f"{p}: malformed {what}")
        return compose_and_load(text)[1]
    except yaml.YAMLError as exc:
        where, problem = yaml_error_parts(exc)
        raise InputError(f"{p}{where}: malformed {what}: {problem}") from None
    except RecursionError:
        raise InputError(f"{p}: {what} nests too deeply") from None


def load_disclosures(path: str | Path | None) -> Disclosures:
    if path is None:
        return Disclosures()
    data = read_structured(path, "disclosures")
    try:
        return Disclosures.model_validate(data or {})
    except ValidationError as exc:
        raise InputError(f"{path}: {first_error(exc)}") from None


def first_error(exc: ValidationError) -> str:
    errs = exc.errors()
    parts = [f"{'.'.join(str(x) for x in e['loc']) or '(top)'}: {e['msg']}" for e in errs[:5]]
    more = f" (+{len(errs) - 5} more)" if len(errs) > 5 else ""
    return "; ".join(parts) + more


def is_evaluation_data(data: Any) -> bool:
    """A ``kld_evaluation`` block (bare or wrapped) rather than a compare result."""
    if isinstance(data, dict) and isinstance(data.get("kld_evaluation"), dict):
        return True
    return isinstance(data, dict) and "reference" in data and "candidates" in data and "evaluation_text" in data


def evaluation_from_file(path: str | Path, data: Any | None = None) -> KldEvaluation:
    data = read_structured(path, "kld_evaluation") if data is None else data
    if isinstance(data, dict) and "kld_evaluation" in data:
        data = data["kld_evaluation"]
    try:
        return KldEvaluation.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{path}: not a complete kld_evaluation block: {first_error(exc)}") from None
