"""Tiny test models (re-exported from :mod:`kldcard.testmodels`, which ``kldcard demo`` also uses)."""

from kldcard.testmodels import (  # noqa: F401
    ARCHS,
    TOKENIZER_PACKAGES,
    TinyParams,
    build_tiny_models,
    fetch_tokenizer,
    params_key,
    quantize_gguf,
)
