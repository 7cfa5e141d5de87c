"""Base file ⇄ capture conversion and ``kldcard llama compare`` on files built in the test."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers_llamacpp import peaked_logits, write_file

from kldcard.capture.llama_perplexity import llama_perplexity_plan
from kldcard.capture.store import create_capture_from_arrays, open_capture
from kldcard.cli.main import main
from kldcard.errors import CaptureMismatch, InputError, TokenMismatch
from kldcard.llamacpp.basefile import encode_records, open_base_file
from kldcard.llamacpp.convert import (
    base_to_capture,
    capture_to_base,
    compare_base_with_capture,
)
from kldcard.llamacpp.stats import LlamaKldAccumulator, per_token

N_CTX, N_CHUNK, V = 32, 8, 257  # 8 chunks × 15 records = 120 scored tokens (final blocks print)
S = N_CTX - 1 - N_CTX // 2


@pytest.fixture
def setup(tmp_path):
    rng = np.random.default_rng(11)
    ids = rng.integers(1, V, N_CTX * N_CHUNK)
    plan = llama_perplexity_plan(ids, N_CTX, add_bos=True, bos_id=0)
    base_z = peaked_logits(rng, plan.n_scored, V)
    cand_z = base_z + rng.standard_normal(base_z.shape).astype(np.float32) * np.float32(0.25)
    base_path = tmp_path / "base.bin"
    # an independently written base file stands in for llama-perplexity's pass 1
    write_file(base_path, N_CTX, V, [int(t) for t in plan.original_ids], list(base_z))
    meta = {"model": {"name": "cand"}, "positions": {"scheme": "llama-perplexity"},
            "context": {"n_ctx": N_CTX, "n_chunks": N_CHUNK, "stride": N_CTX},
            "tokens": {"bos": "chunk-start-overwrite", "add_bos": True, "bos_id": 0}}
    cand = create_capture_from_arrays(tmp_path / "cand", cand_z, plan.positions, plan.fed_ids, meta, dtype="f32")
    return plan, base_z, cand_z, base_path, cand


def test_base_to_capture_records_the_floor_and_round_trips_byte_exact(setup, tmp_path):
    plan, base_z, _, base_path, _ = setup
    with open_base_file(base_path) as bf:
        cap = base_to_capture(bf, tmp_path / "ref", bos_id=0, model_name="base-f32", floor_decode="value")
        m = cap.manifest
        assert m.truncation.kind == "floor" and m.truncation.floor_nats == 16.0
        assert m.positions.scheme == "llama-perplexity" and m.context.n_ctx == N_CTX
        assert m.tokens.bos == "chunk-start-overwrite" and m.dtype == "f32"
        assert any("uint16" in n or "code 0" in n for n in m.notes)
        assert np.array_equal(cap.positions, plan.positions)
        assert np.array_equal(cap.token_ids, plan.fed_ids)
        assert np.array_equal(cap.logits_f32(0, S), bf.log_probs(0))  # decoded log-probs, exactly
    out = capture_to_base(open_capture(tmp_path / "ref"), tmp_path / "again.bin")
    again = out.read_bytes()
    original = base_path.read_bytes()
    # the token array differs only where the BOS overwrite was recorded; the records are identical
    header_and_tokens = 20 + 4 * N_CTX * N_CHUNK
    assert again[header_and_tokens:] == original[header_and_tokens:]
    tok_again = np.frombuffer(again[20:header_and_tokens], dtype="<i4")
    assert np.array_equal(tok_again, plan.fed_ids)


def test_round_trip_without_bos_is_byte_identical(tmp_path):
    rng = np.random.default_rng(12)
    z = peaked_logits(rng, 3 * 7, 64)
    write_file(tmp_path / "b.bin", 16, 64, [int(t) for t in rng.integers(0, 64, 48)], list(z))
    with open_base_file(tmp_path / "b.bin") as bf:
        base_to_capture(bf, tmp_path / "cap", floor_decode="value")
    assert main(["llama", "capture-to-base", str(tmp_path / "cap"), "--out", str(tmp_path / "c.bin")]) == 0
    assert (tmp_path / "c.bin").read_bytes() == (tmp_path / "b.bin").read_bytes()


def test_capture_to_base_encodes_raw_float32_logits(setup, tmp_path):
    plan, _, cand_z, _, cand = setup
    out = capture_to_base(cand, tmp_path / "cand.bin", floor_nats=24.0)
    with open_base_file(out) as bf:
        assert np.array_equal(np.array(bf.raw).reshape(plan.n_scored, -1), encode_records(cand_z, 24.0))


def test_compare_equals_direct_statistics(setup):
    plan, base_z, cand_z, base_path, cand = setup
    raw = encode_records(base_z)
    acc = LlamaKldAccumulator()
    tg = plan.targets()
    for c in range(N_CHUNK):
        sl = slice(c * S, (c + 1) * S)
        acc.add(per_token(cand_z[sl], raw[sl], tg[sl], V))
        acc.end_chunk(c + 1)
    direct = acc.finish()
    with open_base_file(base_path) as bf:
        via = compare_base_with_capture(bf, cand)
    assert via.to_dict() == direct.to_dict()
    assert via.n_tokens == 120 and via.has_final_blocks and 0.0 < via.kld_mean < 1.0


def test_compare_refuses_mismatched_inputs(setup, tmp_path):
    plan, _, cand_z, base_path, _ = setup
    meta = {"model": {"name": "c"}}
    bad_ids = plan.fed_ids.copy()
    bad_ids[5] += 1
    c1 = create_capture_from_arrays(tmp_path / "c1", cand_z, plan.positions, bad_ids, meta, dtype="f32")
    meta2 = {"model": {"name": "c"}, "context": {"n_ctx": N_CTX}}
    c2 = create_capture_from_arrays(tmp_path / "c2", cand_z[:-1], plan.positions[:-1], plan.fed_ids, meta2, dtype="f32")
    c3 = create_capture_from_arrays(tmp_path / "c3", cand_z[:, :-1], plan.positions, plan.fed_ids, meta, dtype="f32")
    with open_base_file(base_path) as bf:
        with pytest.raises(TokenMismatch, match="position 5"):
            compare_base_with_capture(bf, c1)
        with pytest.raises(CaptureMismatch, match=f"lacks position {int(plan.positions[-1])}"):
            compare_base_with_capture(bf, c2)
        with pytest.raises(CaptureMismatch, match="vocabulary sizes differ"):
            compare_base_with_capture(bf, c3)
    with pytest.raises(InputError, match="not llama-perplexity's"):
        capture_to_base(c2, tmp_path / "x.bin")
    with pytest.raises(InputError, match="no context.n_ctx"):
        capture_to_base(c1, tmp_path / "x.bin")
    assert not (tmp_path / "x.bin").exists()


def test_compare_cli_prints_the_block_with_a_labelled_preface(setup, capsys, tmp_path):
    _, _, _, base_path, cand = setup
    args = ["llama", "compare", "--reference-llama-base", str(base_path), str(cand.path)]
    assert main(args) == 0
    out = capsys.readouterr().out
    first = out.splitlines()[0]
    assert first.startswith("# kldcard: KLD = KL(P_base || Q_candidate) (forward), nats")
    assert "positions 16..30" in first and "120 tokens" in first and "16-nat floor" in first
    assert "====== KL divergence statistics ======" in out and "Same top p:" in out
    assert out.count("chunk             PPL") == 1  # once, as the vendored llama-perplexity prints it
    assert main(args + ["--report", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["n_tokens"] == 120 and doc["direction"].startswith("forward") and doc["floor_nats"] == 16.0
    bad = tmp_path / "bad.bin"
    bad.write_bytes(base_path.read_bytes()[:100])
    assert main(["llama", "compare", "--reference-llama-base", str(bad), str(cand.path)]) == 2
    assert "truncated" in capsys.readouterr().err


def test_masked_floor_decode_and_re_encoding(setup, tmp_path):
    _, base_z, _, base_path, cand = setup
    from kldcard.compare.divergence import divergence_logits

    with open_base_file(base_path) as bf:
        cap = base_to_capture(bf, tmp_path / "masked", bos_id=0)  # masked is the default
        lp = cap.logits_f32(0, S)
        codes = np.asarray(bf.codes(0))
        assert np.all(np.isneginf(lp[codes == 0])) and np.all(np.isfinite(lp[codes > 0]))
        assert np.array_equal(lp[codes > 0], bf.log_probs(0)[codes > 0])
        assert cap.manifest.truncation.floor_decode == "masked"
        with pytest.raises(InputError, match="floor_decode"):
            base_to_capture(bf, tmp_path / "x", floor_decode="zero")
    # kldcard's float64 forward KL treats the masked tail as probability 0
    d = divergence_logits(lp, base_z[:S])
    assert np.all(np.isfinite(d.forward_kl)) and np.all(np.isinf(d.reverse_kl[(codes == 0).any(axis=1)]))
    # a masked capture re-encodes: -inf entries become code 0 again, other codes are unchanged
    out = capture_to_base(cap, tmp_path / "m.bin")
    with open_base_file(out) as bf2, open_base_file(base_path) as bf:
        assert np.array_equal(np.asarray(bf2.codes(0)) == 0, codes == 0)
        assert np.abs(np.asarray(bf2.codes(0)).astype(int) - codes.astype(int)).max() <= 1


def test_bf16_candidate_is_scored_with_a_note(setup, capsys, tmp_path):
    plan, _, cand_z, base_path, _ = setup
    cand = create_capture_from_arrays(tmp_path / "bf16", cand_z, plan.positions, plan.fed_ids,
                                      {"model": {"name": "c"}}, dtype="bf16")
    assert main(["llama", "compare", "--reference-llama-base", str(base_path), str(cand.path), "--no-chunks"]) == 0
    out = capsys.readouterr().out
    assert "# kldcard: note: candidate logits were stored in BF16" in out
    assert "chunk             PPL" not in out and "Mean    KLD:" in out
