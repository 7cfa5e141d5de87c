"""llama.cpp ``_logits_`` base files: layout, float32-exact encoding, round trips and refusals."""

from __future__ import annotations

import struct

import numpy as np
import pytest
from helpers_llamacpp import encode_row, peaked_logits, write_file
from hypothesis import example, given, settings
from hypothesis import strategies as st

from kldcard.cli.main import main
from kldcard.errors import InputError
from kldcard.llamacpp.basefile import (
    BaseFileWriter,
    encode_records,
    expected_size,
    open_base_file,
    record_slots,
    split_records,
    write_base_file,
)
from kldcard.llamacpp.convert import detect_floor

F = np.float32


def _tokens(rng, n_ctx, n_chunk, n_vocab):
    return [int(t) for t in rng.integers(0, n_vocab, n_ctx * n_chunk)]


@pytest.mark.parametrize("n_vocab", [37, 40])  # odd vocab has a pad slot, even has none
def test_independent_writer_file_is_read_correctly(tmp_path, n_vocab):
    rng = np.random.default_rng(1)
    n_ctx, n_chunk = 10, 3
    per_chunk = n_ctx - 1 - n_ctx // 2  # 4
    rows = list(peaked_logits(rng, n_chunk * per_chunk, n_vocab))
    tokens = _tokens(rng, n_ctx, n_chunk, n_vocab)
    path = tmp_path / "indep.bin"
    encoded = write_file(path, n_ctx, n_vocab, tokens, rows)

    with open_base_file(path) as bf:
        assert (bf.n_ctx, bf.n_vocab, bf.n_chunk) == (n_ctx, n_vocab, n_chunk)
        assert bf.tokens.tolist() == tokens
        assert bf.raw.shape == (n_chunk, per_chunk, record_slots(n_vocab))
        assert bf.positions().tolist() == [c * n_ctx + j for c in range(n_chunk) for j in range(5, 9)]
        assert bf.targets().tolist() == [tokens[c * n_ctx + j + 1] for c in range(n_chunk) for j in range(5, 9)]
        for c in range(n_chunk):
            scale, mn = bf.scale_and_min(c)
            codes = bf.codes(c)
            lp = bf.log_probs(c)
            for k in range(per_chunk):
                e_scale, e_mn, e_codes = encoded[c * per_chunk + k]
                assert scale[k] == F(e_scale) and mn[k] == F(e_mn)
                assert codes[k].tolist() == e_codes
                want = [F(F(F(e_scale) * F(code)) + F(e_mn)) for code in e_codes]
                assert lp[k].tolist() == [float(w) for w in want]
        if n_vocab % 2:
            assert not np.any(bf.raw[:, :, -1])  # pad slot is zero


@pytest.mark.parametrize("floor", [16.0, 24.0])
def test_kldcard_writer_matches_independent_writer_byte_for_byte(tmp_path, floor):
    rng = np.random.default_rng(2)
    n_ctx, n_chunk, n_vocab = 8, 2, 51
    per_chunk = n_ctx - 1 - n_ctx // 2
    z = peaked_logits(rng, n_chunk * per_chunk, n_vocab, spread=8.0)  # spans > 24 nats
    tokens = _tokens(rng, n_ctx, n_chunk, n_vocab)
    write_file(tmp_path / "indep.bin", n_ctx, n_vocab, tokens, list(z), floor=floor)
    write_base_file(tmp_path / "ours.bin", n_ctx=n_ctx, tokens=np.array(tokens), logits=z, floor_nats=floor)
    assert (tmp_path / "ours.bin").read_bytes() == (tmp_path / "indep.bin").read_bytes()
    with open_base_file(tmp_path / "ours.bin") as bf:
        assert detect_floor(bf) == floor


def test_round_trip_is_byte_exact(tmp_path):
    rng = np.random.default_rng(3)
    n_ctx, n_chunk, n_vocab = 16, 3, 1001
    per_chunk = n_ctx - 1 - n_ctx // 2
    z = peaked_logits(rng, n_chunk * per_chunk, n_vocab)
    tokens = rng.integers(0, n_vocab, n_ctx * n_chunk)
    first = write_base_file(tmp_path / "a.bin", n_ctx=n_ctx, tokens=tokens, logits=z)
    with open_base_file(first) as bf:
        records = np.array(bf.raw).reshape(-1, bf.header.slots)
        assert np.array_equal(records, encode_records(z))  # read back == what was encoded
        second = write_base_file(tmp_path / "b.bin", n_ctx=n_ctx, tokens=np.array(bf.tokens), raw_records=records,
                                 n_vocab=n_vocab)
    assert second.read_bytes() == first.read_bytes()
    assert first.stat().st_size == expected_size(n_ctx, n_vocab, n_chunk)


