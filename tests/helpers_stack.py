"""Helpers for the stack tests: real captures written with the store's numpy API."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kldcard.capture.manifest import CaptureMeta
from kldcard.capture.store import Capture, create_capture_from_arrays
from kldcard.schema import StackFingerprint

H200 = dict(
    engine="vllm",
    engine_version="0.9.1",
    engine_build="abc1234",
    backend="cuda",
    device="NVIDIA H200",
    sm_count=132,
    compute_capability="9.0",
    driver_version="570.86",
    cuda_version="12.8",
    attention_backend="flash_attention_2",
    tensor_parallel=1,
    weights_dtype="bf16",
    kv_cache_dtype="bf16",
    prefill_chunk=512,
    threads=None,
    os="Linux 6.8",
)

CPU = dict(
    engine="transformers",
    engine_version="5.0.0",
    backend="cpu",
    device="AMD EPYC 7763",
    attention_backend="sdpa",
    weights_dtype="bf16",
    kv_cache_dtype="bf16",
    prefill_chunk=512,
    threads=2,
    os="Linux 6.8",
)


def stack(base: dict, **changes: object) -> StackFingerprint:
    return StackFingerprint(**{**base, **changes})


def make_capture(
    path: Path,
    logits: np.ndarray,
    token_ids: np.ndarray,
    fingerprint: StackFingerprint | None,
    positions: np.ndarray | None = None,
    shard_positions: int = 4096,
) -> Capture:
    positions = np.arange(logits.shape[0], dtype=np.int64) if positions is None else positions
    meta = CaptureMeta(
        model={"name": "tiny-test", "format": "npy", "dtype": "bf16"},
        context={"n_ctx": int(token_ids.size), "n_chunks": 1, "stride": int(token_ids.size), "prefill_chunk": 512},
        stack=fingerprint,
        notes=["written by tests/helpers_stack.py from numpy arrays"],
    )
    return create_capture_from_arrays(
        path, logits.astype(np.float32), positions, token_ids.astype(np.int32), meta, shard_positions=shard_positions
    )
