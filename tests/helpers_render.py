"""A complete, validated KldEvaluation for render tests (numbers shaped like a real Q8_0/Q4 run).

Real compare results replace these where captures exist (see test_render_real.py); these objects let
the text-surgery tests run without engines.
"""

from __future__ import annotations

from typing import Any

from kldcard.schema import KldEvaluation

SHA_A = "a" * 64
SHA_B = "b" * 64
REV = "0123456789abcdef0123456789abcdef01234567"


def stack(engine: str = "transformers", weights: str = "f32", **extra: Any) -> dict[str, Any]:
    base = {
        "engine": engine,
        "engine_version": "5.0.0" if engine == "transformers" else "0.3.16",
        "engine_build": None,
        "backend": "cpu",
        "device": "x86_64 (2 cores)",
        "attention_backend": "sdpa",
        "weights_dtype": weights,
        "kv_cache_dtype": "f32",
        "prefill_chunk": 512,
        "threads": 2,
        "os": "Linux-6.1-x86_64",
    }
    base.update(extra)
    return base


def summary(mean: float, **extra: Any) -> dict[str, Any]:
    out = {
        "mean": mean,
        "se": mean / 50,
        "ci_low": mean * 0.96,
        "ci_high": mean * 1.04,
        "median": mean * 0.4,
        "percentiles": {"99": mean * 9.5, "99.9": mean * 21.0},
        "min": 0.0,
        "max": mean * 40.0,
    }
    out.update(extra)
    return out


def candidate(name: str, quant: str, mean: float, top1: float, **over: Any) -> dict[str, Any]:
    cand = {
        "name": name,
        "model": {"model": f"example/tiny-qwen3-{quant}", "sha256": SHA_B, "quantization": quant},
        "runtime": stack("llama.cpp", weights=quant),
        "calibration": {"none": True},
        "results": {
            "n_positions": 1022,
            "kld": summary(mean),
            "reverse_kld": summary(mean * 1.1),
            "js": summary(mean / 4.2),
            "top1_agreement": top1,
            "top1_agreement_se": 0.002,
            "ranges": [
                {"start": 0, "end": 256, "n": 255, "kld_mean": mean * 1.2, "kld_p99": mean * 8, "top1_agreement": top1},
                {"start": 256, "end": 512, "n": 256, "kld_mean": mean * 0.9, "kld_p99": mean * 7, "top1_agreement": top1},
            ],
        },
    }
    cand.update(over)
    return cand


def evaluation_dict(**over: Any) -> dict[str, Any]:
    ev = {
        "schema_version": 1,
        "reference": {"model": "example/tiny-qwen3", "revision": REV, "dtype": "f32", "runtime": stack("llama.cpp", weights="f32")},
        "evaluation_text": {
            "name": "tiny test text",
            "source": {"url": "https://example.org/tiny.txt"},
            "sha256": SHA_A,
            "n_tokens": 1024,
            "chat_template": False,
            "bos": "none",
            "tokenizer_parity": {"engines": ["transformers", "llama.cpp"], "tokens_checked": 1024, "outcome": "identical"},
        },
        "context": {"n_ctx": 512, "n_chunks": 2, "stride": 512, "prefill_chunk": 512},
        "positions": {"scheme": "all", "n_scored": 1022},
        "direction": {"reported": ["forward", "reverse", "js"], "log_base": "e"},
        "vocabulary": {
            "truncation": "full",
            "reference_vocab_size": 151936,
            "candidate_vocab_size": 151936,
            "alignment": "identical",
        },
        "aggregation": {
            "statistic": "token-mean",
            "percentiles": [99.0, 99.9],
            "output_ranges": [[0, 256], [256, 512]],
            "uncertainty": {"method": "block-bootstrap", "level": 0.95, "resamples": 1000, "seed": 0,
                            "interval": "studentized",
                            "block": {"unit": "moving-block", "length_rule": "politis-white-2004"}},
        },
        "candidates": [
            candidate("tiny-qwen3-Q8_0", "q8_0", 0.000213, 0.99512),
            candidate("tiny-qwen3-Q4_0", "q4_0", 0.0213, 0.9351),
        ],
    }
    ev.update(over)
    return ev


def make_evaluation(**over: Any) -> KldEvaluation:
    return KldEvaluation.model_validate(evaluation_dict(**over))
