"""Capture prompt top-k log-probabilities from an OpenAI-compatible server into a sparse capture.

The token ids come from the server's own tokenizer (BOS as the server adds it, recorded
explicitly); with ``tokenizer`` (a local spec such as ``llama.cpp:FILE`` or ``transformers:DIR``)
they are checked against the local tokenizer and the outcome recorded as tokenizer parity. One
context window: the whole text must fit the server's context. The result is marked
``truncation={"kind": "top-k", "top_k": K}``; its stack is the server's API, version and model name
(a remote server's hardware is not observable from the API, so those fields say ``unknown``).
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from kldcard.capture.fingerprint import os_string, read_text, text_record
from kldcard.capture.manifest import CaptureMeta
from kldcard.capture.openai_engine import OpenAIServer
from kldcard.capture.positions import make_windows, parse_positions, select_positions
from kldcard.capture.sparse import SparseCapture, write_sparse_capture
from kldcard.errors import InputError
from kldcard.schema import StackFingerprint

__all__ = ["OpenAICaptureResult", "capture_openai"]


@dataclass
class OpenAICaptureResult:
    capture: SparseCapture
    api: str
    server_version: str
    n_tokens: int
    n_positions: int
    n_unresolved: int


def _server_stack(api: str, version: str, base_url: str, model: str) -> StackFingerprint:
    from kldcard import __version__

    return StackFingerprint(
        engine=f"openai-server:{api}", engine_version=version, engine_build=f"{base_url} model={model}",
        backend="unknown", device="unknown (remote server)", attention_backend="unknown",
        weights_dtype="unknown", kv_cache_dtype="unknown", prefill_chunk=1, threads=None,
        os=os_string(), libraries={}, kldcard_version=__version__,
    )


def capture_openai(
    base_url: str,
    model: str,
    text_path: str | os.PathLike,
    out: str | os.PathLike,
    *,
    top_k: int,
    positions: str = "all",
    api: str = "auto",
    n_vocab: int | None = None,
    tokenizer: str | None = None,
    vocab_gguf: str | os.PathLike | None = None,
    text_name: str | None = None,
    timeout: float = 120.0,
    retries: int = 3,
    overwrite: bool = False,
) -> OpenAICaptureResult:
    """Request the prompt's top-``top_k`` log-probabilities and write a sparse capture at ``out``.

    ``vocab_gguf``: the served model's GGUF (llama-cpp-python only), to map the token strings the
    server reports back to ids exactly; without it they are mapped through the server's tokenizer,
    which cannot tell apart ids whose bytes decode to the same string (partial UTF-8 sequences), so
    an occasional entry may carry a wrong id.
    """
    if top_k < 1:
        raise InputError("--top-k must be >= 1")
    p = Path(text_path)
    text, raw = read_text(p)
    if not text:
        raise InputError(f"{p}: the text is empty")
    if Path(out).exists() and not overwrite:
        raise InputError(f"{out} already exists (pass --force to replace it)")
    scheme = parse_positions(positions)

    srv = OpenAIServer(base_url, api=api, timeout=timeout, retries=retries)
    srv.check_model(model)
    if vocab_gguf is not None:  # exact string -> id mapping for llama-cpp-python's string-keyed answers
        gguf_vocab = srv.load_gguf_vocab(str(vocab_gguf))
        n_vocab = n_vocab or gguf_vocab
    ids = srv.tokenize(model, text)
    if len(ids) < 2:
        raise InputError(f"the server tokenized {p.name} into {len(ids)} token(s); at least 2 are needed")
    parity = None
    if tokenizer:
        from kldcard.tokens.parity import parity_for_capture

        parity = parity_for_capture(tokenizer, [tokenizer], text, ids=ids)
        parity["engines"] = [f"server {srv.api} {model}", *parity["engines"][1:]]
    wanted = select_positions(scheme, make_windows(len(ids), None, scheme))
    got = srv.prompt_topk(model, text, ids, top_k)
    row = {int(q): r for r, q in enumerate(got.positions)}
    keep = [int(q) for q in wanted if int(q) in row]
    if not keep:
        raise InputError(f"the server reported none of the {len(wanted)} requested positions")
    notes = list(got.notes)
    if len(keep) < len(wanted):
        notes.append(f"{len(wanted) - len(keep)} requested position(s) not reported by the server and skipped")
    tk = np.full((len(keep), top_k), -1, np.int64)
    tl = np.full((len(keep), top_k), -np.inf, np.float32)
    for r, q in enumerate(keep):
        i, v = got.ids[row[q]], got.logprobs[row[q]]
        tk[r, : len(i)], tl[r, : len(v)] = i, v
    vocab = n_vocab
    if vocab is None:
        vocab = int(max(max(ids), int(tk.max()))) + 1
        notes.append(f"n_vocab {vocab} is a lower bound (largest id seen + 1); the server does not report it")
    bos_id = ids[0] if srv.tokenize(model, "")[:1] == ids[:1] and ids[:1] else None
    meta = CaptureMeta(
        model={"name": model, "path": srv.base_url, "format": f"openai-server:{srv.api}"},
        text=text_record(raw, text_name or p.name),
        tokens={"bos": "added" if bos_id is not None else "none", "add_bos": bos_id is not None, "bos_id": bos_id,
                "tokenizer": f"server {srv.api} tokenize endpoint"},
        positions=scheme.meta(),
        context={"n_ctx": len(ids), "n_chunks": 1, "stride": len(ids)},
        stack=_server_stack(srv.api, srv.version, srv.base_url, model),
        tokenizer_parity=parity,
        truncation={"kind": "top-k", "top_k": top_k, "source": f"{srv.api} prompt log-probabilities"},
        notes=notes,
    )
    cap = write_sparse_capture(out, meta=meta, n_vocab=vocab, token_ids=np.asarray(ids), positions=np.asarray(keep),
                               topk_ids=tk, topk_logprobs=tl, n_unresolved=got.n_unresolved, overwrite=overwrite)
    return OpenAICaptureResult(cap, srv.api, srv.version, len(ids), len(keep), got.n_unresolved)
