"""The capture store: full-vocabulary logits on disk, written atomically, read memory-mapped.

A capture is a directory::

    manifest.json                 CaptureManifest (provenance, sizes, sha256 of every file)
    logits-00000.safetensors      tensor ``logits`` [n, n_vocab] BF16 (or F32), ``positions`` [n] I64
    logits-00001.safetensors      ...
    tokens.safetensors            tensor ``token_ids`` [n_tokens] I32 (the ids fed to the engine)

Position ``i`` holds the logits computed after feeding tokens ``0..i``; they predict
``token_ids[i + 1]``. Positions are strictly increasing. Logits are raw (not log-probabilities);
BF16 is round-to-nearest-even from float32.

Writing never holds a whole capture in memory: rows go straight into the current shard file, whose
safetensors header is a fixed-size reserved block filled in (space-padded JSON, which the format
allows) when the shard is closed. Everything is written into a hidden sibling directory
``.<name>.partial-<random>`` and renamed into place by :meth:`CaptureWriter.finalize`, so an
interrupted write (exception, Ctrl-C, kill) leaves no ``manifest.json`` at the target.
Reading checks every file's size always and its sha256 when ``verify=True``.
"""

from __future__ import annotations

import json
import os
import secrets
import shutil
from datetime import datetime, timezone
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from kldcard import __version__
from kldcard.capture.bf16 import bf16_to_f32, f32_to_bf16, to_float64
from kldcard.capture.manifest import (
    FORMAT,
    FORMAT_VERSION,
    CaptureManifest,
    CaptureMeta,
    FileInfo,
    ShardInfo,
)
from kldcard.capture.reader import (
    MANIFEST,
    ST_DTYPE,
    TOKENS_FILE,
    Capture,
    open_capture,
    sha256_array,
)
from kldcard.capture.partial import make_partial_dir, release_partial_dir
from kldcard.errors import InputError
from kldcard.files import fsync_dir, output_errors, sha256_file

__all__ = [  # the reader and BF16 helpers are re-exported: this module is the documented entry point
    "Capture",
    "CaptureWriter",
    "bf16_to_f32",
    "create_capture_from_arrays",
    "f32_to_bf16",
    "open_capture",
    "to_float64",
]

_DATA_START = 1024  # bytes: 8-byte header length + reserved JSON header; keeps tensor data aligned
_APPEND_ROWS = 256  # rows converted at a time, so append() of a huge array stays bounded in memory


# ----------------------------------------------------------------------------------------------
# Writer
# ----------------------------------------------------------------------------------------------


class _ShardFile:
    """One safetensors shard being written: rows streamed after a reserved header block."""

    def __init__(self, path: Path, n_vocab: int, dtype: str):
        self.path, self.n_vocab, self.dtype = path, n_vocab, dtype
        self.itemsize = ST_DTYPE[dtype][1].itemsize
        self.f = open(path, "wb")
        self.f.seek(_DATA_START)
        self.positions: list[np.ndarray] = []
        self.n = 0

    def write(self, positions: np.ndarray, raw: np.ndarray) -> None:
        # the array's own buffer, not a bytes copy of it (~1 s per 2 GB)
        self.f.write(memoryview(np.ascontiguousarray(raw, dtype=ST_DTYPE[self.dtype][1])).cast("B"))
        self.positions.append(positions)
        self.n += len(positions)

    def close(self) -> np.ndarray:
        pos = np.concatenate(self.positions).astype("<i8")
        n_logit_bytes = self.n * self.n_vocab * self.itemsize
        self.f.write(pos.tobytes())
        header = {
            "__metadata__": {"format": FORMAT, "format_version": str(FORMAT_VERSION)},
            "logits": {
                "dtype": ST_DTYPE[self.dtype][0],
                "shape": [self.n, self.n_vocab],
                "data_offsets": [0, n_logit_bytes],
            },
            "positions": {
                "dtype": "I64",
                "shape": [self.n],
                "data_offsets": [n_logit_bytes, n_logit_bytes + 8 * self.n],
            },
        }
        text = json.dumps(header, separators=(",", ":")).encode()
        room = _DATA_START - 8
        if len(text) > room:  # pragma: no cover - the header above is a few hundred bytes
            raise RuntimeError("safetensors header does not fit the reserved block")
        self.f.seek(0)
        self.f.write(room.to_bytes(8, "little") + text + b" " * (room - len(text)))
        self.f.flush()
        os.fsync(self.f.fileno())
        self.f.close()
        return pos

    def discard(self) -> None:
        if not self.f.closed:
            self.f.close()


