"""Import logits computed by any engine (``.npy`` / ``.safetensors``) into a capture store.

Used by ``kldcard capture-import``. Logits files are memory-mapped and streamed into the writer,
so a file larger than memory imports fine. BF16 safetensors are read bit-exactly.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np

from kldcard.capture.fingerprint import read_text_bytes, text_record
from kldcard.capture.manifest import CaptureMeta
from kldcard.capture.store import Capture, CaptureWriter, bf16_to_f32, open_capture
from kldcard.errors import InputError, UsageError
from kldcard.files import regular_file

__all__ = ["import_capture", "load_logits", "load_token_ids", "positions_for_rows"]

_ST_NP = {"F32": "<f4", "F16": "<f2", "F64": "<f8", "BF16": "<u2", "I32": "<i4", "I64": "<i8", "U32": "<u4"}


def _safetensors_tensor(path: Path, name: str | None) -> tuple[np.ndarray, str]:
    """Memory-map one tensor of a safetensors file: (array, safetensors dtype)."""
    regular_file(path, "safetensors file")
    try:
        with open(path, "rb") as f:
            n = int.from_bytes(f.read(8), "little")
            header = json.loads(f.read(n))
    except (OSError, ValueError) as exc:
        raise InputError(f"{path}: not a readable safetensors file ({exc})") from None
    tensors = {k: v for k, v in header.items() if k != "__metadata__"}
    if name is None and "token_ids" in tensors and "logits" not in tensors:
        name = "token_ids"
    if name is None and "logits" in tensors:
        name = "logits"
    if name is None:
        if len(tensors) != 1:
            raise UsageError(f"{path} holds tensors {sorted(tensors)}; name one with --tensor")
        name = next(iter(tensors))
    if name not in tensors:
        raise InputError(f"{path}: no tensor {name!r} (has {sorted(tensors)})")
    t = tensors[name]
    if t["dtype"] not in _ST_NP:
        raise InputError(f"{path}: tensor {name!r} has unsupported dtype {t['dtype']}")
    a, b = t["data_offsets"]
    arr = np.memmap(path, dtype=_ST_NP[t["dtype"]], mode="r", offset=8 + n + a, shape=tuple(t["shape"]))
    if arr.nbytes != b - a:
        raise InputError(f"{path}: tensor {name!r} size does not match its shape")
    return arr, t["dtype"]


class _Bf16Rows:
    """A [n, V] BF16 array viewed as float32 rows on demand (slicing converts only the slice)."""

    def __init__(self, raw: np.ndarray):
        self.raw, self.shape, self.ndim = raw, raw.shape, raw.ndim

    def __getitem__(self, key):
        return bf16_to_f32(np.asarray(self.raw[key]))


def load_logits(path: str | os.PathLike, tensor: str | None = None):
    """[n_positions, n_vocab] logits from ``.npy`` (memory-mapped) or ``.safetensors``."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such logits file")
    if p.suffix == ".npy":
        try:
            arr = np.load(p, mmap_mode="r")
        except (OSError, ValueError) as exc:
            raise InputError(f"{p}: not a readable .npy file ({exc})") from None
        kind = arr.dtype.kind
    elif p.suffix == ".safetensors":
        arr, st = _safetensors_tensor(p, tensor or None)
        if st == "BF16":
            arr = _Bf16Rows(arr)
        kind = "f" if st in ("F32", "F16", "F64", "BF16") else "i"
    else:
        raise UsageError(f"logits file must be .npy or .safetensors, not {p.name!r}")
    if kind != "f":
        raise InputError(f"{p}: logits must be floating point")
    if arr.ndim != 2:
        raise InputError(f"{p}: logits must be 2-D [n_positions, n_vocab], got shape {list(arr.shape)}")
    return arr


