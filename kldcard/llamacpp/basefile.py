"""llama.cpp ``--kl-divergence-base`` files (magic ``_logits_``): read, validate, encode, write.

Layout (little-endian, packed, no checksum; see ``shared/reference/llamacpp-kld.md`` §2):

- 20-byte header: ``b"_logits_"``, int32 ``n_ctx``, int32 ``n_vocab``, int32 ``n_chunk``;
- ``n_chunk·n_ctx`` int32 token ids (the *original* ids: the per-chunk BOS overwrite is not stored);
- per chunk ``S = n_ctx − 1 − n_ctx//2`` records of ``nv = 2·ceil(n_vocab/2) + 4`` uint16 slots:
  float32 ``scale``, float32 ``min_log_prob``, ``n_vocab`` uint16 codes, one zero pad slot when
  ``n_vocab`` is odd.

Record ``k`` of chunk ``c`` holds the base model's distribution at position ``n_ctx//2 + k`` of the
chunk (global position ``c·n_ctx + n_ctx//2 + k``) and predicts ``tokens[c·n_ctx + n_ctx//2 + k + 1]``.
Decoded log-probabilities are ``scale·code + min_log_prob`` in nats (float32); code 0 means "at or
below the storage floor" (16 nats below the maximum in mainline, 24 in ik_llama.cpp).

``_logits_v2`` (the AesSedai fork's sliding-window variant, not upstream) is recognised and refused
with a clear message rather than misread: its header has five fields, its token array overlaps
windows and it stores every position, so nothing of a v1 reader applies, and the format is not
stable upstream. Files from 12-byte aborted base passes are refused too.

The reader is memory-mapped: nothing is loaded until a chunk is asked for, so files of tens of GB
stream chunk by chunk. The writer reproduces llama.cpp's float32 encoding bit for bit: ``min_log_prob``
depends on ``Σ expf(z − max)``, and numpy's float32 ``exp`` is not glibc's ``expf`` (about 40 % of
arguments differ by an ulp), so :func:`expf` emulates glibc's algorithm exactly (see there).
"""

from __future__ import annotations

import os
import struct
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterator

import numpy as np

from kldcard.errors import InputError
from kldcard.files import regular_file
from kldcard.llamacpp.libm import expf, log_f32, row_sums_in_order

MAGIC = b"_logits_"
MAGIC_V2 = b"_logits_v2"
HEADER_BYTES = 20
MAINLINE_FLOOR_NATS = 16.0
IK_FLOOR_NATS = 24.0
# Decoded log-probabilities at or below this absolute value are skipped in llama.cpp's KLD sum.
KLD_TERM_CUTOFF = np.float32(-16.0)

_HEADER = struct.Struct("<8siii")


