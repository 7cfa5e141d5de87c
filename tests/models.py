"""Tiny test models (re-exported from :mod:`kldcard.demo.tiny_models`, which ``kldcard demo`` also uses)."""

from kldcard.demo.tiny_models import (  # noqa: F401
    ARCHS,
    TOKENIZER_PACKAGES,
    TinyParams,
    build_tiny_models,
    fetch_tokenizer,
    params_key,
    quantize_gguf,
)
