"""The one GGUF header reader (standard library only: the linter uses it, and so does evaluate).

A GGUF file starts with its key-values and tensor infos; :func:`read_gguf_header` walks them in a
memory map, seeking past arrays (the vocabulary's ~300,000 token and merge strings included) instead of
decoding them, and never touches tensor data. ``gguf.GGUFReader`` does more (a numpy view per field
part) and took ~10 s per candidate on a 151,936-token vocabulary; this walk takes milliseconds.
"""

from __future__ import annotations

import mmap
import os
import struct
from dataclasses import dataclass, field

__all__ = ["GgufHeader", "read_gguf_header"]

# GGUF value type -> struct code (8 is a string, 9 an array)
_SCALAR = {0: "B", 1: "b", 2: "H", 3: "h", 4: "I", 5: "i", 6: "f", 7: "?", 10: "Q", 11: "q", 12: "d"}


@dataclass
class GgufHeader:
    file_type: int | None  # general.file_type (llama.cpp's llama_ftype code), None when absent
    tensors: list[tuple[str, int]] = field(default_factory=list)  # (name, ggml type code); empty unless asked
    shapes: list[tuple[int, ...]] = field(default_factory=list)  # each tensor's dimensions, same order


def read_gguf_header(path: str | os.PathLike[str], *, tensors: bool = True) -> GgufHeader:
    """``general.file_type`` and, with ``tensors``, every tensor's name, ggml type and dimensions.

    Raises ValueError (not a GGUF, truncated, unknown value type) or OSError; callers turn either
    into their own one-line message. Without ``tensors`` the walk stops at ``general.file_type``.
    """
    with open(path, "rb") as f:
        if os.fstat(f.fileno()).st_size < 24:
            raise ValueError("not a GGUF file (shorter than its header)")
        with mmap.mmap(f.fileno(), 0, access=mmap.ACCESS_READ) as m:
            try:
                return _walk(m, tensors)
            except (struct.error, IndexError, OverflowError) as exc:  # lengths past the end (or past 2**63)
                raise ValueError(f"truncated GGUF header ({exc})") from None


def _walk(m: mmap.mmap, want_tensors: bool) -> GgufHeader:
    if m[:4] != b"GGUF":
        raise ValueError("not a GGUF file (no GGUF magic)")
    # the byte order is the one in which the version reads as a small number (as GGUFReader does)
    e = "<" if struct.unpack_from("<I", m, 4)[0] & 0xFFFF else ">"
    u32, u64 = struct.Struct(e + "I"), struct.Struct(e + "Q")
    sizes = {k: struct.calcsize(e + c) for k, c in _SCALAR.items()}
    n_tensors, n_kv = struct.unpack_from(e + "QQ", m, 8)
    end = len(m)

    def string(o: int) -> tuple[str, int]:
        n = u64.unpack_from(m, o)[0]
        if o + 8 + n > end:
            raise ValueError("truncated GGUF header (a string runs past the end)")
        return m[o + 8 : o + 8 + n].decode("utf-8", "replace"), o + 8 + n

    def past_end(o: int) -> int:
        if o > end:
            raise ValueError("truncated GGUF header (a value runs past the end)")
        return o

    def skip(o: int, vtype: int, depth: int = 0) -> int:
        if vtype in sizes:
            return past_end(o + sizes[vtype])
        if vtype == 8:
            return past_end(o + 8 + u64.unpack_from(m, o)[0])
        if vtype == 9:
            itype, n = u32.unpack_from(m, o)[0], u64.unpack_from(m, o + 4)[0]
            o += 12
            # every element takes at least one byte (a string or an array at least 8): a count the rest
            # of the file cannot hold is refused before it is looped over
            if n > end - o:
                raise ValueError(f"GGUF array of {n} elements in {end - o} bytes")
            if itype in sizes:
                return past_end(o + sizes[itype] * n)
            if itype == 8:  # strings (the vocabulary): hop over each length-prefixed one
                for _ in range(n):
                    o = past_end(o + 8 + u64.unpack_from(m, o)[0])
                return o
            if depth >= 8:  # real files nest no arrays in arrays; a crafted one must not recurse for ever
                raise ValueError("GGUF arrays nested too deeply")
            for _ in range(n):
                o = skip(o, itype, depth + 1)
            return o
        raise ValueError(f"unknown GGUF value type {vtype}")

    o, file_type = 24, None
    for _ in range(n_kv):
        key, o = string(o)
        vtype = u32.unpack_from(m, o)[0]
        o += 4
        if key == "general.file_type" and vtype in (4, 5):
            file_type = int(struct.unpack_from(e + _SCALAR[vtype], m, o)[0])
            if not want_tensors:
                return GgufHeader(file_type)
        o = skip(o, vtype)
    header = GgufHeader(file_type)
    if want_tensors:
        for _ in range(n_tensors):
            name, o = string(o)
            n_dims = u32.unpack_from(m, o)[0]
            if n_dims > 8:  # ggml tensors have at most 4 dimensions
                raise ValueError(f"GGUF tensor {name!r} has {n_dims} dimensions")
            header.shapes.append(tuple(u64.unpack_from(m, o + 4 + 8 * i)[0] for i in range(n_dims)))
            o += 4 + 8 * n_dims
            header.tensors.append((name, u32.unpack_from(m, o)[0]))
            o += 12  # type, data offset
    return header
