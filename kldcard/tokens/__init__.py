"""Token parity between engines, before any logits are compared.

Tokenization and BOS handling change the *input*; kernel arithmetic changes the logits for an
identical input. A missing or doubled BOS shifts the logits at every position and would read as
quantization error in a KLD run, so captures refuse to run when the engines' token ids differ.

Public API:

- :func:`check_parity` / :func:`check_chat_parity` -> :class:`ParityReport`
- :func:`require_parity` (raises :class:`~kldcard.errors.TokenMismatch`)
- :func:`parity_for_capture` -> the ``tokenizer_parity`` dict of a capture manifest
- :func:`parse_spec` (``hf:DIR``, ``llama.cpp:FILE.gguf``, ``mlx:DIR``), :func:`load_tokenizer`

Owns tokenizer loading per engine and the parity report. May import: errors, files, engines, schema.
"""

from __future__ import annotations

from kldcard.tokens.engines import EngineTokenizer, load_tokenizer
from kldcard.tokens.parity import (
    check_chat_parity,
    check_parity,
    parity_for_capture,
    raise_for_mismatch,
    read_conversation,
    read_text,
    require_parity,
)
from kldcard.tokens.report import KINDS, ChatDiff, EngineResult, Mismatch, ParityReport
from kldcard.tokens.specs import EngineSpec, parse_spec

__all__ = [
    "KINDS",
    "ChatDiff",
    "EngineResult",
    "EngineSpec",
    "EngineTokenizer",
    "Mismatch",
    "ParityReport",
    "check_chat_parity",
    "check_parity",
    "load_tokenizer",
    "parity_for_capture",
    "parse_spec",
    "raise_for_mismatch",
    "read_conversation",
    "read_text",
    "require_parity",
]
