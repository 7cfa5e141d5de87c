"""Sparse (top-k) captures: what a serving API returns instead of full-vocabulary logits.

OpenAI-compatible servers (vLLM, SGLang, llama.cpp's server, llama-cpp-python's server) return, per
prompt position, only the k most likely token ids with their log-probabilities. A sparse capture
stores exactly that, plus the mass of the rest of the vocabulary, derived as
``tail_logprob = log1p(-sum(p_topk))`` (nats; ``-inf`` when the top k hold all the mass).

A sparse capture is a directory::

    manifest.json          SparseCaptureManifest (format ``kldcard-sparse-capture``; the usual
                           provenance, ``truncation={"kind": "top-k", "top_k": K, ...}``)
    topk.safetensors       ``positions`` I64 [n], ``topk_ids`` I32 [n, k] (-1 = no entry),
                           ``topk_logprobs`` F32 [n, k] (-inf where id is -1, sorted descending),
                           ``tail_logprob`` F64 [n]
    tokens.safetensors     ``token_ids`` I32 [n_tokens]

Position ``i`` has the same meaning as in a full capture: the distribution after tokens ``0..i``
(it predicts ``token_ids[i + 1]``). A row may hold fewer than k ids (an id the server reported only
as a string that could not be mapped back, say); their mass is then part of the tail, and
``n_unresolved`` in the manifest says how many entries that concerned.

The directory is written into a hidden sibling and renamed into place, like a full capture; the
reader checks sizes and (with ``verify``) sha256 of both files. :func:`open_any_capture` opens
either kind.
"""

from __future__ import annotations

import os
import secrets
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field, ValidationError

from kldcard import __version__
from kldcard.capture.manifest import CaptureMeta, FileInfo, Sha256
from kldcard.capture.reader import (
    MANIFEST,
    TOKENS_FILE,
    check_file,
    manifest_path,
    next_token_ids,
    sha256_array,
)
from kldcard.capture.partial import make_partial_dir, release_partial_dir
from kldcard.errors import CorruptCapture, InputError
from kldcard.files import fsync_dir, sha256_file

__all__ = [
    "SPARSE_FORMAT",
    "SparseCapture",
    "SparseCaptureManifest",
    "open_any_capture",
    "open_sparse_capture",
    "tail_logprob",
    "write_sparse_capture",
]

SPARSE_FORMAT = "kldcard-sparse-capture"
TOPK_FILE = "topk.safetensors"


class SparseCaptureManifest(CaptureMeta):
    """``manifest.json`` of a sparse capture: provenance plus storage facts."""

    format: Literal["kldcard-sparse-capture"] = SPARSE_FORMAT
    format_version: Literal[1] = 1
    kldcard_version: str
    created_utc: str | None = None
    n_vocab: int = Field(ge=1, description="vocabulary size of the model (as reported or known)")
    top_k: int = Field(ge=1, description="columns stored per position")
    n_positions: int = Field(ge=1)
    n_tokens: int = Field(ge=1)
    n_unresolved: int = Field(0, ge=0, description="reported entries whose token id could not be determined")
    token_ids_sha256: Sha256
    positions_sha256: Sha256
    tokens_file: FileInfo
    topk_file: FileInfo


def tail_logprob(topk_logprobs: np.ndarray) -> np.ndarray:
    """float64 [n]: log of the probability mass outside the stored ids, ``log1p(-sum p)`` (nats).

    Rounding in the server can make the reported top-k sum a hair above 1; that is clamped to a
    tail of ``-inf`` (no mass left) rather than a NaN.
    """
    lp = np.asarray(topk_logprobs, dtype=np.float64)
    s = np.where(np.isfinite(lp), np.exp(lp), 0.0).sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        out = np.log1p(-np.minimum(s, 1.0))
    return out


