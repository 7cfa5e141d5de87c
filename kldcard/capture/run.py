"""Capture full-vocabulary logits from an engine into a capture store.

:func:`capture` tokenizes the text with the engine's own tokenizer, splits the tokens into
non-overlapping context windows (``n_ctx``; default one window over the whole text), feeds each
window in prefill chunks through a fresh KV cache, and stores the raw logits of the sampled
positions only (BF16 by default). Memory is bounded by one chunk (``len(sampled) x n_vocab``), not
by the text. The manifest records the model files' and the text's sha256, the positions scheme,
the context layout and the exact stack fingerprint. The store's writer is atomic: an exception or
Ctrl-C leaves no ``manifest.json`` at ``out``.

``repeat=N`` runs the whole capture N times in this process and compares the sha256 of the float32
logits of every run: a reference is a fixed target only if its stack reproduces it bit for bit.
"""

from __future__ import annotations

import hashlib
import os
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from kldcard.capture.engines import (
    EngineModel,
    EngineSettings,
    TokenizedText,
    canonical_name,
    open_model,
)
from kldcard.capture.fingerprint import read_text, text_record
from kldcard.capture.manifest import CaptureMeta, TokenizerParityInfo
from kldcard.capture.positions import (
    PositionScheme,
    Windows,
    make_windows,
    parse_positions,
    select_positions,
)
from kldcard.capture.store import Capture, CaptureWriter, open_capture
from kldcard.errors import InputError, UsageError
from kldcard.progress import position_progress
from kldcard.schema import StackFingerprint

__all__ = ["CaptureResult", "capture", "run_capture"]


@dataclass
class CaptureResult:
    """What :func:`run_capture` did: the capture plus the reproducibility check."""

    capture: Capture
    digests: list[str]  # sha256 of the float32 logits (and positions) of each run
    seconds: list[float]  # wall time of each run (engine work, excluding model load)
    load_seconds: float
    stack: StackFingerprint
    n_tokens: int
    n_positions: int
    notes: list[str] = field(default_factory=list)

    @property
    def bit_identical(self) -> bool | None:
        """True/False when repeated; None for a single run."""
        return None if len(self.digests) < 2 else len(set(self.digests)) == 1


def _run_engine(
    m: EngineModel,
    ids: np.ndarray,
    windows: Windows,
    positions: np.ndarray,
    chunk: int,
    sink: Callable[[np.ndarray, np.ndarray], None] | None,
    progress: bool | None,
    desc: str,
    digest: bool = True,
) -> str | None:
    """Feed every window in chunks; hand (positions, logits) to ``sink``; return the logits digest
    (None when not ``digest``)."""
    h = hashlib.sha256() if digest else None
    with position_progress(len(ids), desc, enabled=progress is not False, unit="tokens") as advance:
        for w_start, w_len in zip(windows.starts, windows.lengths):
            m.begin_sequence(w_len)
            for c0 in range(0, w_len, chunk):
                c1 = min(c0 + chunk, w_len)
                g0, g1 = w_start + c0, w_start + c1
                a, b = np.searchsorted(positions, [g0, g1])
                pos = positions[a:b]
                logits = m.forward(ids[g0:g1], c0, pos - g0)
                if logits.shape != (len(pos), m.n_vocab) or logits.dtype != np.float32:
                    raise RuntimeError(f"{m.engine} returned logits {logits.dtype}{list(logits.shape)}")
                if len(pos):
                    if h is not None:
                        h.update(pos.astype("<i8"))
                        h.update(np.ascontiguousarray(logits, dtype="<f4"))  # hashed in place, no copy
                    if sink is not None:
                        sink(pos, logits)
                if advance:
                    advance(c1 - c0)
    return None if h is None else h.hexdigest()


def _run(m, ids, windows, positions, chunk, sink, progress, desc, plan, layout, digest=True) -> str | None:
    """The capture loop: llama-perplexity's batch layout when one is set, else window by window."""
    if layout is None:
        return _run_engine(m, ids, windows, positions, chunk, sink, progress, desc, digest)
    from kldcard.capture.llama_perplexity import run_batch_layout

    with position_progress(len(ids), desc, enabled=progress is not False, unit="tokens") as advance:
        return run_batch_layout(m, plan, layout, sink, advance, digest)


def _meta(
    m: EngineModel,
    tok: TokenizedText,
    text_path: Path,
    text_bytes: bytes,
    text_name: str | None,
    scheme: PositionScheme,
    windows: Windows,
    chunk: int,
    stack: StackFingerprint,
    notes: list[str],
) -> CaptureMeta:
    model = m.model_meta()
    tj = model["files"].get("tokenizer.json")
    tokenizer = f"tokenizer.json sha256 {tj}" if tj else f"{m.engine}'s tokenizer from the {model['format']} file"
    return CaptureMeta(
        model=model,
        text=text_record(text_bytes, text_name or text_path.name),
        tokens={"bos": tok.bos_label(), "add_bos": tok.add_bos, "bos_id": tok.bos_id, "tokenizer": tokenizer},
        positions=scheme.meta(),
        context={"n_ctx": windows.n_ctx, "n_chunks": windows.n_windows, "stride": windows.n_ctx, "prefill_chunk": chunk},
        stack=stack,
        truncation={"kind": "full"},
        notes=notes,
    )


