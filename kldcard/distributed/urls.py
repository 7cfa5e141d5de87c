"""Open a capture by URL (local path, ``file://``, or any fsspec filesystem) for reading rows.

A local capture is opened with :func:`kldcard.capture.store.open_capture` (all its checks) and read
memory-mapped. Anything else is read through fsspec: the manifest, the token ids and each shard's
positions are fetched once, file sizes are checked against the manifest, and rows are read as byte
ranges — so a worker only ever transfers the rows of its task. The bytes are the same either way, so
the per-token values are too.
"""

from __future__ import annotations

import json
import os
from collections import OrderedDict
from dataclasses import dataclass

import numpy as np
from pydantic import ValidationError

from kldcard.capture.manifest import CaptureManifest
from kldcard.capture.reader import MANIFEST, ST_DTYPE, next_token_ids, sha256_array
from kldcard.capture.store import Capture, open_capture
from kldcard.errors import CorruptCapture, InputError

__all__ = ["UrlCapture", "open_capture_url", "cached_capture", "is_local"]

_CACHE: OrderedDict[tuple[str, bool], UrlCapture] = OrderedDict()
_CACHE_SIZE = 32  # opened captures kept per worker process (manifest, token ids, positions)


def _fs(url: str):
    try:
        import fsspec.core
    except ImportError as exc:  # pragma: no cover - fsspec comes with dask
        from kldcard.errors import EngineNotInstalled

        raise EngineNotInstalled("fsspec", "dist", "fsspec") from exc
    try:
        return fsspec.core.url_to_fs(url)
    except (ValueError, ImportError) as exc:
        raise InputError(f"{url}: cannot open this URL ({exc})") from None


def is_local(url: str | os.PathLike) -> bool:
    """Whether ``url`` is a local path or ``file://`` URL."""
    from fsspec.implementations.local import LocalFileSystem

    return isinstance(_fs(str(url))[0], LocalFileSystem)


def _manifest_sha(fs, path: str) -> str:
    import hashlib

    try:
        return hashlib.sha256(fs.cat_file(path)).hexdigest()
    except OSError:
        return "missing"


@dataclass
class _ShardRef:
    path: str  # path inside the filesystem
    offset: int  # byte offset of the logits data
    start: int  # first row index
    n: int


class UrlCapture:
    """A capture opened by URL. Same attributes as :class:`~kldcard.capture.store.Capture` that the
    comparison needs (``manifest``, ``token_ids``, ``positions``, ``n_vocab``, ``raw_dtype``,
    ``shard_starts``, ``next_token_ids()``) plus :meth:`read_rows`."""

    def __init__(self, url: str, manifest: CaptureManifest, token_ids: np.ndarray, positions: np.ndarray,
                 *, local: Capture | None = None, fs=None, shards: list[_ShardRef] | None = None):
        self.url, self.manifest = url, manifest
        self.token_ids, self.positions = token_ids, positions
        self._local, self._fs, self._shards = local, fs, shards or []
        self.raw_dtype = ST_DTYPE[manifest.dtype][1]
        # what the compare result records as the capture's location
        self.path = str(local.path) if local is not None else url
        self._mfs, root = _fs(url)
        self._mpath = root.rstrip("/") + "/" + MANIFEST
        self._fingerprint = _manifest_sha(self._mfs, self._mpath)

    n_vocab = property(lambda self: self.manifest.n_vocab)
    n_positions = property(lambda self: self.manifest.n_positions)

    @property
    def fingerprint(self) -> str:
        """sha256 of the manifest as opened (it lists every file's sha256): the capture's identity.
        Part of every task's arguments, so a capture replaced at the same URL is a different task."""
        return self._fingerprint

    def current_fingerprint(self) -> str:
        """sha256 of the manifest now on storage (a few KB read)."""
        return _manifest_sha(self._mfs, self._mpath)

    memory_mapped = property(lambda self: self._local is not None)

    @property
    def shard_starts(self) -> list[int]:
        return self._local.shard_starts if self._local is not None else [s.start for s in self._shards]

    def next_token_ids(self) -> np.ndarray:
        """int64 [n_positions]: the token each position predicts, or -1 past the last token."""
        return next_token_ids(self.positions, self.token_ids)

    def read_rows(self, i0: int, i1: int) -> np.ndarray:
        """Raw stored rows [i1-i0, n_vocab] (uint16 BF16 bits or float32): memory-mapped when local,
        byte-range reads otherwise."""
        if self._local is not None:
            return self._local.raw_rows(i0, i1)
        if not 0 <= i0 <= i1 <= self.n_positions:
            raise IndexError(f"rows [{i0}, {i1}) outside [0, {self.n_positions})")
        row = self.n_vocab * self.raw_dtype.itemsize
        parts = []
        for s in self._shards:
            a, b = max(i0, s.start), min(i1, s.start + s.n)
            if a < b:
                lo = s.offset + (a - s.start) * row
                data = self._fs.cat_file(s.path, start=lo, end=lo + (b - a) * row)
                if len(data) != (b - a) * row:
                    raise CorruptCapture(f"{self.url}: short read from {s.path}")
                parts.append(np.frombuffer(data, dtype=self.raw_dtype).reshape(b - a, self.n_vocab))
        if not parts:
            return np.empty((0, self.n_vocab), dtype=self.raw_dtype)
        return parts[0] if len(parts) == 1 else np.concatenate(parts)