def record_slots(n_vocab: int) -> int:
    """uint16 slots per record: 4 for the two float32 values, n_vocab codes, padded to even."""
    return 2 * ((n_vocab + 1) // 2) + 4


def records_per_chunk(n_ctx: int) -> int:
    """Scored positions (records) per chunk: n_ctx//2 … n_ctx−2."""
    return n_ctx - 1 - n_ctx // 2


def expected_size(n_ctx: int, n_vocab: int, n_chunk: int) -> int:
    """File size in bytes that the header fields imply (§2.5)."""
    return HEADER_BYTES + 4 * n_chunk * n_ctx + 2 * record_slots(n_vocab) * n_chunk * records_per_chunk(n_ctx)


@dataclass(frozen=True)
class BaseFileHeader:
    n_ctx: int
    n_vocab: int
    n_chunk: int

    @property
    def records_per_chunk(self) -> int:
        return records_per_chunk(self.n_ctx)

    @property
    def slots(self) -> int:
        return record_slots(self.n_vocab)

    @property
    def n_records(self) -> int:
        return self.n_chunk * self.records_per_chunk

    @property
    def size(self) -> int:
        return expected_size(self.n_ctx, self.n_vocab, self.n_chunk)

    @property
    def first_scored(self) -> int:
        """Chunk-local position of record 0 (n_ctx//2)."""
        return self.n_ctx // 2


def read_header(path: str | os.PathLike) -> BaseFileHeader:
    """Read and validate the header and the file length; raise :class:`InputError` (one line)."""
    p = Path(path)
    size = regular_file(p, "llama.cpp base file").st_size
    try:
        with open(p, "rb") as fh:
            head = fh.read(HEADER_BYTES)
    except OSError as exc:
        raise InputError(f"cannot read llama.cpp base file {p}: {exc.strerror or exc}") from None
    if head[:10] == MAGIC_V2:
        raise InputError(
            f"{p} is a '_logits_v2' file (AesSedai fork, sliding windows, a record for every position); "
            "kldcard reads only mainline/ik_llama.cpp '_logits_' base files"
        )
    if head[:8] != MAGIC:
        raise InputError(f"{p} is not a llama.cpp base-logits file (no '_logits_' magic)")
    if size == 12:
        raise InputError(
            f"{p} is a 12-byte aborted base pass (llama-perplexity stopped because the text had fewer "
            "than 2·n_ctx tokens); rerun it with a longer text or smaller -c"
        )
    if size < HEADER_BYTES:
        raise InputError(f"{p} is truncated: {size} bytes, shorter than the 20-byte header")
    _, n_ctx, n_vocab, n_chunk = _HEADER.unpack(head)
    if n_ctx < 3 or n_vocab < 1 or n_chunk < 1:
        raise InputError(
            f"{p} has an impossible header (n_ctx={n_ctx}, n_vocab={n_vocab}, n_chunk={n_chunk}); "
            "is it a big-endian or foreign file?"
        )
    header = BaseFileHeader(n_ctx, n_vocab, n_chunk)
    if size != header.size:
        what = "truncated" if size < header.size else "longer than its header implies"
        raise InputError(
            f"{p} is {what}: {size} bytes, but n_ctx={n_ctx}, n_vocab={n_vocab}, n_chunk={n_chunk} "
            f"imply {header.size} bytes"
        )
    return header


class BaseFile:
    """A validated, memory-mapped ``_logits_`` file. Use :func:`open_base_file`.

    ``tokens`` are int32 ``[n_chunk·n_ctx]`` (original ids); ``raw`` is the uint16 view
    ``[n_chunk, S, nv]``. Nothing is read until accessed.
    """

    def __init__(self, path: str | os.PathLike):
        self.path = Path(path)
        self.header = read_header(self.path)
        h = self.header
        self.tokens = np.memmap(self.path, dtype="<i4", mode="r", offset=HEADER_BYTES, shape=(h.n_chunk * h.n_ctx,))
        self.raw = np.memmap(
            self.path,
            dtype="<u2",
            mode="r",
            offset=HEADER_BYTES + 4 * h.n_chunk * h.n_ctx,
            shape=(h.n_chunk, h.records_per_chunk, h.slots),
        )

    # --- geometry -----------------------------------------------------------------------------
    @property
    def n_ctx(self) -> int:
        return self.header.n_ctx

    @property
    def n_vocab(self) -> int:
        return self.header.n_vocab

    @property
    def n_chunk(self) -> int:
        return self.header.n_chunk

    def positions(self, chunk: int | None = None) -> np.ndarray:
        """Global positions (int64) of the records: c·n_ctx + n_ctx//2 + k."""
        h = self.header
        local = np.arange(h.first_scored, h.n_ctx - 1, dtype=np.int64)
        chunks = range(h.n_chunk) if chunk is None else [chunk]
        return np.concatenate([c * h.n_ctx + local for c in chunks])

    def targets(self, chunk: int | None = None) -> np.ndarray:
        """The token each record predicts: tokens[position + 1] (int32)."""
        return np.asarray(self.tokens[self.positions(chunk) + 1])

    # --- records ------------------------------------------------------------------------------
    def scale_and_min(self, chunk: int) -> tuple[np.ndarray, np.ndarray]:
        """float32 ``scale`` and ``min_log_prob`` (nats) of each record of ``chunk``, shape [S]."""
        head = np.ascontiguousarray(self.raw[chunk, :, :4]).view("<f4")
        return head[:, 0].astype(np.float32), head[:, 1].astype(np.float32)

    def codes(self, chunk: int) -> np.ndarray:
        """uint16 codes ``[S, n_vocab]`` of ``chunk`` (a memory-mapped view)."""
        return self.raw[chunk, :, 4 : 4 + self.n_vocab]

    def log_probs(self, chunk: int) -> np.ndarray:
        """Decoded base log-probabilities in nats, float32 ``[S, n_vocab]`` (scale·code + min)."""
        scale, mn = self.scale_and_min(chunk)
        return decode_codes(self.codes(chunk), scale, mn)

    def iter_chunks(self) -> Iterator[tuple[int, np.ndarray]]:
        """Yield ``(chunk, raw_records)`` with raw uint16 ``[S, nv]`` (memory-mapped), in file order."""
        for c in range(self.n_chunk):
            yield c, self.raw[c]

    def close(self) -> None:
        """Drop this object's references to the mapping. The map itself is released when the last
        view of it goes away: closing it under a live view (a chunk a caller still holds) would
        turn the next read of that view into a segfault."""
        self.tokens = None  # type: ignore[assignment]
        self.raw = None  # type: ignore[assignment]

    def __enter__(self) -> BaseFile:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_base_file(path: str | os.PathLike) -> BaseFile:
    """Open and validate a llama.cpp base file (raises :class:`InputError` with one line)."""
    return BaseFile(path)


# ------------------------------------------------------------------------------------------------
# Decoding and encoding
# ------------------------------------------------------------------------------------------------


def decode_codes(codes: np.ndarray, scale: np.ndarray, min_log_prob: np.ndarray) -> np.ndarray:
    """float32 log p = scale·code + min_log_prob (nats), exactly as llama.cpp's reader computes it."""
    scale = np.asarray(scale, dtype=np.float32)[..., None]
    mn = np.asarray(min_log_prob, dtype=np.float32)[..., None]
    out = codes.astype(np.float32)
    out *= scale  # in place: the same float32 operations as (scale·code) + mn, no temporaries
    out += mn
    return out


def split_records(raw: np.ndarray, n_vocab: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Split raw uint16 records ``[n, nv]`` into (scale f32 [n], min_log_prob f32 [n], codes [n, V])."""
    raw = np.ascontiguousarray(raw, dtype="<u2")
    head = raw[:, :4].copy().view("<f4")
    return head[:, 0].astype(np.float32), head[:, 1].astype(np.float32), raw[:, 4 : 4 + n_vocab]


def encode_records(logits: np.ndarray, floor_nats: float = MAINLINE_FLOOR_NATS, block: int = 32) -> np.ndarray:
    """Encode float32 logits ``[n, n_vocab]`` into raw uint16 records ``[n, nv]`` (llama.cpp §2.3).

    Per row, all in float32 unless noted: ``hi = max z``, ``lo = max(min z, hi − floor)``;
    ``lse = float(log(Σ expf(z − hi)))`` with the sum accumulated in double in index order;
    ``min_log_prob = lo − hi − lse``; ``scale = (hi − lo)/65535``; ``code = rint((1/scale)·(z − lo))``
    for ``z > lo`` (half-to-even on the float32 product), else 0; all codes 0 when ``scale == 0``.
    ``floor_nats`` is 16 for mainline llama.cpp and 24 for ik_llama.cpp.
    """
    z_all = np.asarray(logits)
    if z_all.ndim != 2:
        raise InputError(f"logits must be 2-D [n, n_vocab], got shape {z_all.shape}")
    n, v = z_all.shape
    out = np.zeros((n, record_slots(v)), dtype="<u2")
    floor = np.float32(floor_nats)
    for i0 in range(0, n, block):
        z = np.ascontiguousarray(z_all[i0 : i0 + block], dtype=np.float32)
        # −inf is a masked entry (probability 0): it encodes as code 0 and adds nothing to lse.
        if np.isnan(z).any() or np.isposinf(z).any() or not np.isfinite(z).any(axis=1).all():
            raise InputError("logits contain NaN, +inf or an all −inf row; llama.cpp's encoding needs finite maxima")
        hi = z.max(axis=1)
        lo = np.maximum(z.min(axis=1), hi - floor)
        sum_exp = row_sums_in_order(expf(z - hi[:, None]))
        lse = log_f32(sum_exp)
        min_log_prob = (lo - hi) - lse
        scale = (hi - lo) / np.float32(65535.0)
        # scale == 0 (constant row): every code is 0; keep inf·0 out of the arithmetic.
        safe = np.where(scale == 0, np.float32(1.0), scale)
        # A subnormal scale (a row spanning < 3e-39 nats) overflows 1/scale to inf; −inf entries give
        # −inf products (masked below by z > lo).
        with np.errstate(over="ignore", invalid="ignore"):
            inv = np.float32(1.0) / safe
            prod = inv[:, None] * (z - lo[:, None])
        prod = np.where((z > lo[:, None]) & (scale != 0)[:, None] & np.isfinite(prod), prod, np.float32(0.0))
        # llama.cpp rounds with the float32 "add 1.5·2²³" trick = rint for |x| < 2²² (products here are
        # < 2¹⁸), and reads inf/NaN as a code that truncates to 0; int → uint16 wraps like the C++.
        codes = (np.rint(prod).astype(np.int64) & 0xFFFF).astype("<u2")
        rows = out[i0 : i0 + len(z)]
        head = np.stack([scale, min_log_prob], axis=1).astype("<f4")
        rows[:, :4] = head.view("<u2")
        rows[:, 4 : 4 + v] = codes
    return out


# ------------------------------------------------------------------------------------------------
# Writing
# ------------------------------------------------------------------------------------------------


class BaseFileWriter:
    """Write a ``_logits_`` file chunk by chunk to a temporary sibling; ``os.replace`` on success.

    Use as a context manager; an exception leaves no file at ``path`` (and any existing file there is
    untouched). ``tokens`` are the original ids, ``n_chunk·n_ctx`` of them.
    """

    def __init__(
        self,
        path: str | os.PathLike,
        *,
        n_ctx: int,
        n_vocab: int,
        tokens: np.ndarray,
        floor_nats: float = MAINLINE_FLOOR_NATS,
        overwrite: bool = False,
    ):
        self.path = Path(path)
        tokens = np.asarray(tokens)
        if tokens.ndim != 1 or len(tokens) % n_ctx or len(tokens) < n_ctx or n_ctx < 3:
            raise InputError(f"tokens must be a whole number (≥1) of n_ctx={n_ctx} chunks, got {tokens.shape}")
        if self.path.exists() and not overwrite:
            raise InputError(f"{self.path} exists; pass overwrite=True (CLI: --force) to replace it")
        self.header = BaseFileHeader(n_ctx, n_vocab, len(tokens) // n_ctx)
        self.floor_nats = floor_nats
        self._chunks_written = 0
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=f".{self.path.name}.partial-", dir=self.path.parent)
        self._tmp = Path(tmp)
        self._fh = os.fdopen(fd, "wb")
        self._fh.write(_HEADER.pack(MAGIC, n_ctx, n_vocab, self.header.n_chunk))
        self._fh.write(tokens.astype("<i4").tobytes())

    def write_chunk_logits(self, logits: np.ndarray) -> None:
        """Encode and append one chunk: float32 logits ``[S, n_vocab]`` at positions n_ctx//2 … n_ctx−2."""
        self.write_chunk_records(encode_records(logits, self.floor_nats))

    def write_chunk_records(self, raw: np.ndarray) -> None:
        """Append one chunk of already-encoded raw records ``[S, nv]`` (byte-exact copy)."""
        h = self.header
        raw = np.asarray(raw)
        if raw.shape != (h.records_per_chunk, h.slots):
            raise InputError(f"a chunk needs records of shape {(h.records_per_chunk, h.slots)}, got {raw.shape}")
        if self._chunks_written >= h.n_chunk:
            raise InputError(f"all {h.n_chunk} chunks are already written")
        self._fh.write(raw.astype("<u2").tobytes())
        self._chunks_written += 1

    def finalize(self) -> Path:
        if self._chunks_written != self.header.n_chunk:
            self.abort()
            raise InputError(f"wrote {self._chunks_written} of {self.header.n_chunk} chunks; nothing was written")
        self._fh.flush()
        os.fsync(self._fh.fileno())
        self._fh.close()
        os.replace(self._tmp, self.path)
        return self.path

    def abort(self) -> None:
        if not self._fh.closed:
            self._fh.close()
        self._tmp.unlink(missing_ok=True)

    def __enter__(self) -> BaseFileWriter:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.finalize()
        else:
            self.abort()


def write_base_file(
    path: str | os.PathLike,
    *,
    n_ctx: int,
    tokens: np.ndarray,
    logits: np.ndarray | None = None,
    raw_records: np.ndarray | None = None,
    n_vocab: int | None = None,
    floor_nats: float = MAINLINE_FLOOR_NATS,
    overwrite: bool = False,
) -> Path:
    """Write a whole base file from float32 ``logits`` ``[n_chunk·S, n_vocab]`` (encoded here) or from
    already-encoded ``raw_records`` ``[n_chunk·S, nv]`` plus ``n_vocab`` (copied byte for byte; the
    pad slot of odd vocabularies makes n_vocab ambiguous from nv). Atomic."""
    if (logits is None) == (raw_records is None):
        raise InputError("pass exactly one of logits or raw_records")
    if logits is not None:
        n_vocab = int(logits.shape[1])
    elif n_vocab is None:
        raise InputError("raw_records need n_vocab")
    s = records_per_chunk(n_ctx)
    data = np.asarray(logits if logits is not None else raw_records)
    with BaseFileWriter(path, n_ctx=n_ctx, n_vocab=n_vocab, tokens=tokens, floor_nats=floor_nats, overwrite=overwrite) as w:
        if len(data) != w.header.n_chunk * s:
            raise InputError(f"need {w.header.n_chunk * s} rows ({w.header.n_chunk} chunks × {s}), got {len(data)}")
        for c in range(w.header.n_chunk):
            rows = data[c * s : (c + 1) * s]
            if logits is not None:
                w.write_chunk_logits(rows)
            else:
                w.write_chunk_records(rows)
    return Path(path)