def run_capture(
    engine: str,
    model: str | os.PathLike,
    text: str | os.PathLike,
    out: str | os.PathLike,
    *,
    positions: str | PositionScheme = "every:32",
    n_ctx: int | None = None,
    prefill_chunk: int | None = None,
    store_dtype: str | None = None,
    repeat: int = 1,
    text_name: str | None = None,
    overwrite: bool = False,
    progress: bool | None = None,
    notes: list[str] | tuple[str, ...] = (),
    shard_positions: int = 4096,
    protocol: str | None = None,
    parity_with: Sequence[str] = (),
    allow_token_mismatch: bool = False,
    writer: Callable[..., Any] = CaptureWriter,
    digest: bool = True,
    **engine_settings: Any,
) -> CaptureResult:
    """Capture and report. See :func:`capture`; ``repeat`` runs the capture that many times (the
    last run writes the store) and records in the manifest notes whether all runs were bit-identical.

    ``writer``: what receives the logits, called like :class:`CaptureWriter` (a context manager with
    ``meta`` and ``append(positions, logits)``). Anything else (``kldcard evaluate`` compares the
    blocks as they leave the engine) hands back its own capture-like object as ``w.capture``.

    ``digest=False``: no sha256 of the logits (``digests`` stays empty; hashing 2 GB of float32 costs
    ~2 s); a ``repeat`` run always hashes, since its digests are the point."""
    name = canonical_name(engine)
    if protocol not in (None, "llama-perplexity"):
        raise UsageError(f"unknown --protocol {protocol!r}; the one supported is llama-perplexity")
    if protocol == "llama-perplexity":
        # llama-perplexity: non-overlapping n_ctx chunks (default 512), BOS overwriting token 0 of
        # each chunk when the vocabulary adds BOS, positions n_ctx/2 .. n_ctx-2 scored; its base file
        # and statistics use float32 logits, so the capture stores F32 unless told otherwise.
        positions, n_ctx = "second-half", n_ctx or 512
        store_dtype = store_dtype or "f32"
    store_dtype = store_dtype or "bf16"
    scheme = parse_positions(positions) if isinstance(positions, str) else positions
    if repeat < 1:
        raise UsageError("--repeat must be at least 1")
    if store_dtype not in ("bf16", "f32"):
        raise UsageError(f"--store-dtype must be bf16 or f32, not {store_dtype!r}")
    out_path, text_path = Path(out), Path(text)
    if out_path.exists() and not overwrite:
        raise InputError(f"{out_path} already exists (use --force to replace it)")
    text_str, text_bytes = read_text(text_path)
    settings = EngineSettings(**engine_settings)
    layout = None
    if protocol == "llama-perplexity" and name == "llama.cpp":
        from kldcard.capture.llama_perplexity import llama_perplexity_batching

        # llama-perplexity's -b/-ub defaults (2048/512) and its n_seq = n_batch/n_ctx sequences per decode.
        layout = llama_perplexity_batching(n_ctx, settings.n_batch or prefill_chunk, settings.n_ubatch)
        settings.n_batch, settings.n_ubatch = layout.n_batch, layout.n_ubatch
    if name == "llama.cpp":
        # One llama_decode per n_batch tokens: the prefill chunk *is* n_batch.
        chunk = settings.n_batch or prefill_chunk or 512
        settings.n_batch = chunk
    else:
        chunk = prefill_chunk or 512
    if chunk < 1:
        raise UsageError("--prefill-chunk must be at least 1")
    settings.prefill_chunk = chunk

    t0 = time.perf_counter()
    with open_model(name, Path(model), settings) as m:
        load_seconds = time.perf_counter() - t0
        if protocol == "llama-perplexity":
            from kldcard.capture.llama_perplexity import llama_perplexity_text, tokenize_as_llama_perplexity

            # Every engine reads the text llama-perplexity reads (one trailing newline dropped), so
            # the ids line up with a llama.cpp capture of the same file; llama.cpp also tokenizes as it.
            text_str = llama_perplexity_text(text_str)
            tok = tokenize_as_llama_perplexity(m, text_str) if layout is not None else m.tokenize(text_str)
        else:
            tok = m.tokenize(text_str)
        ids = tok.ids
        # Token parity before anything is written: a tokenization difference would masquerade as
        # kernel or quantization error in every later comparison.
        from kldcard.tokens import parity_for_capture

        plan = None
        parity = None  # not checked: the card's evaluation-text disclosure will say so
        if parity_with:
            parity = parity_for_capture(f"{name}:{model}", list(parity_with), text_str, ids=ids.tolist(),
                                        override=allow_token_mismatch)
        if protocol == "llama-perplexity":
            from kldcard.capture.llama_perplexity import llama_perplexity_plan

            plan = llama_perplexity_plan(ids, n_ctx, add_bos=bool(tok.add_bos), bos_id=tok.bos_id)
            ids = plan.fed_ids
        windows = make_windows(len(ids), n_ctx, scheme)
        pos = select_positions(scheme, windows)
        if len(pos) == 0:
            raise UsageError(f"no positions selected ({scheme.describe()}, {len(ids)} tokens)")
        if layout is not None:
            m.begin_batch_layout(layout)  # before the fingerprint: the layout is part of the stack
        stack = m.fingerprint()
        run_notes = [
            f"captured by kldcard with {name}: {len(pos)} positions ({scheme.describe()}) of {len(ids)} tokens, "
            f"{windows.n_windows} context window(s) of n_ctx {windows.n_ctx}, prefill chunk {chunk}",
            *([layout.describe(), "text tokenized as llama-perplexity does (one trailing newline dropped, "
               "special-token strings read as plain text)"] if layout is not None else []),
            *notes,
        ]
        meta = _meta(m, tok, text_path, text_bytes, text_name, scheme, windows, chunk, stack, run_notes)
        meta.tokenizer_parity = None if parity is None else TokenizerParityInfo.model_validate(parity)
        if protocol == "llama-perplexity":
            meta.positions.scheme = "llama-perplexity"
            if tok.add_bos:
                meta.tokens.bos = "chunk-start-overwrite"
        digests, seconds = [], []
        for r in range(repeat - 1):  # hash-only runs; the last run writes
            t = time.perf_counter()
            desc = f"{name} run {r + 1}/{repeat}"
            digests.append(_run(m, ids, windows, pos, chunk, None, progress, desc, plan, layout))
            seconds.append(time.perf_counter() - t)
        with writer(out_path, meta=meta, n_vocab=m.n_vocab, token_ids=ids, dtype=store_dtype,
                           shard_positions=shard_positions, overwrite=overwrite) as w:
            t = time.perf_counter()
            desc = f"{name} run {repeat}/{repeat}" if repeat > 1 else f"{name} capture"
            d = _run(m, ids, windows, pos, chunk, w.append, progress, desc, plan, layout, digest or repeat > 1)
            digests.extend([d] if d is not None else [])
            seconds.append(time.perf_counter() - t)
            if repeat > 1:
                same = len(set(digests)) == 1
                w.meta.notes.append(
                    f"reproducibility: {repeat} runs in one process, float32 logits "
                    f"{'bit-identical' if same else 'NOT bit-identical'} (sha256 {', '.join(d[:12] for d in digests)})"
                )
    cap = w.capture if hasattr(w, "capture") else open_capture(out_path, verify=False)
    return CaptureResult(cap, digests, seconds, load_seconds, stack, len(ids), len(pos), list(cap.manifest.notes))


