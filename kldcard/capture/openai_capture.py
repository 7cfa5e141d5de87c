"""Capture prompt top-k log-probabilities from an OpenAI-compatible server into a sparse capture.

The token ids come from the server's own tokenizer (BOS as the server adds it, recorded
explicitly); with ``tokenizer`` (a local spec such as ``llama.cpp:FILE`` or ``transformers:DIR``)
they are checked against the local tokenizer and the outcome recorded as tokenizer parity.

Long texts are sent in pieces of at most ``piece_tokens`` tokens (a server that spends a fraction of a
second per prompt token would otherwise exceed any reasonable timeout), cut at line breaks (else at
spaces) where the pieces tokenize to exactly the whole text's ids, with a progress bar. Each piece is
its own request, hence its own context window starting from an empty cache: the manifest records
the pieces as the context windows (``context.n_chunks``, the token offset of each in the notes), and
a local capture to compare with must use the same windows. The result is marked
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
from kldcard.capture.openai_prompt import prompt_topk
from kldcard.capture.positions import make_windows, parse_positions, select_positions
from kldcard.capture.sparse import SparseCapture, write_sparse_capture
from kldcard.errors import InputError
from kldcard.progress import counted_progress
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
    pieces: list[tuple[int, int]]  # (first token, number of tokens) of each request
    piece_chars: list[tuple[int, int]]  # (start, end) character offsets of each request's text


def _cuts(text: str) -> list[int]:
    """Character offsets where a piece may end: after each line break, else before each space."""
    lines = [i + 1 for i, ch in enumerate(text) if ch == "\n" and 0 < i + 1 < len(text)]
    return lines or [i for i, ch in enumerate(text) if ch == " " and i > 0]


def split_pieces(srv: OpenAIServer, model: str, text: str, ids: list[int], piece_tokens: int,
                 lead: int) -> list[tuple[int, int, int, int]]:
    """(char start, char end, first token, n tokens) of each piece: the longest prefix of the rest
    that ends at a cut, has at most ``piece_tokens`` tokens and tokenizes to exactly the next ids
    (``lead``: the BOS the server puts before every piece's text, 0 or 1). One piece when it fits."""
    if len(ids) <= piece_tokens:
        return [(0, len(text), 0, len(ids))]
    cuts = _cuts(text) + [len(text)]
    out, c0, t0 = [], 0, 0
    while c0 < len(text):
        best = None
        ahead = [c for c in cuts if c > c0]
        lo, hi = 0, len(ahead) - 1
        while lo <= hi:  # the largest cut whose piece fits
            mid = (lo + hi) // 2
            n = len(srv.tokenize(model, text[c0 : ahead[mid]])) - (lead if t0 else 0)
            if n <= piece_tokens:
                best, lo = mid, mid + 1
            else:
                hi = mid - 1
        for m in range(best if best is not None else 0, -1, -1):  # step back until the ids line up
            got = srv.tokenize(model, text[c0 : ahead[m]])[(lead if t0 else 0):]
            if got == ids[t0 : t0 + len(got)] and (ahead[m] == len(text)) == (t0 + len(got) == len(ids)):
                out.append((c0, ahead[m], t0, len(got)))
                c0, t0 = ahead[m], t0 + len(got)
                break
        else:
            raise InputError(f"cannot cut the text into pieces of at most {piece_tokens} tokens that tokenize like "
                             f"the whole text (at token {t0}); raise --piece-tokens")
    return out


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
    piece_tokens: int = 256,
    overwrite: bool = False,
    progress: bool | None = None,
) -> OpenAICaptureResult:
    """Request the prompt's top-``top_k`` log-probabilities and write a sparse capture at ``out``.

    ``vocab_gguf``: the served model's GGUF (llama-cpp-python only), to map the token strings the
    server reports back to ids exactly; without it they are mapped through the server's tokenizer,
    which cannot tell apart ids whose bytes decode to the same string (partial UTF-8 sequences), so
    an occasional entry may carry a wrong id. ``top_k = -1``: the whole vocabulary (vLLM only).
    ``piece_tokens``: the most tokens sent in one request (see the module docstring).
    """
    if top_k < 1 and top_k != -1:
        raise InputError("--top-k must be >= 1 (or -1 for the full vocabulary with vLLM)")
    if piece_tokens < 2:
        raise InputError("--piece-tokens must be >= 2")
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
    lead = 1 if (srv.api != "sglang" and srv.tokenize(model, "")[:1] == ids[:1] and ids[:1]) else 0
    pieces = split_pieces(srv, model, text, ids, piece_tokens, lead)
    got_ids: dict[int, list[int]] = {}
    got_lps: dict[int, list[float]] = {}
    n_unresolved, piece_notes = 0, []
    with counted_progress("server log-probabilities", enabled=progress is not False, unit="pieces") as update:
        for w, (c0, c1, t0, n) in enumerate(pieces):
            # A piece after the first starts with the BOS the server adds (lead): its position 0 is the
            # distribution after BOS alone, which is no position of the text.
            piece_ids = ([ids[0]] if (lead and t0) else []) + ids[t0 : t0 + n]
            got = prompt_topk(srv, model, text[c0:c1], piece_ids, top_k)
            shift = t0 - (lead if t0 else 0)
            for r, q in enumerate(got.positions):
                if int(q) >= (lead if t0 else 0):
                    got_ids[shift + int(q)], got_lps[shift + int(q)] = got.ids[r], got.logprobs[r]
            n_unresolved += got.n_unresolved
            piece_notes = got.notes
            if update:
                update(w + 1, len(pieces))
    keep = [int(q) for q in wanted if int(q) in got_ids]
    if not keep:
        raise InputError(f"the server reported none of the {len(wanted)} requested positions")
    notes = list(piece_notes)
    if len(pieces) > 1:
        notes.append(f"sent in {len(pieces)} pieces of at most {piece_tokens} tokens, each its own context window "
                     f"starting from an empty cache{' with the BOS the server adds' if lead else ''}; first tokens "
                     f"{', '.join(str(p[2]) for p in pieces)}")
    if len(keep) < len(wanted):
        notes.append(f"{len(wanted) - len(keep)} requested position(s) not reported by the server and skipped")
    width = top_k if top_k > 0 else max(len(got_ids[q]) for q in keep)
    tk = np.full((len(keep), width), -1, np.int64)
    tl = np.full((len(keep), width), -np.inf, np.float32)
    for r, q in enumerate(keep):
        i, v = got_ids[q], got_lps[q]
        tk[r, : len(i)], tl[r, : len(v)] = i, v
    vocab = n_vocab
    if vocab is None:
        vocab = int(max(max(ids), int(tk.max()))) + 1
        notes.append(f"n_vocab {vocab} is a lower bound (largest id seen + 1); the server does not report it")
    bos_id = ids[0] if lead else None
    meta = CaptureMeta(
        model={"name": model, "path": srv.base_url, "format": f"openai-server:{srv.api}"},
        text=text_record(raw, text_name or p.name),
        tokens={"bos": "added" if bos_id is not None else "none", "add_bos": bos_id is not None, "bos_id": bos_id,
                "tokenizer": f"server {srv.api} tokenize endpoint"},
        positions=scheme.meta(),
        context={"n_ctx": max(p[3] for p in pieces) + lead * (len(pieces) > 1), "n_chunks": len(pieces),
                 "stride": len(ids) if len(pieces) == 1 else None},
        stack=_server_stack(srv.api, srv.version, srv.base_url, model),
        tokenizer_parity=parity,
        truncation={"kind": "top-k", "top_k": width, "source": f"{srv.api} prompt log-probabilities"},
        notes=notes,
    )
    cap = write_sparse_capture(out, meta=meta, n_vocab=vocab, token_ids=np.asarray(ids), positions=np.asarray(keep),
                               topk_ids=tk, topk_logprobs=tl, n_unresolved=n_unresolved, overwrite=overwrite)
    return OpenAICaptureResult(cap, srv.api, srv.version, len(ids), len(keep), n_unresolved,
                               [(p[2], p[3]) for p in pieces], [(p[0], p[1]) for p in pieces])
