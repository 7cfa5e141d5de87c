"""The capture store: round trips, atomic writes, corruption detection, schema drift."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pytest

from kldcard.capture.manifest import CaptureManifest
from kldcard.capture.store import (
    CaptureWriter,
    bf16_to_f32,
    create_capture_from_arrays,
    f32_to_bf16,
    open_capture,
    to_float64,
)
from kldcard.errors import CorruptCapture, InputError

ROOT = Path(__file__).resolve().parents[1]
META = {"model": {"name": "store-test", "format": "npy"}, "positions": {"scheme": "explicit"}}


def _logits(n: int, v: int, seed: int = 0) -> np.ndarray:
    return (np.random.default_rng(seed).normal(size=(n, v)) * 4).astype(np.float32)


def test_round_trip_f32_is_exact_and_spans_shards(tmp_path):
    z = _logits(11, 37)
    pos = np.arange(11) * 3 + 1
    ids = np.arange(40) % 7
    cap = create_capture_from_arrays(tmp_path / "c", z, pos, ids, META, dtype="f32", shard_positions=4)
    assert [p.name for p in sorted((tmp_path / "c").glob("logits-*"))] == [
        "logits-00000.safetensors",
        "logits-00001.safetensors",
        "logits-00002.safetensors",
    ]
    cap = open_capture(tmp_path / "c", verify=True)
    assert cap.n_positions == 11 and cap.n_vocab == 37 and cap.dtype == "f32"
    np.testing.assert_array_equal(cap.positions, pos)
    np.testing.assert_array_equal(cap.token_ids, ids.astype(np.int32))
    np.testing.assert_array_equal(cap.logits_f32(0, 11), z)  # across all three shards
    np.testing.assert_array_equal(cap.raw_rows(3, 6), z[3:6])  # straddles a shard boundary
    buf = np.empty((8, 37), dtype=np.float32)
    np.testing.assert_array_equal(cap.read_rows_into(2, 10, buf), z[2:10])
    blocks = list(cap.iter_blocks(block=3))
    assert [b[0] for b in blocks] == [0, 3, 4, 7, 8]  # blocks never straddle a shard
    np.testing.assert_array_equal(np.concatenate([b[2] for b in blocks]), z)
    np.testing.assert_array_equal(np.concatenate([b[1] for b in blocks]), pos)
    nxt = cap.next_token_ids()
    assert nxt[0] == ids[2] and nxt[-1] == ids[32]


def test_round_trip_bf16_matches_torch_rounding(tmp_path):
    import torch
    z = _logits(6, 300, seed=1) * np.float32(100)
    cap = create_capture_from_arrays(tmp_path / "c", z, np.arange(6), np.arange(7), META)
    expected = torch.from_numpy(z).to(torch.bfloat16).float().numpy()
    np.testing.assert_array_equal(cap.logits_f32(0, 6), expected)
    raw = cap.raw_rows(0, 6)
    assert raw.dtype == np.uint16
    np.testing.assert_array_equal(to_float64(raw), expected.astype(np.float64))
    # the shards are ordinary safetensors files that HF tooling reads
    from safetensors.torch import load_file

    t = load_file(str(tmp_path / "c" / "logits-00000.safetensors"))
    assert t["logits"].dtype == torch.bfloat16 and list(t["positions"]) == list(range(6))
    np.testing.assert_array_equal(t["logits"].float().numpy(), expected)


def test_bf16_rounding_edge_cases():
    x = np.array([1.0, 1.00390625, 1.01171875, 3.4e38, -np.inf, np.nan, -0.0], dtype=np.float32)
    back = bf16_to_f32(f32_to_bf16(x))
    # 1 + 2^-8 is a tie -> even (1.0); 1 + 3*2^-8 is a tie -> even (1 + 2^-6)
    assert back[0] == 1.0 and back[1] == 1.0 and back[2] == np.float32(1.015625)
    assert np.isposinf(back[3]) and np.isneginf(back[4]) and np.isnan(back[5])
    assert np.signbit(back[6])


def test_streaming_appends_and_manifest_facts(tmp_path):
    z = _logits(9, 16)
    with CaptureWriter(tmp_path / "c", meta=META, n_vocab=16, token_ids=np.arange(20), shard_positions=5) as w:
        w.append(np.array([0, 1, 2]), z[:3])
        w.append(np.array([5, 6, 7, 8, 9, 10]), z[3:])
    m = CaptureManifest.model_validate_json((tmp_path / "c" / "manifest.json").read_text())
    assert m.n_positions == 9 and m.n_tokens == 20 and m.dtype == "bf16" and len(m.shards) == 2
    assert [s.first_position for s in m.shards] == [0, 7] and m.shards[1].last_position == 10
    assert m.model.name == "store-test" and m.format == "kldcard-capture"
    assert not list(tmp_path.glob(".c.partial-*"))


def test_exception_inside_with_block_leaves_nothing(tmp_path):
    target = tmp_path / "c"
    with pytest.raises(RuntimeError, match="engine crashed"):
        with CaptureWriter(target, meta=META, n_vocab=8, token_ids=np.arange(10), shard_positions=2) as w:
            w.append(np.arange(5), _logits(5, 8))
            raise RuntimeError("engine crashed")
    assert not target.exists()
    assert list(tmp_path.iterdir()) == []


def test_keyboard_interrupt_inside_with_block_leaves_nothing(tmp_path):
    with pytest.raises(KeyboardInterrupt):
        with CaptureWriter(tmp_path / "c", meta=META, n_vocab=8, token_ids=np.arange(10)) as w:
            w.append(np.arange(3), _logits(3, 8))
            raise KeyboardInterrupt
    assert list(tmp_path.iterdir()) == []


def test_killed_writer_leaves_no_valid_looking_capture(tmp_path):
    target = tmp_path / "c"
    script = textwrap.dedent(
        f"""
        import sys, time, numpy as np
        from kldcard.capture.store import CaptureWriter
        meta = {{"model": {{"name": "killed"}}}}
        with CaptureWriter({str(target)!r}, meta=meta, n_vocab=64, token_ids=np.arange(100000),
                           shard_positions=8) as w:
            for i in range(100000):
                w.append(np.array([i]), np.zeros((1, 64), np.float32))
                if i == 20:
                    print("writing", flush=True)
                time.sleep(0.001)
        """
    )
    proc = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout.readline().strip() == "writing"  # two shards are complete by now
        time.sleep(0.05)
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        proc.stdout.close()
    assert proc.returncode == -signal.SIGKILL
    assert not target.exists()
    partial = list(tmp_path.glob(".c.partial-*"))
    assert len(partial) == 1 and list(partial[0].glob("logits-*"))  # it really was mid-write
    assert not (partial[0] / "manifest.json").exists()
    with pytest.raises(InputError, match="no manifest.json"):
        open_capture(partial[0])
    with pytest.raises(InputError, match="not a capture directory"):
        open_capture(target)


def _capture(tmp_path, dtype="bf16"):
    create_capture_from_arrays(tmp_path / "c", _logits(6, 32), np.arange(6), np.arange(8), META, dtype=dtype,
                               shard_positions=3)
    return tmp_path / "c"


def test_truncated_shard_is_corrupt_even_without_verify(tmp_path):
    c = _capture(tmp_path)
    shard = c / "logits-00001.safetensors"
    os.truncate(shard, shard.stat().st_size - 2)
    with pytest.raises(CorruptCapture, match=r"logits-00001.safetensors: size \d+ bytes, manifest says \d+"):
        open_capture(c, verify=False)


def test_flipped_byte_is_caught_by_checksum(tmp_path):
    c = _capture(tmp_path)
    shard = c / "logits-00000.safetensors"
    data = bytearray(shard.read_bytes())
    data[1030] ^= 0x01  # inside the first logits row
    shard.write_bytes(bytes(data))
    open_capture(c, verify=False)  # same size: only the checksum can tell
    with pytest.raises(CorruptCapture, match="sha256 does not match"):
        open_capture(c, verify=True)


def test_missing_shard_and_tampered_tokens(tmp_path):
    c = _capture(tmp_path)
    (c / "logits-00001.safetensors").unlink()
    with pytest.raises(CorruptCapture, match="missing"):
        open_capture(c)
    c2 = tmp_path / "d"
    create_capture_from_arrays(c2, _logits(2, 4), np.arange(2), np.arange(3), META)
    m = json.loads((c2 / "manifest.json").read_text())
    m["token_ids_sha256"] = "0" * 64
    (c2 / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(CorruptCapture, match="token_ids_sha256"):
        open_capture(c2)


def test_invalid_manifest_is_one_line_input_error(tmp_path):
    c = _capture(tmp_path)
    m = json.loads((c / "manifest.json").read_text())
    m["n_vocab"] = "lots"
    (c / "manifest.json").write_text(json.dumps(m))
    with pytest.raises(InputError, match="invalid manifest: n_vocab") as err:
        open_capture(c)
    assert "\n" not in str(err.value)


def test_writer_guards(tmp_path):
    _capture(tmp_path)
    with pytest.raises(InputError, match="already exists"):
        CaptureWriter(tmp_path / "c", meta=META, n_vocab=4, token_ids=np.arange(3))
    with pytest.raises(InputError, match="capture metadata: model"):
        CaptureWriter(tmp_path / "x", meta={"text": {}}, n_vocab=4, token_ids=np.arange(3))
    with CaptureWriter(tmp_path / "x", meta=META, n_vocab=4, token_ids=np.arange(5)) as w:
        with pytest.raises(InputError, match="shape"):
            w.append(np.arange(2), np.zeros((2, 5)))
        w.append(np.array([1, 2]), np.zeros((2, 4)))
        with pytest.raises(InputError, match="strictly increasing"):
            w.append(np.array([2]), np.zeros((1, 4)))
        with pytest.raises(InputError, match="beyond the 5 token ids"):
            w.append(np.array([5]), np.zeros((1, 4)))
    assert open_capture(tmp_path / "x").n_positions == 2
    with pytest.raises(InputError, match="empty capture"):
        with CaptureWriter(tmp_path / "y", meta=META, n_vocab=4, token_ids=np.arange(5)):
            pass
    assert not (tmp_path / "y").exists()


def test_overwrite_replaces_atomically(tmp_path):
    c = _capture(tmp_path)
    z = _logits(2, 5, seed=9)
    cap = create_capture_from_arrays(c, z, np.arange(2), np.arange(3), META, dtype="f32", overwrite=True)
    np.testing.assert_array_equal(cap.logits_f32(0, 2), z)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["c"]


def test_nan_logits_are_stored_as_given(tmp_path):
    z = _logits(2, 6)
    z[1, 3] = np.nan
    cap = create_capture_from_arrays(tmp_path / "c", z, np.arange(2), np.arange(3), META)
    assert np.isnan(cap.logits_f32(1, 2)[0, 3])


def test_manifest_json_schema_is_current():
    from generate import model_schema

    on_disk = (ROOT / "schemas" / "capture-manifest.schema.json").read_text(encoding="utf-8")
    fresh = model_schema("kldcard.capture.manifest", "CaptureManifest", "capture-manifest.schema.json")
    assert on_disk == fresh, "run: python scripts/generate.py"


def test_manifest_validates_against_generated_schema(tmp_path):
    import jsonschema
    c = _capture(tmp_path)
    schema = json.loads((ROOT / "schemas" / "capture-manifest.schema.json").read_text())
    jsonschema.validate(json.loads((c / "manifest.json").read_text()), schema)


def test_to_float64_passes_float64_through_unnarrowed():
    from kldcard.capture.store import to_float64

    x = np.array([0.1, 1e-300, -3.0000000000000004])  # not representable in float32
    assert to_float64(x).dtype == np.float64 and np.array_equal(to_float64(x), x)
    assert np.array_equal(to_float64(x, out=np.empty(3)), x)