def load_token_ids(path: str | os.PathLike) -> np.ndarray:
    """Token ids from ``.npy``, ``.safetensors`` (tensor ``token_ids``), ``.json`` (a list) or text
    (integers separated by whitespace or commas)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such token-ids file")
    try:
        if p.suffix == ".npy":
            ids = np.load(p)
        elif p.suffix == ".safetensors":
            ids = np.array(_safetensors_tensor(p, None)[0])
        elif p.suffix == ".json":
            ids = np.array(json.loads(p.read_text(encoding="utf-8")))
        else:
            ids = np.array([int(t) for t in p.read_text(encoding="utf-8").replace(",", " ").split()])
    except (ValueError, OSError, json.JSONDecodeError) as exc:
        raise InputError(f"{p}: unreadable token ids ({exc})") from None
    if ids.ndim != 1 or ids.size == 0 or not np.issubdtype(ids.dtype, np.integer):
        raise InputError(f"{p}: token ids must be a non-empty 1-D list of integers")
    return ids.astype(np.int64)


def positions_for_rows(spec: str, n_rows: int) -> tuple[np.ndarray, dict]:
    """Positions of the logits rows and the manifest's ``positions`` block.

    ``all`` (row k is position k), ``every:N[@OFFSET]`` (row k is OFFSET + k·N), ``list:I,J,...``,
    or a ``.npy`` / text file of integers.
    """
    s = spec.strip()
    if s == "all":
        return np.arange(n_rows, dtype=np.int64), {"scheme": "all"}
    if s.startswith("every:"):
        n_str, _, off_str = s[6:].partition("@")
        try:
            n, off = int(n_str), int(off_str or 0)
        except ValueError:
            raise UsageError(f"bad positions {spec!r}: expected every:N[@OFFSET]") from None
        if n < 1 or off < 0:
            raise UsageError(f"bad positions {spec!r}: N must be >= 1 and OFFSET >= 0")
        return off + n * np.arange(n_rows, dtype=np.int64), {"scheme": "every-n", "every_n": n, "offset": off}
    if s.startswith("list:"):
        try:
            pos = np.array([int(v) for v in s[5:].split(",") if v.strip()], dtype=np.int64)
        except ValueError:
            raise UsageError(f"bad positions {spec!r}: expected list:I,J,...") from None
    elif Path(s).is_file():
        pos = load_token_ids(s)
    else:
        raise UsageError(f"bad positions {spec!r}: use all, every:N[@OFFSET], list:I,J,... or a file of integers")
    if len(pos) != n_rows:
        raise InputError(f"{len(pos)} positions given for {n_rows} logits rows")
    return pos, {"scheme": "explicit"}


def import_capture(
    out_dir: str | os.PathLike,
    logits_path: str | os.PathLike,
    tokens_path: str | os.PathLike,
    *,
    positions: str = "all",
    tensor: str | None = None,
    dtype: str = "bf16",
    model_name: str | None = None,
    text_path: str | os.PathLike | None = None,
    overwrite: bool = False,
) -> Capture:
    """Create a capture from a logits file and a token-ids file (see the CLI for the formats)."""
    logits = load_logits(logits_path, tensor)
    ids = load_token_ids(tokens_path)
    n_rows, n_vocab = logits.shape
    pos, pos_meta = positions_for_rows(positions, n_rows)
    text = {}
    if text_path is not None:
        text = text_record(read_text_bytes(text_path), Path(text_path).name)
    meta = CaptureMeta.model_validate(
        {
            "model": {"name": model_name or Path(logits_path).stem, "format": "npy", "path": str(logits_path)},
            "text": text,
            "positions": pos_meta,
            "notes": [f"imported from {Path(logits_path).name} and {Path(tokens_path).name} by kldcard capture-import"],
        }
    )
    with CaptureWriter(out_dir, meta=meta, n_vocab=n_vocab, token_ids=ids, dtype=dtype, overwrite=overwrite) as w:
        for a in range(0, n_rows, 256):
            w.append(pos[a : a + 256], np.asarray(logits[a : a + 256], dtype=np.float32))
    return open_capture(out_dir, verify=False)
