"""Helpers for the token-parity tests: vocab-only GGUFs and loaded tokenizers, built once.

Loading a real tokenizer costs seconds (Gemma 3's tokenizer.json is 33 MB), so loaded tokenizers
are cached for the whole test process. GGUFs are written under the session's test cache.
"""

from __future__ import annotations

import functools
import hashlib
from pathlib import Path

from kldcard.demo import tokenizer_files
from kldcard.demo.tiny_models import fetch_tokenizer
from kldcard.demo.tokenizer_files import write_vocab_gguf
from kldcard.tokens import EngineTokenizer, load_tokenizer, parse_spec

REPO = Path(__file__).resolve().parent.parent
DATA = REPO / "tests" / "data" / "tokens"
CORPUS = DATA / "corpus"
CONVERSATION = DATA / "chat" / "conversation.json"

# A ChatML template that differs from Qwen3's own in one place: a blank line after each turn.
CHATML_BLANK_LINE = (
    "{% for m in messages %}<|im_start|>{{ m['role'] }}\n{{ m['content'] }}<|im_end|>\n\n{% endfor %}"
    "{% if add_generation_prompt %}<|im_start|>assistant\n{% endif %}"
)


def vocab_gguf(cache: Path, family: str, variant: str = "", **kwargs) -> Path:
    """A vocab-only GGUF of ``family`` (``variant`` names a kwargs set, e.g. ``nobos``)."""
    # Keyed by the writer's code and the arguments, so a changed writer never serves a stale file.
    key = hashlib.sha256(Path(tokenizer_files.__file__).read_bytes())
    key.update(repr(sorted(kwargs.items())).encode())
    out_dir = cache / "tokens-gguf" / key.hexdigest()[:12]
    out_dir.mkdir(parents=True, exist_ok=True)
    path = out_dir / f"{family}{'-' + variant if variant else ''}.gguf"
    if not path.is_file():
        write_vocab_gguf(fetch_tokenizer(family, cache), path, family, **kwargs)
    return path


@functools.lru_cache(maxsize=None)
def tokenizer(spec: str) -> EngineTokenizer:
    return load_tokenizer(parse_spec(spec))


def trio(cache: Path, family: str) -> list[EngineTokenizer]:
    """transformers, llama.cpp (vocab-only GGUF from the same files) and mlx-lm tokenizers."""
    tok = fetch_tokenizer(family, cache)
    return [tokenizer(f"hf:{tok}"), tokenizer(f"llama.cpp:{vocab_gguf(cache, family)}"), tokenizer(f"mlx:{tok}")]
