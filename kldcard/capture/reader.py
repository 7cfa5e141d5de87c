"""Reading a capture directory: verify sizes (always) and sha256 (on request), then read rows.

See :mod:`kldcard.capture.store` for the format.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Callable
from collections.abc import Iterator
from pathlib import Path

import numpy as np
from pydantic import ValidationError

from kldcard.capture.bf16 import bf16_to_f32
from kldcard.capture.manifest import CaptureManifest
from kldcard.errors import CorruptCapture, InputError
from kldcard.files import read_bytes, sha256_file

__all__ = ["Capture", "next_token_ids", "open_capture"]

MANIFEST = "manifest.json"
TOKENS_FILE = "tokens.safetensors"
ST_DTYPE = {"bf16": ("BF16", np.dtype("<u2")), "f32": ("F32", np.dtype("<f4"))}


def sha256_array(a: np.ndarray, dtype: str) -> str:
    return hashlib.sha256(np.ascontiguousarray(a, dtype=dtype).tobytes()).hexdigest()


def next_token_ids(positions: np.ndarray, token_ids: np.ndarray) -> np.ndarray:
    """int64 [n_positions]: the token each position predicts (``token_ids[position + 1]``), or -1
    past the last token."""
    nxt = positions + 1
    out = np.full(len(nxt), -1, dtype=np.int64)
    ok = nxt < len(token_ids)
    out[ok] = token_ids[nxt[ok]]
    return out


def _read_st_header(path: Path) -> tuple[dict, int]:
    """(header dict, offset of the data section) of a safetensors file."""
    with open(path, "rb") as f:
        head = f.read(8)
        if len(head) != 8:
            raise CorruptCapture(f"{path}: truncated safetensors file")
        n = int.from_bytes(head, "little")
        if n > 100_000_000:
            raise CorruptCapture(f"{path}: implausible safetensors header length {n}")
        try:
            header = json.loads(f.read(n))
        except (UnicodeDecodeError, json.JSONDecodeError) as exc:
            raise CorruptCapture(f"{path}: unreadable safetensors header ({exc})") from None
    return header, 8 + n


class _Shard:
    __slots__ = ("path", "offset", "start", "n")

    def __init__(self, path: Path, offset: int, start: int, n: int):
        self.path, self.offset, self.start, self.n = path, offset, start, n


class Capture:
    """A verified capture directory. Logits are read lazily (memory-mapped or into a buffer)."""

    def __init__(self, path: Path, manifest: CaptureManifest, token_ids: np.ndarray, positions: np.ndarray,
                 shards: list[_Shard]):
        self.path, self.manifest = path, manifest
        self.token_ids, self.positions = token_ids, positions
        self._shards = shards
        self.raw_dtype = ST_DTYPE[manifest.dtype][1]

    n_vocab = property(lambda self: self.manifest.n_vocab)
    n_positions = property(lambda self: self.manifest.n_positions)
    n_tokens = property(lambda self: self.manifest.n_tokens)
    dtype = property(lambda self: self.manifest.dtype)

    def __repr__(self) -> str:
        return f"Capture({str(self.path)!r}, n_positions={self.n_positions}, n_vocab={self.n_vocab}, dtype={self.dtype})"

    @property
    def shard_starts(self) -> list[int]:
        """Row index at which each shard begins (blocks that avoid these boundaries are zero-copy)."""
        return [s.start for s in self._shards]

    def next_token_ids(self) -> np.ndarray:
        """int64 [n_positions]: the token each position predicts, or -1 past the last token."""
        return next_token_ids(self.positions, self.token_ids)

    def _locate(self, i0: int, i1: int) -> list[tuple[_Shard, int, int]]:
        if not 0 <= i0 <= i1 <= self.n_positions:
            raise IndexError(f"rows [{i0}, {i1}) outside [0, {self.n_positions})")
        parts = []
        for s in self._shards:
            a, b = max(i0, s.start), min(i1, s.start + s.n)
            if a < b:
                parts.append((s, a - s.start, b - s.start))
        return parts

    def _memmap(self, s: _Shard, a: int, b: int) -> np.ndarray:
        row = self.n_vocab * self.raw_dtype.itemsize
        return np.memmap(s.path, dtype=self.raw_dtype, mode="r", offset=s.offset + a * row, shape=(b - a, self.n_vocab))

    def raw_rows(self, i0: int, i1: int) -> np.ndarray:
        """Raw stored rows [i1-i0, n_vocab] (uint16 BF16 bits or float32); memory-mapped when the
        range lies in one shard. Drop the array to release its pages."""
        parts = self._locate(i0, i1)
        if len(parts) == 1:
            return self._memmap(*parts[0])
        if not parts:
            return np.empty((0, self.n_vocab), dtype=self.raw_dtype)
        return np.concatenate([self._memmap(*p) for p in parts])

    def read_rows_into(self, i0: int, i1: int, out: np.ndarray) -> np.ndarray:
        """Read raw rows into ``out`` (a C-contiguous raw-dtype buffer) with plain file reads, so
        resident memory stays at the buffer size whatever the capture size."""
        view = out[: i1 - i0]
        mv = memoryview(view.reshape(-1).view(np.uint8))
        row = self.n_vocab * self.raw_dtype.itemsize
        done = 0
        for s, a, b in self._locate(i0, i1):
            want = (b - a) * row
            with open(s.path, "rb") as f:
                f.seek(s.offset + a * row)
                got = f.readinto(mv[done : done + want])
            if got != want:
                raise CorruptCapture(f"{s.path}: short read (file changed since it was opened?)")
            done += want
        return view

    def iter_blocks(self, block: int = 256) -> Iterator[tuple[int, np.ndarray, np.ndarray]]:
        """Yield ``(start_index, positions_block, raw_logits_block)`` over all rows, memory-mapped.

        Blocks never straddle a shard, so the last block of a shard may be shorter. Raw dtype is
        uint16 (BF16 bits; convert with :func:`to_float64`) or float32.
        """
        for s in self._shards:
            for a in range(0, s.n, block):
                b = min(a + block, s.n)
                yield s.start + a, self.positions[s.start + a : s.start + b], self._memmap(s, a, b)

    def logits_f32(self, i0: int, i1: int) -> np.ndarray:
        """float32 [i1-i0, n_vocab] copy of the logits (small ranges only)."""
        raw = self.raw_rows(i0, i1)
        return bf16_to_f32(raw).copy() if raw.dtype == np.uint16 else np.array(raw, dtype=np.float32)


def check_file(path: Path, size: int, sha: str, verify: bool, sha256: Callable[[Path], str] = sha256_file) -> None:
    """CorruptCapture unless ``path`` has the manifest's size and (``verify``) sha256; ``sha256`` is
    the hash function (``kldcard evaluate`` passes its verified per-file hash cache)."""
    if not path.is_file():
        raise CorruptCapture(f"{path}: missing (listed in the manifest)")
    actual = path.stat().st_size
    if actual != size:
        raise CorruptCapture(f"{path}: size {actual} bytes, manifest says {size}")
    if verify and sha256(path) != sha:
        raise CorruptCapture(f"{path}: sha256 does not match the manifest")


def manifest_path(root: Path) -> Path:
    """``root/manifest.json``; InputError when ``root`` is not a directory or holds no manifest."""
    if not root.is_dir():
        raise InputError(f"{root}: not a capture directory (does not exist or is a file)")
    mpath = root / MANIFEST
    if not mpath.is_file():
        raise InputError(f"{root}: not a kldcard capture (no {MANIFEST}; an interrupted write?)")
    return mpath


def open_capture(path: str | os.PathLike, verify: bool = True, *, sha256: Callable[[Path], str] = sha256_file) -> Capture:
    """Open a capture directory. Sizes are always checked, sha256 of every file when ``verify``
    (computed by ``sha256``: a caller with a verified per-file hash cache avoids rehashing).

    Raises InputError (not a capture / unreadable manifest) or CorruptCapture (files damaged).
    """
    root = Path(path)
    mpath = manifest_path(root)
    try:
        manifest = CaptureManifest.model_validate_json(read_bytes(mpath, "capture manifest", limit=64 << 20))
    except ValidationError as exc:
        err = exc.errors()[0]
        loc = ".".join(str(p) for p in err["loc"]) or "manifest"
        raise InputError(f"{mpath}: invalid manifest: {loc}: {err['msg']}") from None

    tok = manifest.tokens_file
    check_file(root / tok.file, tok.bytes, tok.sha256, verify, sha256)
    from safetensors import SafetensorError
    from safetensors.numpy import load_file

    try:
        token_ids = load_file(str(root / tok.file))["token_ids"]
    except (SafetensorError, KeyError, OSError) as exc:
        raise CorruptCapture(f"{root / tok.file}: unreadable token ids ({exc})") from None
    if token_ids.dtype != np.int32 or token_ids.shape != (manifest.n_tokens,):
        raise CorruptCapture(f"{root / tok.file}: expected int32 [{manifest.n_tokens}] token ids")
    if sha256_array(token_ids, "<i4") != manifest.token_ids_sha256:
        raise CorruptCapture(f"{root / tok.file}: token ids do not match token_ids_sha256")

    st_dtype, np_dtype = ST_DTYPE[manifest.dtype]
    shards, pos_parts, start = [], [], 0
    for info in manifest.shards:
        spath = root / info.file
        check_file(spath, info.bytes, info.sha256, verify, sha256)
        header, data_off = _read_st_header(spath)
        lg, ps = header.get("logits"), header.get("positions")
        n, row = info.n_positions, manifest.n_vocab * np_dtype.itemsize
        if (
            not lg
            or not ps
            or lg.get("dtype") != st_dtype
            or lg.get("shape") != [n, manifest.n_vocab]
            or lg.get("data_offsets") != [0, n * row]
            or ps.get("dtype") != "I64"
            or ps.get("shape") != [n]
            or ps.get("data_offsets") != [n * row, n * row + 8 * n]
            or data_off + n * row + 8 * n != info.bytes
        ):
            raise CorruptCapture(f"{spath}: safetensors header does not match the manifest")
        pos = np.fromfile(spath, dtype="<i8", count=n, offset=data_off + n * row).astype(np.int64)
        pos_parts.append(pos)
        shards.append(_Shard(spath, data_off, start, n))
        start += n
    positions = np.concatenate(pos_parts) if pos_parts else np.empty(0, np.int64)
    if len(positions) != manifest.n_positions:
        raise CorruptCapture(f"{root}: {len(positions)} positions in shards, manifest says {manifest.n_positions}")
    if sha256_array(positions, "<i8") != manifest.positions_sha256:
        raise CorruptCapture(f"{root}: stored positions do not match positions_sha256")
    if len(positions) and (np.any(np.diff(positions) <= 0) or positions[0] < 0 or positions[-1] >= manifest.n_tokens):
        raise CorruptCapture(f"{root}: positions are not strictly increasing within [0, n_tokens)")
    return Capture(root, manifest, token_ids, positions, shards)