@dataclass
class SparseCapture:
    """An opened sparse capture (all arrays in memory: k columns are small)."""

    path: Path
    manifest: SparseCaptureManifest
    token_ids: np.ndarray  # int32 [n_tokens]
    positions: np.ndarray  # int64 [n]
    topk_ids: np.ndarray  # int32 [n, k], -1 = empty
    topk_logprobs: np.ndarray  # float32 [n, k], nats, -inf where empty
    tail: np.ndarray  # float64 [n], log of the remaining mass (nats)

    n_vocab = property(lambda self: self.manifest.n_vocab)
    n_positions = property(lambda self: self.manifest.n_positions)
    top_k = property(lambda self: self.manifest.top_k)
    is_sparse = True

    def next_token_ids(self) -> np.ndarray:
        """int64 [n_positions]: the token each position predicts, or -1 past the last token."""
        return next_token_ids(self.positions, self.token_ids)


def _validate_arrays(positions, ids, lps, n_tokens: int, n_vocab: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    pos = np.asarray(positions, dtype=np.int64)
    ids = np.asarray(ids)
    lps = np.asarray(lps, dtype=np.float32)
    if pos.ndim != 1 or len(pos) == 0:
        raise InputError("a sparse capture needs at least one position")
    if ids.ndim != 2 or ids.shape != lps.shape or ids.shape[0] != len(pos) or ids.shape[1] < 1:
        raise InputError(f"topk ids/logprobs must both be [{len(pos)}, k], got {list(ids.shape)} and {list(lps.shape)}")
    if np.any(np.diff(pos) <= 0) or pos[0] < 0 or pos[-1] >= n_tokens:
        raise InputError("positions must be strictly increasing within [0, n_tokens)")
    ids = ids.astype(np.int64)
    if np.any((ids < -1) | (ids >= n_vocab)):
        raise InputError(f"top-k ids must be -1 (empty) or in [0, {n_vocab})")
    if np.any(np.isnan(lps)) or np.any(lps > 1e-3):
        raise InputError("top-k log-probabilities must be <= 0 nats and not NaN")
    # Canonical row order: descending log-probability, empties (-1, -inf) last.
    lps = np.where(ids < 0, -np.inf, lps).astype(np.float32)
    order = np.argsort(-lps, axis=1, kind="stable")
    return pos, np.take_along_axis(ids, order, 1).astype(np.int32), np.take_along_axis(lps, order, 1)


def write_sparse_capture(
    out_dir: str | os.PathLike,
    *,
    meta: CaptureMeta | dict,
    n_vocab: int,
    token_ids: np.ndarray,
    positions: np.ndarray,
    topk_ids: np.ndarray,
    topk_logprobs: np.ndarray,
    n_unresolved: int = 0,
    overwrite: bool = False,
) -> SparseCapture:
    """Write a sparse capture atomically and open it. ``meta.truncation`` is set to top-k here."""
    try:
        meta = meta if isinstance(meta, CaptureMeta) else CaptureMeta.model_validate(meta)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(f"capture metadata: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
    tok = np.asarray(token_ids)
    if tok.ndim != 1 or tok.size == 0 or not np.issubdtype(tok.dtype, np.integer) or tok.min() < 0:
        raise InputError("token_ids must be a non-empty 1-D array of non-negative integers")
    tok = tok.astype(np.int32)
    pos, ids, lps = _validate_arrays(positions, topk_ids, topk_logprobs, len(tok), int(n_vocab))
    k = ids.shape[1]
    trunc = meta.truncation.model_dump()
    trunc.update(kind="top-k", top_k=k)
    meta = meta.model_copy(update={"truncation": type(meta.truncation).model_validate(trunc)})

    out = Path(out_dir)
    if out.exists() and not overwrite:
        raise InputError(f"{out} already exists (pass overwrite=True / --force to replace it)")
    partial = make_partial_dir(out)
    try:
        from datetime import datetime, timezone

        from safetensors.numpy import save_file

        tpath, kpath = partial / TOKENS_FILE, partial / TOPK_FILE
        save_file({"token_ids": tok}, str(tpath), metadata={"format": SPARSE_FORMAT})
        save_file(
            {"positions": pos, "topk_ids": ids, "topk_logprobs": lps, "tail_logprob": tail_logprob(lps)},
            str(kpath),
            metadata={"format": SPARSE_FORMAT},
        )
        manifest = SparseCaptureManifest(
            **meta.model_dump(),
            kldcard_version=__version__,
            created_utc=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
            n_vocab=int(n_vocab),
            top_k=k,
            n_positions=len(pos),
            n_tokens=len(tok),
            n_unresolved=int(n_unresolved),
            token_ids_sha256=sha256_array(tok, "<i4"),
            positions_sha256=sha256_array(pos, "<i8"),
            tokens_file=FileInfo(file=TOKENS_FILE, bytes=tpath.stat().st_size, sha256=sha256_file(tpath)),
            topk_file=FileInfo(file=TOPK_FILE, bytes=kpath.stat().st_size, sha256=sha256_file(kpath)),
        )
        with open(partial / MANIFEST, "w", encoding="utf-8") as f:
            f.write(manifest.model_dump_json(indent=2) + "\n")
            f.flush()
            os.fsync(f.fileno())
        fsync_dir(partial)
        old = None
        if out.exists():
            old = out.parent / f".{out.name}.old-{secrets.token_hex(4)}"
            os.replace(out, old)
        os.replace(partial, out)
        release_partial_dir(partial)
        fsync_dir(out.parent)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)
    except BaseException:
        shutil.rmtree(partial, ignore_errors=True)
        release_partial_dir(partial)
        raise
    return open_sparse_capture(out, verify=False)


def _manifest_format(root: Path) -> str:
    import json

    mpath = manifest_path(root)
    try:
        fmt = json.loads(mpath.read_bytes()).get("format")
    except (ValueError, AttributeError):
        raise InputError(f"{mpath}: manifest is not a JSON object") from None
    return str(fmt)


def open_sparse_capture(path: str | os.PathLike, verify: bool = True) -> SparseCapture:
    """Open a sparse capture. Raises InputError (not one / bad manifest) or CorruptCapture."""
    root = Path(path)
    fmt = _manifest_format(root)
    if fmt != SPARSE_FORMAT:
        raise InputError(f"{root}: not a sparse (top-k) capture (format {fmt!r})")
    mpath = root / MANIFEST
    try:
        m = SparseCaptureManifest.model_validate_json(mpath.read_bytes())
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(f"{mpath}: invalid manifest: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None
    for info in (m.tokens_file, m.topk_file):
        check_file(root / info.file, info.bytes, info.sha256, verify)
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    try:
        tok = load_file(str(root / m.tokens_file.file))["token_ids"]
        t = load_file(str(root / m.topk_file.file))
        pos, ids, lps, tail = t["positions"], t["topk_ids"], t["topk_logprobs"], t["tail_logprob"]
    except (SafetensorError, KeyError, OSError) as exc:
        raise CorruptCapture(f"{root}: unreadable sparse capture ({exc})") from None
    n, k = m.n_positions, m.top_k
    if (
        tok.dtype != np.int32 or tok.shape != (m.n_tokens,) or pos.dtype != np.int64 or pos.shape != (n,)
        or ids.dtype != np.int32 or ids.shape != (n, k) or lps.dtype != np.float32 or lps.shape != (n, k)
        or tail.dtype != np.float64 or tail.shape != (n,)
    ):
        raise CorruptCapture(f"{root}: tensor dtypes/shapes do not match the manifest")
    if sha256_array(tok, "<i4") != m.token_ids_sha256 or sha256_array(pos, "<i8") != m.positions_sha256:
        raise CorruptCapture(f"{root}: token ids or positions do not match their sha256")
    return SparseCapture(root, m, tok, pos, ids, lps, tail)


def is_sparse_capture(path: str | os.PathLike) -> bool:
    """Whether ``path`` holds a sparse (top-k) capture; reads only the manifest's format field.
    False for anything that is not a readable local capture (the real opener reports those)."""
    try:
        return _manifest_format(Path(path)) == SPARSE_FORMAT
    except InputError:
        return False


def open_any_capture(path: str | os.PathLike, verify: bool = True):
    """Open a full (:class:`~kldcard.capture.store.Capture`) or sparse (:class:`SparseCapture`) capture."""
    if _manifest_format(Path(path)) == SPARSE_FORMAT:
        return open_sparse_capture(path, verify=verify)
    from kldcard.capture.store import open_capture

    return open_capture(path, verify=verify)
