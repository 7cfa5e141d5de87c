"""What the disclosure schema says beyond its JSON Schema, in plain Python (no pydantic).

The pydantic models in :mod:`kldcard.schema` are the source of truth for the ``kld_evaluation`` block;
the JSON Schema in ``schemas/`` is generated from them. What a JSON Schema cannot say — the cross-field
rules ("a CUDA stack must record its SM count", "the reference must be pinned") — lives here, once:
the models' validators call these functions, and so does the linter's pydantic-free validator
(:mod:`kldcard.lint.block_check`), which accepts a valid block without importing pydantic (about half
of a one-card lint's run). Also here: the disclosure numbering and the plain-dict steps both share.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping
from typing import Any

SCHEMA_VERSION = 1

# Weight/compute dtypes that count as an unquantized reference.
UNQUANTIZED_DTYPES = ("bf16", "f16", "f32")

BLOCK_METHODS = ("window-bootstrap", "block-bootstrap")
"""Uncertainty methods that resample blocks of tokens (dependence between tokens accounted for)."""

DISCLOSURES: dict[int, tuple[str, str]] = {
    1: ("reference checkpoint", "reference"),
    2: ("runtime environment", "runtime"),
    3: ("evaluation text", "evaluation_text"),
    4: ("calibration data", "calibration"),
    5: ("context lengths", "context"),
    6: ("sampled positions", "positions"),
    7: ("KL direction", "direction"),
    8: ("vocabulary truncation", "vocabulary"),
    9: ("aggregation", "aggregation"),
}
_TOP = {key: n for n, (_, key) in DISCLOSURES.items() if n not in (2, 4)}


def disclosure_for_loc(loc: tuple[str | int, ...]) -> int | None:
    """The disclosure (1–9) a validation-error location belongs to, or None (structure/results)."""
    if "runtime" in loc:
        return 2
    if len(loc) >= 3 and loc[0] == "candidates" and loc[2] == "calibration":
        return 4
    if loc and loc[0] in _TOP:
        return _TOP[loc[0]]
    return None


def is_quantized_dtype(dtype: str) -> bool:
    """True unless ``dtype`` names an unquantized float format (bf16, f16, f32 and spellings)."""
    norm = re.sub(r"[^a-z0-9]", "", dtype.lower())
    norm = {"bfloat16": "bf16", "float16": "f16", "fp16": "f16", "float32": "f32", "fp32": "f32"}.get(norm, norm)
    return norm not in UNQUANTIZED_DTYPES


def expand_runtime_changes(raw: Any) -> Any:
    """A compact block's candidates get ``runtime`` = reference.runtime with their ``runtime_changes``
    (a plain-dict step shared by the model and the linter's raw consistency checks)."""
    if not isinstance(raw, dict) or not isinstance(raw.get("candidates"), list):
        return raw
    ref = raw.get("reference")
    base = ref.get("runtime") if isinstance(ref, dict) else None
    if not isinstance(base, dict):
        return raw
    cands = []
    for c in raw["candidates"]:
        if isinstance(c, dict) and "runtime" not in c and isinstance(c.get("runtime_changes"), dict):
            c = {**c, "runtime": {**base, **c["runtime_changes"]}}
        cands.append(c)
    return {**raw, "candidates": cands}


# ---- cross-field rules: each takes the model's fields as a mapping and returns the error or None ----


def stack_accelerator_details(m: Mapping[str, Any]) -> str | None:
    backend = str(m.get("backend", "")).lower()
    if backend in ("cuda", "rocm"):
        missing = [f for f in ("sm_count", "compute_capability", "driver_version", "cuda_version") if m.get(f) is None]
        if missing:
            return f"a {m.get('backend')} stack must record {', '.join(missing)}"
    if backend == "metal" and not m.get("chip_family"):
        return "a metal stack must record chip_family"
    return None


def reference_pinned(m: Mapping[str, Any]) -> str | None:
    if m.get("revision") is None and m.get("sha256") is None:
        return "the reference must be pinned by revision (40-hex commit) or sha256"
    return None


def calibration_complete(m: Mapping[str, Any]) -> str | None:
    if m.get("none"):
        return None
    missing = [f for f in ("dataset", "sha256", "n_tokens", "overlaps_evaluation_text") if m.get(f) is None]
    if missing:
        return f"calibration needs {', '.join(missing)} (or none: true)"
    return None


def positions_scheme_params(m: Mapping[str, Any]) -> str | None:
    if m.get("scheme") == "every-n" and (m.get("every_n") is None or m.get("offset") is None):
        return "scheme every-n needs every_n and offset"
    if m.get("scheme") == "explicit" and not m.get("explicit"):
        return "scheme explicit needs the explicit list"
    return None


def vocabulary_params(m: Mapping[str, Any]) -> str | None:
    if m.get("truncation") == "top-k" and (m.get("top_k") is None or m.get("tail") is None):
        return "truncation top-k needs top_k and tail"
    if m.get("truncation") == "floor" and m.get("floor_nats") is None:
        return "truncation floor needs floor_nats"
    if m.get("alignment") == "identical" and m.get("reference_vocab_size") != m.get("candidate_vocab_size"):
        return "alignment identical but vocab sizes differ; use common-prefix"
    return None


def uncertainty_bootstrap(m: Mapping[str, Any]) -> str | None:
    method = m.get("method")
    if method in ("bootstrap", *BLOCK_METHODS) and None in (m.get("level"), m.get("resamples"), m.get("seed")):
        return f"{method} needs level, resamples and seed"
    if method in BLOCK_METHODS and m.get("block") is None:
        return f"{method} needs the block definition (block.unit)"
    return None


# The model (JSON Schema ``$defs`` name) each rule belongs to: the validator applies a rule wherever
# the schema refers to that definition.
CROSS_FIELD: dict[str, Callable[[Mapping[str, Any]], str | None]] = {
    "StackFingerprint": stack_accelerator_details,
    "Reference": reference_pinned,
    "Calibration": calibration_complete,
    "Positions": positions_scheme_params,
    "Vocabulary": vocabulary_params,
    "Uncertainty": uncertainty_bootstrap,
}