def test_rounding_is_half_to_even_on_the_float32_product():
    # floor 65535 nats makes scale exactly 1 and lo = min, so products are the exact offsets.
    z = np.array([[0.0, 0.5, 1.5, 2.5, 3.5, 65534.5, 65535.0, 7.49, 7.51]], dtype=np.float32)
    raw = encode_records(z, floor_nats=65535.0)
    scale, mn, codes = split_records(raw, z.shape[1])
    assert scale[0] == F(1.0)
    assert codes[0].tolist() == [0, 0, 2, 2, 4, 65534, 65535, 7, 8]


def test_floor_16_collapses_entries_below_max_minus_16():
    z = np.array([[10.0, -5.0, -6.5, -20.0, 9.0]], dtype=np.float32)
    scale, mn, codes = split_records(encode_records(z), 5)
    assert scale[0] == F(F(16.0) / F(65535.0))
    assert codes[0, 0] == 65535 and codes[0, 1] > 0 and codes[0, 2] == 0 and codes[0, 3] == 0
    # code 0 decodes to min_log_prob = lo - hi - lse
    lse = F(np.log(np.sum(np.exp((z[0] - F(10.0)).astype(np.float32)), dtype=np.float64)))
    assert mn[0] == F(F(F(-6.0) - F(10.0)) - lse)


def test_constant_logits_give_zero_scale_and_zero_codes():
    z = np.full((2, 8), 3.25, dtype=np.float32)
    scale, mn, codes = split_records(encode_records(z), 8)
    assert scale.tolist() == [0.0, 0.0] and not codes.any()
    assert mn[0] == F(-np.log(8.0))  # lo − hi − lse = −log V


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-40, 40, allow_nan=False, width=32), min_size=2, max_size=40))
@example([0.0, 1.1754943508222875e-38])  # subnormal scale: 1/scale overflows, llama.cpp's trick gives 0
@example([1.0, 1.0, 1.0])  # scale 0
def test_encoding_agrees_with_the_independent_row_encoder(values):
    z = np.array([values], dtype=np.float32)
    scale, mn, codes = split_records(encode_records(z), len(values))
    e_scale, e_mn, e_codes = encode_row(z[0])
    assert (float(scale[0]), float(mn[0])) == (e_scale, e_mn)
    assert codes[0].tolist() == e_codes


def test_sizes_match_the_reference_table():
    # bytes per scored token = 2·nv (reference §2.5)
    assert 2 * record_slots(32_000) == 64_008
    assert 2 * record_slots(128_256) == 256_520
    assert 2 * record_slots(151_936) == 303_880
    assert expected_size(512, 32_000, 1) == 20 + 4 * 512 + 64_008 * 255


# ------------------------------------------------------------------------------------------------
# Refusals: one clear line, exit 2 via the CLI, never a traceback
# ------------------------------------------------------------------------------------------------


@pytest.fixture
def good_file(tmp_path):
    rng = np.random.default_rng(4)
    z = peaked_logits(rng, 2 * 3, 11)
    return write_base_file(tmp_path / "good.bin", n_ctx=8, tokens=rng.integers(0, 11, 16), logits=z)


def _cli_refuses(path, capsys, needle):
    rc = main(["llama", "base-info", str(path)])
    err = capsys.readouterr().err
    assert rc == 2
    assert err.count("\n") == 1 and err.startswith("kldcard: error:") and needle in err
    assert "Traceback" not in err


def test_truncated_file_is_refused(good_file, tmp_path, capsys):
    bad = tmp_path / "trunc.bin"
    bad.write_bytes(good_file.read_bytes()[:-3])
    with pytest.raises(InputError, match="truncated"):
        open_base_file(bad)
    _cli_refuses(bad, capsys, "truncated")


def test_oversized_file_is_refused(good_file, tmp_path, capsys):
    bad = tmp_path / "long.bin"
    bad.write_bytes(good_file.read_bytes() + b"\0\0")
    _cli_refuses(bad, capsys, "longer than its header implies")


