"""compare(): guards, streaming over shards and threads, result content, card results."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest
from helpers_compare import capture_pair, close, logits_pair, mp_reference

from kldcard.compare.run import CompareResult, compare, write_per_token, write_result
from kldcard.errors import CaptureMismatch, CorruptCapture, NonFiniteLogits
from kldcard.schema import Results


@pytest.fixture
def pair(tmp_path):
    rng = np.random.default_rng(42)
    zr, zc = logits_pair(rng, 40, 600, 0.2)
    ref, cand = capture_pair(tmp_path, zr, zc, shard_positions=(16, 7))  # shards that do not line up
    return ref, cand, zr, zc


def test_per_token_values_match_mpmath_across_misaligned_shards(pair):
    ref, cand, zr, zc = pair
    result, td = compare(ref, cand, return_per_token=True, threads=2, bootstrap=200)
    assert len(td.positions) == 40
    for i in (0, 6, 7, 15, 16, 39):  # rows on both sides of every shard boundary
        m = mp_reference(zr[i], zc[i])
        assert close(td.forward_kl[i], m["forward"]) and close(td.reverse_kl[i], m["reverse"])
        assert close(td.js[i], m["js"])
    assert math.isclose(result.forward_kl.mean, float(np.mean(td.forward_kl)), rel_tol=1e-15)
    assert result.positions.n_scored == 40 and result.vocabulary.compared_vocab_size == 600


def test_threads_do_not_change_a_single_bit(pair):
    ref, cand, *_ = pair
    _, one = compare(ref, cand, threads=1, bootstrap=0, return_per_token=True)
    _, two = compare(ref, cand, threads=2, bootstrap=0, return_per_token=True)
    for name, col in one.columns().items():
        np.testing.assert_array_equal(col, two.columns()[name], err_msg=name)


def test_result_carries_provenance_and_labels(pair, tmp_path):
    ref, cand, *_ = pair
    result = compare(ref, cand, bootstrap=100, seed=3, level=0.9, buckets="width:16")
    assert result.reference.model.name == "ref" and result.candidate.model.name == "cand"
    assert result.direction.forward == "KL(P_ref || P_cand)" and result.direction.units == "nats"
    assert result.aggregation.output_ranges == [[0, 16], [16, 32], [32, 40]]
    assert [r.n for r in result.ranges] == [16, 16, 8]
    assert result.aggregation.bootstrap.seed == 3 and result.aggregation.uncertainty_method == "block-bootstrap"
    f = result.forward_kl
    assert f.ci_low < f.mean < f.ci_high and f.se > 0
    assert set(f.percentiles) == {"99.9", "99", "95", "90", "10", "5", "1", "0.1"}
    assert result.perplexity is not None and result.perplexity.ppl_ref > 1
    path = write_result(result, tmp_path / "out" / "result.json")
    again = CompareResult.model_validate_json(path.read_text())
    assert again == result
    assert compare(ref, cand, bootstrap=100, seed=3, level=0.9, buckets="width:16").forward_kl == f  # seeded


def test_to_card_results_validates_against_the_schema(pair):
    ref, cand, *_ = pair
    result = compare(ref, cand, bootstrap=50)
    card = result.to_card_results()
    assert isinstance(card, Results)
    Results.model_validate_json(card.model_dump_json())
    assert card.kld.mean == result.forward_kl.mean and card.n_positions == 40
    assert card.ranges[0].kld_mean == result.ranges[0].forward_kl.mean
    assert card.top1_agreement == result.top1_agreement


def test_identical_captures_give_exact_zeros(tmp_path):
    z, _ = logits_pair(np.random.default_rng(1), 10, 300, 0.0)
    ref, cand = capture_pair(tmp_path, z, z.copy(), dtype="bf16")
    result = compare(ref, cand, bootstrap=50)
    assert result.forward_kl.max == 0.0 and result.reverse_kl.max == 0.0 and result.js.max == 0.0
    assert result.top1_agreement == 1.0 and result.disagreement_runs.n_runs == 0


def test_token_id_mismatch_names_index_and_values(tmp_path):
    z, zc = logits_pair(np.random.default_rng(2), 5, 50, 0.1)
    ids = np.arange(10)
    ids2 = ids.copy()
    ids2[4] = 77
    ref, _ = capture_pair(tmp_path, z, zc, ids=ids, names=("r", "x"))
    _, cand = capture_pair(tmp_path, z, zc, ids=ids2, names=("y", "c"))
    with pytest.raises(CaptureMismatch, match=r"token ids differ at index 4: reference 4 vs candidate 77"):
        compare(ref, cand)
    _, short = capture_pair(tmp_path, z, zc, ids=ids[:8], names=("y2", "c2"))
    with pytest.raises(CaptureMismatch, match=r"token ids differ at index 8: reference 8 vs candidate \(end\)"):
        compare(ref, short)


def test_position_mismatch_names_index_and_values(tmp_path):
    z, zc = logits_pair(np.random.default_rng(3), 4, 50, 0.1)
    ref, _ = capture_pair(tmp_path, z, zc, positions=[0, 2, 4, 6], ids=np.arange(9), names=("r", "x"))
    _, cand = capture_pair(tmp_path, z, zc, positions=[0, 2, 5, 6], ids=np.arange(9), names=("y", "c"))
    with pytest.raises(CaptureMismatch, match=r"positions differ at index 2: reference 4 vs candidate 5"):
        compare(ref, cand)


def test_vocabulary_mismatch_refused_unless_aligned(tmp_path):
    rng = np.random.default_rng(4)
    z, zc = logits_pair(rng, 6, 120, 0.1)
    padded = np.concatenate([zc, np.full((6, 8), -30.0, dtype=np.float32)], axis=1)
    ref, _ = capture_pair(tmp_path, z, zc, names=("r", "x"))
    _, cand = capture_pair(tmp_path, z, padded, names=("y", "c"))
    with pytest.raises(CaptureMismatch, match=r"vocabulary sizes differ: reference 120 vs candidate 128.*common-prefix"):
        compare(ref, cand)
    result, td = compare(ref, cand, align_vocab="common-prefix", return_per_token=True, bootstrap=0)
    assert result.vocabulary.alignment == "common-prefix" and result.vocabulary.compared_vocab_size == 120
    assert result.vocabulary.candidate_vocab_size == 128
    for i in range(6):
        assert close(td.forward_kl[i], mp_reference(z[i], zc[i])["forward"])


def test_nan_in_candidate_names_positions(tmp_path):
    z, zc = logits_pair(np.random.default_rng(5), 6, 40, 0.1)
    zc[2, 5] = np.nan
    zc[4, 0] = np.inf
    ref, cand = capture_pair(tmp_path, z, zc, positions=np.arange(6) * 3, ids=np.arange(20))
    with pytest.raises(NonFiniteLogits, match=r"candidate capture has NaN or \+inf .* 2 position\(s\): 6, 12"):
        compare(ref, cand)


def test_masked_logits_give_infinite_forward_kl_not_nan(tmp_path):
    z, zc = logits_pair(np.random.default_rng(6), 4, 40, 0.1)
    zc[1, 3] = -np.inf  # the candidate masks a token the reference can emit
    ref, cand = capture_pair(tmp_path, z, zc)
    result, td = compare(ref, cand, bootstrap=50, return_per_token=True)
    assert td.forward_kl[1] == math.inf and np.isfinite(td.forward_kl[[0, 2, 3]]).all()
    assert result.forward_kl.mean == math.inf and result.forward_kl.n_infinite == 1
    assert result.forward_kl.se is None and math.isfinite(result.reverse_kl.mean)
    assert result.numerics.robust_rows == 1
    assert CompareResult.model_validate_json(result.model_dump_json()).forward_kl.mean == math.inf
    with pytest.raises(Exception, match="infinite at 1 position"):
        result.to_card_results()


def test_corrupt_capture_is_refused(pair):
    ref, cand, *_ = pair
    shard = cand.path / "logits-00001.safetensors"
    data = bytearray(shard.read_bytes())
    data[-100] ^= 0xFF
    shard.write_bytes(bytes(data))
    with pytest.raises(CorruptCapture, match="sha256"):
        compare(ref.path, cand.path)


def test_per_token_files(pair, tmp_path):
    ref, cand, *_ = pair
    _, td = compare(ref, cand, bootstrap=0, return_per_token=True)
    npz = np.load(write_per_token(td, tmp_path / "t.npz"))
    np.testing.assert_array_equal(npz["forward_kl"], td.forward_kl)
    np.testing.assert_array_equal(npz["position"], td.positions)
    lines = write_per_token(td, tmp_path / "t.csv").read_text().splitlines()
    assert lines[0].startswith("# divergences in nats; forward_kl = KL(P_ref || P_cand)")
    header = lines[1].split(",")
    row = dict(zip(header, lines[2].split(",")))
    assert float(row["forward_kl"]) == td.forward_kl[0] and int(row["position"]) == 0
    assert len(lines) == 2 + 40


def test_progress_callback_and_interrupt_leave_no_result(pair, tmp_path):
    ref, cand, *_ = pair
    seen = []
    compare(ref, cand, bootstrap=0, progress=seen.append, threads=2)
    assert sum(seen) == 40

    def interrupt(n):
        raise KeyboardInterrupt

    out = tmp_path / "result.json"
    with pytest.raises(KeyboardInterrupt):
        result = compare(ref, cand, bootstrap=0, progress=interrupt, threads=2)
        write_result(result, out)
    assert not out.exists() and not list(tmp_path.glob(".result.json.*"))


def test_json_schema_on_disk_is_current():
    from pathlib import Path

    from generate import model_schema

    root = Path(__file__).resolve().parents[1]
    on_disk = (root / "schemas" / "compare-result.schema.json").read_text(encoding="utf-8")
    assert on_disk == model_schema("kldcard.compare.result", "CompareResult", "compare-result.schema.json")
    json.loads(on_disk)