def open_capture_url(url: str | os.PathLike, *, verify: bool = False, mmap: bool = True) -> UrlCapture:
    """Open a capture directory by local path or fsspec URL.

    Local paths and ``file://`` URLs use :func:`open_capture` (sizes always, sha256 when ``verify``)
    and memory-mapped reads unless ``mmap=False``, which forces the byte-range reader (the path every
    remote filesystem takes). The byte-range reader checks sizes, token-id and position hashes;
    ``verify`` additionally hashes every file (a full read).
    """
    url = str(url)
    fs, root = _fs(url)
    from fsspec.implementations.local import LocalFileSystem

    if isinstance(fs, LocalFileSystem) and mmap:
        cap = open_capture(root, verify=verify)
        return UrlCapture(url, cap.manifest, cap.token_ids, cap.positions, local=cap)
    return _open_remote(url, fs, root.rstrip("/"), verify)


def _open_remote(url: str, fs, root: str, verify: bool) -> UrlCapture:
    try:
        raw = fs.cat_file(f"{root}/{MANIFEST}")
    except FileNotFoundError:
        raise InputError(f"{url}: not a kldcard capture (no {MANIFEST})") from None
    except OSError as exc:
        raise InputError(f"{url}: cannot read {MANIFEST} ({exc})") from None
    try:
        manifest = CaptureManifest.model_validate_json(raw)
    except ValidationError as exc:
        err = exc.errors()[0]
        raise InputError(f"{url}/{MANIFEST}: invalid manifest: {'.'.join(map(str, err['loc']))}: {err['msg']}") from None

    def fetch_checked(name: str, size: int, sha: str) -> str:
        path = f"{root}/{name}"
        try:
            actual = fs.size(path)
        except FileNotFoundError:
            raise CorruptCapture(f"{url}/{name}: missing (listed in the manifest)") from None
        if actual != size:
            raise CorruptCapture(f"{url}/{name}: size {actual} bytes, manifest says {size}")
        if verify:
            import hashlib

            h = hashlib.sha256()
            with fs.open(path, "rb", block_size=8 << 20) as f:
                while chunk := f.read(8 << 20):
                    h.update(chunk)
            if h.hexdigest() != sha:
                raise CorruptCapture(f"{url}/{name}: sha256 does not match the manifest")
        return path

    tok = manifest.tokens_file
    from safetensors.numpy import load

    try:
        token_ids = load(fs.cat_file(fetch_checked(tok.file, tok.bytes, tok.sha256)))["token_ids"]
    except (KeyError, OSError, Exception) as exc:  # safetensors raises its own error type
        if isinstance(exc, (CorruptCapture, InputError)):
            raise
        raise CorruptCapture(f"{url}/{tok.file}: unreadable token ids ({exc})") from None
    if sha256_array(token_ids, "<i4") != manifest.token_ids_sha256:
        raise CorruptCapture(f"{url}/{tok.file}: token ids do not match token_ids_sha256")

    st_dtype, np_dtype = ST_DTYPE[manifest.dtype]
    row = manifest.n_vocab * np_dtype.itemsize
    shards, pos_parts, start = [], [], 0
    for info in manifest.shards:
        path = fetch_checked(info.file, info.bytes, info.sha256)
        head = fs.cat_file(path, start=0, end=8)
        n_head = int.from_bytes(head, "little")
        if len(head) != 8 or n_head > 100_000_000:
            raise CorruptCapture(f"{url}/{info.file}: bad safetensors header")
        try:
            header = json.loads(fs.cat_file(path, start=8, end=8 + n_head))
        except ValueError:
            raise CorruptCapture(f"{url}/{info.file}: unreadable safetensors header") from None
        n, off = info.n_positions, 8 + n_head
        lg = header.get("logits") or {}
        if lg.get("dtype") != st_dtype or lg.get("shape") != [n, manifest.n_vocab] or off + n * row + 8 * n != info.bytes:
            raise CorruptCapture(f"{url}/{info.file}: safetensors header does not match the manifest")
        pos_parts.append(np.frombuffer(fs.cat_file(path, start=off + n * row, end=off + n * row + 8 * n), "<i8").astype(np.int64))
        shards.append(_ShardRef(path, off, start, n))
        start += n
    positions = np.concatenate(pos_parts) if pos_parts else np.empty(0, np.int64)
    if len(positions) != manifest.n_positions or sha256_array(positions, "<i8") != manifest.positions_sha256:
        raise CorruptCapture(f"{url}: stored positions do not match the manifest")
    return UrlCapture(url, manifest, token_ids, positions, fs=fs, shards=shards)


def cached_capture(url: str, mmap: bool = True, fingerprint: str | None = None) -> UrlCapture:
    """Open ``url`` once per process (captures are immutable once finalised), least recently used
    first out. Tasks call this so that a worker does not re-read manifests for every row range.
    ``fingerprint``: the content the caller planned with; a capture replaced since is reopened, and
    refused (CorruptCapture) if it still differs."""
    key = (url, mmap)
    cap = _CACHE.get(key)
    # a cached capture is re-checked against the manifest on storage (a few KB) on every use, so a
    # capture replaced at the same URL is never read through stale shard offsets
    if cap is None or cap.current_fingerprint() != cap.fingerprint:
        cap = open_capture_url(url, verify=False, mmap=mmap)
        _CACHE[key] = cap
        while len(_CACHE) > _CACHE_SIZE:
            _CACHE.popitem(last=False)
    else:
        _CACHE.move_to_end(key)
    if fingerprint is not None and cap.fingerprint != fingerprint:
        raise CorruptCapture(f"{url}: the capture changed since the comparison was planned; run it again")
    return cap