def test_twelve_byte_aborted_file_is_refused(tmp_path, capsys):
    bad = tmp_path / "aborted.bin"
    bad.write_bytes(b"_logits_" + struct.pack("<i", 512))
    _cli_refuses(bad, capsys, "12-byte aborted base pass")


def test_v2_fork_file_is_recognised_and_refused(tmp_path, capsys):
    bad = tmp_path / "v2.bin"
    n_ctx, stride, n_windows, n_vocab = 8, 2, 2, 5
    body = struct.pack("<iiiii", n_ctx, n_vocab, stride, n_ctx, n_windows)
    body += struct.pack(f"<{(n_windows - 1) * stride + n_ctx}i", *range((n_windows - 1) * stride + n_ctx))
    body += b"\0" * (2 * record_slots(n_vocab) * n_windows * (n_ctx - 1))
    bad.write_bytes(b"_logits_v2" + body)
    _cli_refuses(bad, capsys, "_logits_v2")


def test_foreign_file_and_bad_header_are_refused(tmp_path, capsys):
    bad = tmp_path / "foreign.bin"
    bad.write_bytes(b"GGUF" + b"\0" * 40)
    _cli_refuses(bad, capsys, "not a llama.cpp base-logits file")
    neg = tmp_path / "neg.bin"
    neg.write_bytes(b"_logits_" + struct.pack("<iii", 8, -3, 1))
    _cli_refuses(neg, capsys, "impossible header")
    _cli_refuses(tmp_path / "missing.bin", capsys, "does not exist")


def test_writer_is_atomic_and_does_not_clobber(tmp_path, good_file):
    before = good_file.read_bytes()
    with pytest.raises(InputError, match="exists"):
        BaseFileWriter(good_file, n_ctx=8, n_vocab=11, tokens=np.zeros(16, dtype=np.int32))
    target = tmp_path / "new.bin"
    with pytest.raises(RuntimeError):
        with BaseFileWriter(target, n_ctx=8, n_vocab=11, tokens=np.zeros(16, dtype=np.int32)) as w:
            w.write_chunk_logits(np.zeros((3, 11), dtype=np.float32))
            raise RuntimeError("interrupted")
    assert not target.exists()
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []
    with pytest.raises(InputError, match="wrote 1 of 2 chunks"):
        with BaseFileWriter(target, n_ctx=8, n_vocab=11, tokens=np.zeros(16, dtype=np.int32)) as w:
            w.write_chunk_logits(np.zeros((3, 11), dtype=np.float32))
    assert not target.exists()
    assert good_file.read_bytes() == before


def test_base_info_describes_the_file(good_file, capsys):
    assert main(["llama", "base-info", str(good_file), "-o", "json"]) == 0
    import json

    info = json.loads(capsys.readouterr().out)
    assert info["n_ctx"] == 8 and info["n_vocab"] == 11 and info["n_chunk"] == 2
    assert info["n_scored"] == 6 and info["scored_positions"] == "4..6 of each chunk"
    assert info["floor_nats_detected"] == 16.0


def test_expf_is_the_c_librarys_bit_for_bit():
    """kldcard's vectorised expf against the C library's own (glibc ≥ 2.27 here), over the range
    llama.cpp evaluates (x ≤ 0) including the underflow edge; numpy's float32 exp is not it."""
    from helpers_llamacpp import c_expf

    from kldcard.llamacpp.libm import expf

    rng = np.random.default_rng(11)
    x = np.concatenate([-(rng.random(20_000, dtype=np.float32) * np.float32(110)),
                        np.float32([0.0, -0.0, -1e-30, -87.33655, -103.97208, -103.97209, -104.0, -200.0])])
    ref = np.array([c_expf(v) for v in x], dtype=np.float32)
    assert np.array_equal(expf(x), ref)
    assert expf(np.float32([-np.inf]))[0] == 0.0
    assert int((np.exp(x) != ref).sum()) > 1000  # why the emulation exists


def test_expf_compiled_and_numpy_versions_agree_everywhere():
    from kldcard.llamacpp.libm import _expf_numpy, expf

    rng = np.random.default_rng(12)
    x = -(rng.random((7, 3001), dtype=np.float32) * np.float32(120))
    assert np.array_equal(expf(x), _expf_numpy(x)) and expf(x).shape == (7, 3001)
    y = np.float32([np.nan, -1.0, 0.5])  # outside the compiled domain: the numpy version answers
    assert np.isnan(expf(y)[0]) and expf(y)[1] == _expf_numpy(y)[1]