def capture(
    engine: str,
    model: str | os.PathLike,
    text: str | os.PathLike,
    out: str | os.PathLike,
    **settings: Any,
) -> Capture:
    """Capture full-vocabulary logits of ``model`` on the text file ``text`` into ``out``.

    ``engine``: ``transformers`` (a model directory), ``llama.cpp`` (a GGUF file) or ``mlx`` (a
    model directory). Settings (all recorded in the manifest):

    - ``positions``: ``"all"``, ``"every:32"`` (default), ``"every:32@OFFSET"``, ``"list:1,5,9"``,
      ``"second-half"`` or a :class:`~kldcard.capture.positions.PositionScheme`.
    - ``n_ctx``: context window length (non-overlapping windows; default: the whole text).
    - ``prefill_chunk``: tokens per forward pass (llama.cpp: ``n_batch``), default 512.
    - ``dtype`` (transformers/mlx: bf16, f16, f32), ``threads``, ``device`` (transformers),
      ``attn_implementation`` (transformers), ``n_batch``, ``n_ubatch``, ``flash_attn``, ``kv_type``,
      ``n_gpu_layers`` (llama.cpp).
    - ``protocol="llama-perplexity"``: llama-perplexity's chunks, per-chunk BOS overwrite and scored
      positions (n_ctx default 512), so the numbers are comparable with llama.cpp's.
    - ``parity_with``: other engine specs (``hf:DIR``, ``llama.cpp:FILE``, ``mlx:DIR``) whose tokenizers
      must produce the same ids; a mismatch raises :class:`~kldcard.errors.TokenMismatch` before anything
      is written unless ``allow_token_mismatch`` (recorded as ``overridden`` in the manifest).
    - ``store_dtype``: ``bf16`` (default) or ``f32``; ``repeat``: run N times and record whether
      the float32 logits were bit-identical; ``overwrite``; ``progress``; ``notes``.

    Raises :class:`~kldcard.errors.EngineNotInstalled` when the engine's extra is missing.
    """
    return run_capture(engine, model, text, out, **settings).capture
