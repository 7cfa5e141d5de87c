"""Base file ⇄ kldcard capture, and llama-perplexity's statistics for a capture against a base file.

``base_to_capture``: each record becomes one capture row of *decoded log-probabilities* in nats
(float32 ``scale·code + min_log_prob``), at global position ``c·n_ctx + n_ctx//2 + k``; code-0 entries
(at or below the floor) become −inf by default (``floor_decode="masked"``) or ``min_log_prob``
(``"value"``, llama.cpp's literal reading; :func:`base_to_capture` says why that is not the default).
The manifest records that the reference went through the uint16 encoding and its floor:
``truncation = {kind: floor, floor_nats: 16}`` (24 for ik_llama.cpp files), a vocabulary-truncation
disclosure. Stored as f32 so nothing is lost.

``capture_to_base``: encodes float32 capture rows with llama.cpp's encoding. Rows that are already
decoded base records (a capture made by ``base_to_capture``) are recognised and their codes, scale
and min recovered exactly, so base → capture → base is byte-identical with ``floor_decode="value"``
(masked captures are re-encoded: codes within ±1, min_log_prob from the stored entries only).

``compare_base_with_capture``: llama-perplexity's ``--kl-divergence`` statistics (KL(P_base ‖ Q),
nats, float32 formulas of :mod:`.stats`) for a candidate capture covering the base file's positions.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

import numpy as np

from kldcard.errors import CaptureMismatch, InputError, TokenMismatch
from kldcard.llamacpp.basefile import (
    IK_FLOOR_NATS,
    MAINLINE_FLOOR_NATS,
    BaseFile,
    BaseFileWriter,
    encode_records,
    record_slots,
)
from kldcard.llamacpp.stats import LlamaKldAccumulator, LlamaKldStats, per_token

F32 = np.float32
_BLOCK = 32  # rows per vectorised step: ~32·n_vocab·(4·6 + 8) bytes of temporaries


def detect_floor(base: BaseFile, max_records: int = 4096) -> float:
    """24 if any of the first ``max_records`` records spans more than 16 nats (only ik_llama.cpp's
    floor allows that), else 16. A 24-nat file whose rows all span ≤ 16 nats reads as 16."""
    spans = []
    seen = 0
    for c in range(base.n_chunk):
        scale, _ = base.scale_and_min(c)
        spans.append(scale.astype(np.float64) * 65535.0)
        seen += len(scale)
        if seen >= max_records:
            break
    return IK_FLOOR_NATS if float(np.max(np.concatenate(spans))) > MAINLINE_FLOOR_NATS + 1e-3 else MAINLINE_FLOOR_NATS


FLOOR_DECODES = ("value", "masked")


def base_capture_meta(base: BaseFile, *, floor_nats: float, bos_id: int | None, model_name: str | None,
                      floor_decode: str = "value") -> dict:
    h = base.header
    step = floor_nats / 65535
    code0 = ("decode to min_log_prob (as llama.cpp's reader sees them)" if floor_decode == "value"
             else "are stored as -inf (probability 0: truncated)")
    notes = [
        f"reference decoded from llama.cpp base file {base.path.name} (n_ctx={h.n_ctx}, n_vocab={h.n_vocab}, "
        f"n_chunk={h.n_chunk}); rows are decoded log-probabilities in nats (scale·code + min_log_prob), not raw "
        f"logits; quantisation step ≤ {step:.3g} nats; entries at or below max − {floor_nats:g} nats were stored as "
        f"code 0 and {code0}",
    ]
    if bos_id is None:
        notes.append("the base file does not record BOS handling; token ids are the stored original ids")
    return {
        "model": {"name": model_name or base.path.name, "path": str(base.path), "format": "llama-base"},
        "tokens": {
            "bos": "chunk-start-overwrite" if bos_id is not None else None,
            "add_bos": True if bos_id is not None else None,
            "bos_id": bos_id,
        },
        "positions": {"scheme": "llama-perplexity"},
        "context": {"n_ctx": h.n_ctx, "n_chunks": h.n_chunk, "stride": h.n_ctx},
        "truncation": {
            "kind": "floor",
            "floor_nats": floor_nats,
            "encoding": "llama.cpp uint16 base file",
            "step_nats_max": step,
            "floor_decode": floor_decode,
        },
        "notes": notes,
    }


def base_to_capture(
    base: BaseFile,
    out_dir: str | os.PathLike,
    *,
    bos_id: int | None = None,
    floor_nats: float | None = None,
    model_name: str | None = None,
    floor_decode: str = "masked",
    overwrite: bool = False,
    progress: Callable[[int, int], None] | None = None,
):
    """Write a kldcard capture (f32) of the decoded base distributions. ``bos_id``: the BOS id when
    the base model's vocabulary adds BOS (then token 0 of every chunk is recorded as BOS, as fed).
    ``floor_decode``: ``masked`` (default) decodes code 0 to −inf — probability 0, the entry was
    truncated — so kldcard's float64 forward KL sums over the stored entries only (reverse KL and the
    NLL of a target below the floor become inf); ``value`` decodes it to ``min_log_prob`` exactly as
    llama.cpp's reader does, which gives *every* tail entry the floor probability: over a 150k
    vocabulary that is far more mass than the tail held, and it biases a float64 KL against this
    reference (tiny Qwen3 test model, n_ctx 512: self-floor mean 7.6e-4 nats with ``value`` against
    1.3e-4 masked, the latter being exactly the probability mass the floor cut off). ``value`` keeps
    base → capture → base byte-identical."""
    from kldcard.capture.store import CaptureWriter, open_capture

    if floor_decode not in FLOOR_DECODES:
        raise InputError(f"floor_decode must be one of {', '.join(FLOOR_DECODES)}, not {floor_decode!r}")

    floor = detect_floor(base) if floor_nats is None else float(floor_nats)
    ids = np.array(base.tokens, dtype=np.int32)
    if bos_id is not None:
        ids[:: base.n_ctx] = bos_id
    meta = base_capture_meta(base, floor_nats=floor, bos_id=bos_id, model_name=model_name, floor_decode=floor_decode)
    with CaptureWriter(out_dir, meta=meta, n_vocab=base.n_vocab, token_ids=ids, dtype="f32", overwrite=overwrite) as w:
        for c in range(base.n_chunk):
            lp = base.log_probs(c)
            if floor_decode == "masked":
                np.copyto(lp, np.float32(-np.inf), where=np.asarray(base.codes(c)) == 0)
            w.append(base.positions(c), lp)
            if progress:
                progress(c + 1, base.n_chunk)
    return open_capture(out_dir, verify=False)


def recover_records(log_probs: np.ndarray) -> np.ndarray | None:
    """If float32 rows ``[n, V]`` are exactly decoded llama.cpp records, return their raw uint16
    records ``[n, nv]`` (codes, scale, min recovered bit for bit); else None."""
    z = np.ascontiguousarray(log_probs, dtype=F32)
    if not np.all(np.isfinite(z)):
        return None  # masked floor entries (−inf): min_log_prob is gone, re-encode instead
    n, v = z.shape
    out = np.zeros((n, record_slots(v)), dtype="<u2")
    for i in range(n):
        row = z[i]
        mn = row.min()  # code 0 always occurs (the minimum entry is at or below lo)
        mx = row.max()
        found = None
        if mx == mn:
            found = (F32(0.0), np.zeros(v, dtype=np.int64))
        else:
            s0 = F32((mx - mn) / F32(65535.0))
            for s in _neighbours(s0, 4):
                codes = np.rint((row - mn) / s).astype(np.int64)
                if codes.min() < 0 or codes.max() > 65535:
                    continue
                if np.array_equal(s * codes.astype(F32) + mn, row):
                    found = (s, codes)
                    break
        if found is None:
            return None
        s, codes = found
        out[i, :4] = np.array([s, mn], dtype="<f4").view("<u2")
        out[i, 4 : 4 + v] = codes.astype("<u2")
    return out


def _neighbours(x: np.float32, k: int) -> list[np.float32]:
    res = [x]
    up = down = x
    for _ in range(k):
        up, down = np.nextafter(up, F32(np.inf)), np.nextafter(down, F32(-np.inf))
        res += [up, down]
    return res


def capture_to_base(
    capture,
    out_path: str | os.PathLike,
    *,
    floor_nats: float = MAINLINE_FLOOR_NATS,
    overwrite: bool = False,
    progress: Callable[[int, int], None] | None = None,
) -> Path:
    """Write a llama.cpp base file from a capture whose positions are exactly llama-perplexity's
    (all n_ctx//2 … n_ctx−2 of every whole chunk; ``context.n_ctx`` in the manifest)."""
    m = capture.manifest
    n_ctx = m.context.n_ctx
    if not n_ctx:
        raise InputError("the capture's manifest has no context.n_ctx; llama.cpp base files need it")
    n_chunk = m.n_tokens // n_ctx
    s = n_ctx - 1 - n_ctx // 2
    want = np.concatenate([c * n_ctx + np.arange(n_ctx // 2, n_ctx - 1) for c in range(n_chunk)]) if n_chunk else []
    if n_chunk < 1 or not np.array_equal(capture.positions, want):
        raise InputError(
            f"the capture's positions are not llama-perplexity's at n_ctx={n_ctx} (positions n_ctx//2 … n_ctx−2 "
            "of every whole chunk); capture with --protocol llama-perplexity"
        )
    if m.dtype != "f32":
        raise InputError("the capture stores BF16 logits; llama.cpp base files encode float32 logits (capture with --dtype f32)")
    tokens = np.asarray(capture.token_ids[: n_chunk * n_ctx])
    with BaseFileWriter(out_path, n_ctx=n_ctx, n_vocab=m.n_vocab, tokens=tokens, floor_nats=floor_nats, overwrite=overwrite) as w:
        for c in range(n_chunk):
            z = capture.logits_f32(c * s, (c + 1) * s)
            raw = recover_records(z) if m.model.format == "llama-base" else None
            w.write_chunk_records(raw if raw is not None else encode_records(z, floor_nats))
            if progress:
                progress(c + 1, n_chunk)
    return Path(out_path)


def compare_base_with_capture(
    base: BaseFile,
    candidate,
    *,
    progress: Callable[[int, int], None] | None = None,
) -> LlamaKldStats:
    """llama-perplexity's statistics (KL(P_base ‖ Q_candidate), nats, float32 formulas) for a candidate
    capture that covers every position of the base file. Token ids must match the base file's except
    at chunk starts (where llama-perplexity feeds BOS when the vocabulary adds it)."""
    h = base.header
    if candidate.n_vocab != h.n_vocab:
        raise CaptureMismatch(
            f"vocabulary sizes differ: base file {h.n_vocab}, candidate capture {candidate.n_vocab}"
        )
    n_tok = h.n_chunk * h.n_ctx
    cand_ids = np.asarray(candidate.token_ids)
    if len(cand_ids) < n_tok:
        raise CaptureMismatch(f"the candidate capture has {len(cand_ids)} tokens; the base file needs {n_tok}")
    base_ids = np.asarray(base.tokens)
    diff = np.flatnonzero(cand_ids[:n_tok] != base_ids)
    diff = diff[diff % h.n_ctx != 0]  # chunk starts may carry the BOS overwrite
    if len(diff):
        i = int(diff[0])
        raise TokenMismatch(i, int(base_ids[i]), int(cand_ids[i]), "base file vs candidate capture")
    acc = LlamaKldAccumulator()
    cpos = candidate.positions
    for c in range(h.n_chunk):
        pos = base.positions(c)
        rows = np.searchsorted(cpos, pos)
        if np.any(rows >= len(cpos)) or not np.array_equal(cpos[np.minimum(rows, len(cpos) - 1)], pos):
            missing = pos[(rows >= len(cpos)) | (cpos[np.minimum(rows, len(cpos) - 1)] != pos)][0]
            raise CaptureMismatch(
                f"the candidate capture lacks position {int(missing)} that the base file scores "
                "(capture with --protocol llama-perplexity at the same n_ctx)"
            )
        targets = base.targets(c)
        raw = base.raw[c]
        for a in range(0, len(pos), _BLOCK):
            b = min(a + _BLOCK, len(pos))
            r0, r1 = int(rows[a]), int(rows[b - 1]) + 1
            z = candidate.logits_f32(r0, r1)
            if r1 - r0 != b - a:
                z = z[rows[a:b] - r0]
            acc.add(per_token(z, raw[a:b], targets[a:b], h.n_vocab))
        acc.end_chunk(c + 1)
        if progress:
            progress(c + 1, h.n_chunk)
    return acc.finish()
