"""The one GGUF header reader (kldcard.stack.gguf_header) against the gguf package's own reader."""

from __future__ import annotations

import os
import struct
from pathlib import Path

import pytest

from kldcard.stack.gguf_header import read_gguf_header
from kldcard.stack.quantization import gguf_file_type


def test_header_walk_equals_gguf_reader(tiny_qwen3):
    import gguf

    path = tiny_qwen3["gguf_q4_k_m"]
    reader = gguf.GGUFReader(path)  # slow (~10 s on this vocabulary): the reference, once
    field = reader.fields["general.file_type"]
    expected_type = int(field.parts[field.data[0]][0])
    header = read_gguf_header(path)
    assert header.file_type == expected_type == gguf.LlamaFileType.MOSTLY_Q4_K_M
    assert header.tensors == [(t.name, int(t.tensor_type)) for t in reader.tensors]
    assert len(header.tensors) > 10


def test_file_type_for_the_linter(tiny_qwen3, tmp_path):
    assert gguf_file_type(tiny_qwen3["gguf_q8_0"]) == "MOSTLY_Q8_0"
    assert gguf_file_type(tiny_qwen3["gguf_q4_k_m"]) == "MOSTLY_Q4_K_M"
    assert read_gguf_header(tiny_qwen3["gguf_q8_0"], tensors=False).tensors == []
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(Path(tiny_qwen3["gguf_q4_k_m"]).read_bytes()[:4096])
    with pytest.raises(ValueError, match="truncated|elements in"):
        read_gguf_header(cut)
    (tmp_path / "head.gguf").write_bytes(Path(tiny_qwen3["gguf_q4_k_m"]).read_bytes()[:30])  # inside the first key
    (tmp_path / "empty.gguf").write_bytes(b"")
    (tmp_path / "text.gguf").write_bytes(b"not a gguf file at all, just text\n")
    os.mkfifo(tmp_path / "pipe.gguf")  # next to a card, it must not block the linter
    for name in ("head.gguf", "empty.gguf", "text.gguf", "pipe.gguf", "missing.gguf"):
        assert gguf_file_type(str(tmp_path / name)) is None, name


def _header(n_kv: int, body: bytes, n_tensors: int = 0) -> bytes:
    return b"GGUF" + struct.pack("<IQQ", 3, n_tensors, n_kv) + body


_KEY = struct.pack("<Q", 1) + b"a" + struct.pack("<I", 9)  # key "a", value type: array
CRAFTED = {
    "a string of 2**64-1 bytes in an array": _header(1, _KEY + struct.pack("<IQQ", 8, 2, 2**64 - 1)),
    "an inner array of 2**62 elements": _header(1, _KEY + struct.pack("<IQ", 9, 1) + struct.pack("<IQ", 4, 2**62)),
    "arrays nested 5,000 deep": _header(1, _KEY + struct.pack("<IQ", 9, 1) * 5000),
    "2**60 strings": _header(1, _KEY + struct.pack("<IQ", 8, 2**60)),
    "2**63 key-values": _header(2**63, b""),
    "a key of 2**64-1 bytes": _header(1, struct.pack("<Q", 2**64 - 1)),
    "2**63 tensors": _header(0, b"", n_tensors=2**63),
}


@pytest.mark.parametrize("name", sorted(CRAFTED))
def test_crafted_header_is_a_value_error_never_a_crash_or_a_long_loop(tmp_path, name):
    path = tmp_path / "crafted.gguf"
    path.write_bytes(CRAFTED[name])
    with pytest.raises(ValueError):
        read_gguf_header(path)
    assert gguf_file_type(str(path)) is None
