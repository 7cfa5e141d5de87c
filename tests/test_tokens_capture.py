"""Token parity as the capture uses it: the ids the real capture adapters feed, compared with the
other engines' tokenizers; a mismatch refuses the capture (TokenMismatch) unless overridden."""

from __future__ import annotations

from pathlib import Path

import pytest
from helpers_tokens import vocab_gguf

from kldcard.capture.engines import EngineSettings, open_model
from kldcard.errors import TokenMismatch
from kldcard.schema import TokenizerParity
from kldcard.tokens import parity_for_capture, read_text

pytestmark = pytest.mark.engines


def _capture_ids(engine: str, model: Path, text: str) -> list[int]:
    with open_model(engine, model, EngineSettings(threads=1)) as m:
        return [int(i) for i in m.tokenize(text).ids]


def test_capture_adapters_agree_with_the_other_engines(tiny_qwen3: dict, engines_text: Path):
    text = read_text(engines_text)
    ids = _capture_ids("llama.cpp", tiny_qwen3["gguf_f32"], text)
    d = parity_for_capture(
        f"llama.cpp:{tiny_qwen3['gguf_f32']}",
        [f"llama.cpp:{tiny_qwen3['gguf_q8_0']}", f"hf:{tiny_qwen3['hf']}", f"mlx:{tiny_qwen3['hf']}"],
        text,
        ids=ids,
    )
    assert TokenizerParity.model_validate(d).outcome == "identical"
    assert d["tokens_checked"] == len(ids) > 200
    assert [e.split(" ")[0] for e in d["engines"]] == ["llama-cpp-python"] * 2 + ["transformers", "mlx-lm"]
    assert d["engines"][1].endswith(Path(tiny_qwen3["gguf_q8_0"]).name)


def test_capture_is_refused_when_the_other_engine_adds_bos(tiny_llama: dict, engines_text: Path, test_cache):
    """The tiny Llama GGUF follows transformers (no BOS); a GGUF converted the convert_hf_to_gguf
    way from the same tokenizer files adds BOS. Comparing their logits would be meaningless."""
    text = read_text(engines_text)
    ids = _capture_ids("transformers", tiny_llama["hf"], text)
    converted = f"llama.cpp:{vocab_gguf(test_cache, 'llama3')}"
    with pytest.raises(TokenMismatch) as exc:
        parity_for_capture(f"hf:{tiny_llama['hf']}", [converted], text, ids=ids)
    assert exc.value.position == 0 and "missing BOS" in str(exc.value)
    d = parity_for_capture(f"hf:{tiny_llama['hf']}", [converted], text, ids=ids, override=True)
    assert TokenizerParity.model_validate(d).outcome == "overridden"