class CaptureWriter:
    """Stream logits into a new capture directory; atomic on :meth:`finalize`.

    Use as a context manager: leaving the block normally finalises, an exception (including
    KeyboardInterrupt) aborts and removes the partial directory.
    """

    def __init__(
        self,
        out_dir: str | os.PathLike,
        *,
        meta: CaptureMeta | dict,
        n_vocab: int,
        token_ids: np.ndarray,
        dtype: str = "bf16",
        shard_positions: int = 4096,
        overwrite: bool = False,
    ):
        if dtype not in ST_DTYPE:
            raise InputError(f"capture dtype must be 'bf16' or 'f32', not {dtype!r}")
        if int(n_vocab) < 1 or int(shard_positions) < 1:
            raise InputError("n_vocab and shard_positions must be positive")
        try:
            self.meta = meta if isinstance(meta, CaptureMeta) else CaptureMeta.model_validate(meta)
        except ValidationError as exc:
            err = exc.errors()[0]
            loc = ".".join(str(p) for p in err["loc"])
            raise InputError(f"capture metadata: {loc}: {err['msg']}") from None
        ids = np.asarray(token_ids)
        if ids.ndim != 1 or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer):
            raise InputError("token_ids must be a non-empty 1-D integer array")
        if ids.min() < 0 or ids.max() > np.iinfo(np.int32).max:
            raise InputError("token_ids must be non-negative and fit in int32")
        self.token_ids = ids.astype(np.int32)
        self.out_dir = Path(out_dir)
        self.n_vocab, self.dtype, self.shard_positions = int(n_vocab), dtype, int(shard_positions)
        self.overwrite = overwrite
        if self.out_dir.exists() and not overwrite:
            raise InputError(f"{self.out_dir} already exists (pass overwrite=True / --force to replace it)")
        self.partial = make_partial_dir(self.out_dir)
        self._shard: _ShardFile | None = None
        self._shards: list[ShardInfo] = []
        self._positions: list[np.ndarray] = []
        self._last = -1
        self._done = False

    # -- writing -------------------------------------------------------------------------------

    def append(self, positions: np.ndarray, logits: np.ndarray) -> None:
        """Append rows: ``positions`` int [n] (strictly increasing, continuing earlier calls) and
        raw ``logits`` float [n, n_vocab]. Stored as given (BF16-rounded when dtype is bf16)."""
        if self._done:
            raise InputError("capture writer is already closed")
        pos = np.asarray(positions)
        z = np.asarray(logits)
        if pos.ndim != 1 or not np.issubdtype(pos.dtype, np.integer):
            raise InputError("positions must be a 1-D integer array")
        if z.ndim != 2 or z.shape != (len(pos), self.n_vocab):
            raise InputError(f"logits must have shape [{len(pos)}, {self.n_vocab}], got {list(z.shape)}")
        if len(pos) == 0:
            return
        pos = pos.astype(np.int64)
        if pos[0] <= self._last or (len(pos) > 1 and np.any(np.diff(pos) <= 0)):
            raise InputError("positions must be strictly increasing across append() calls")
        if pos[-1] >= len(self.token_ids):
            raise InputError(f"position {int(pos[-1])} is beyond the {len(self.token_ids)} token ids")
        with output_errors(self.out_dir):  # a full disk (ENOSPC) is one line naming the capture
            for a in range(0, len(pos), _APPEND_ROWS):
                self._write_rows(pos[a : a + _APPEND_ROWS], z[a : a + _APPEND_ROWS])
        self._last = int(pos[-1])

    def _write_rows(self, pos: np.ndarray, z: np.ndarray) -> None:
        raw = f32_to_bf16(z) if self.dtype == "bf16" else np.ascontiguousarray(z, dtype=np.float32)
        i = 0
        while i < len(pos):
            if self._shard is None:
                name = f"logits-{len(self._shards):05d}.safetensors"
                self._shard = _ShardFile(self.partial / name, self.n_vocab, self.dtype)
            take = min(len(pos) - i, self.shard_positions - self._shard.n)
            self._shard.write(pos[i : i + take], raw[i : i + take])
            i += take
            if self._shard.n == self.shard_positions:
                self._close_shard()

    def _close_shard(self) -> None:
        shard, self._shard = self._shard, None
        assert shard is not None
        pos = shard.close()
        self._positions.append(pos)
        self._shards.append(
            ShardInfo(
                file=shard.path.name,
                n_positions=len(pos),
                first_position=int(pos[0]),
                last_position=int(pos[-1]),
                bytes=shard.path.stat().st_size,
                sha256=sha256_file(shard.path),
            )
        )

    # -- finishing -----------------------------------------------------------------------------

    def finalize(self) -> Path:
        """Close the last shard, write tokens and manifest, and move the capture into place."""
        if self._done:
            raise InputError("capture writer is already closed")
        try:
            with output_errors(self.out_dir):  # ENOSPC: one line naming the capture
                if self._shard is not None:
                    self._close_shard()
                if not self._shards:
                    raise InputError("no positions were appended; refusing to write an empty capture")
                from safetensors.numpy import save_file

                tok_path = self.partial / TOKENS_FILE
                save_file({"token_ids": self.token_ids}, str(tok_path), metadata={"format": FORMAT})
                positions = np.concatenate(self._positions)
                manifest = CaptureManifest(
                    **self.meta.model_dump(),
                    kldcard_version=__version__,
                    created_utc=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
                    n_vocab=self.n_vocab,
                    dtype=self.dtype,  # type: ignore[arg-type]
                    n_positions=len(positions),
                    n_tokens=len(self.token_ids),
                    token_ids_sha256=sha256_array(self.token_ids, "<i4"),
                    positions_sha256=sha256_array(positions, "<i8"),
                    tokens_file=FileInfo(file=TOKENS_FILE, bytes=tok_path.stat().st_size, sha256=sha256_file(tok_path)),
                    shards=self._shards,
                )
                with open(self.partial / MANIFEST, "w", encoding="utf-8") as f:
                    f.write(manifest.model_dump_json(indent=2) + "\n")
                    f.flush()
                    os.fsync(f.fileno())
                fsync_dir(self.partial)
                self._move_into_place()
        except BaseException:
            self.abort()
            raise
        self._done = True
        return self.out_dir

    def _move_into_place(self) -> None:
        old = None
        if self.out_dir.exists():
            if not self.overwrite:
                raise InputError(f"{self.out_dir} appeared while writing; not replacing it")
            old = self.out_dir.parent / f".{self.out_dir.name}.old-{secrets.token_hex(4)}"
            os.replace(self.out_dir, old)
        os.replace(self.partial, self.out_dir)
        release_partial_dir(self.partial)
        fsync_dir(self.out_dir.parent)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def abort(self) -> None:
        """Discard everything written so far (the target directory is left untouched)."""
        if self._shard is not None:
            self._shard.discard()
            self._shard = None
        shutil.rmtree(self.partial, ignore_errors=True)
        release_partial_dir(self.partial)
        self._done = True

    def __enter__(self) -> CaptureWriter:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self._done:
            return
        if exc_type is None:
            self.finalize()
        else:
            self.abort()


def create_capture_from_arrays(
    out_dir: str | os.PathLike,
    logits: np.ndarray,
    positions: np.ndarray,
    token_ids: np.ndarray,
    meta: CaptureMeta | dict,
    dtype: str = "bf16",
    *,
    shard_positions: int = 4096,
    overwrite: bool = False,
) -> Capture:
    """Write a capture from in-memory (or memory-mapped) numpy arrays and open it.

    ``logits`` [n_positions, n_vocab] raw logits of any engine; ``positions`` the int positions they
    were computed at (position i predicts ``token_ids[i + 1]``); ``token_ids`` the ids fed in.
    """
    z = np.asarray(logits)
    if z.ndim != 2:
        raise InputError(f"logits must be 2-D [n_positions, n_vocab], got shape {list(z.shape)}")
    with CaptureWriter(
        out_dir,
        meta=meta,
        n_vocab=z.shape[1],
        token_ids=token_ids,
        dtype=dtype,
        shard_positions=shard_positions,
        overwrite=overwrite,
    ) as w:
        w.append(np.asarray(positions), z)
    return open_capture(out_dir, verify=False)
