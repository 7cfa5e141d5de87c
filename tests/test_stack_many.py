"""Many stacks at once, on real captures written with the store's numpy API."""

from __future__ import annotations

import json

import mpmath
import numpy as np
import pytest
from helpers_stack import CPU, make_capture, stack

from kldcard.capture.store import to_float64
from kldcard.cli.main import main
from kldcard.compare.stacks import CENTROID, compare_stacks
from kldcard.compare.stacks_plots import write_plots
from kldcard.errors import CaptureMismatch, UsageError

V, N = 300, 120


@pytest.fixture
def three_stacks(tmp_path):
    """Three stacks over identical tokens: an exact copy, a slightly perturbed one, and one whose
    top-1 token is forced to differ at positions 50-53 and 90."""
    rng = np.random.default_rng(11)
    tokens = rng.integers(0, V, N + 1).astype(np.int32)
    base = rng.standard_normal((N, V)).astype(np.float32) * 3
    perturbed = base + np.float32(0.05) * rng.standard_normal((N, V)).astype(np.float32)
    flipped = base.copy()
    top = base.argmax(axis=1)
    for i in (50, 51, 53, 90):
        flipped[i, (top[i] + 1) % V] = base[i].max() + 5
    paths = []
    for name, logits, fp, shard in (
        ("transformers", base, stack(CPU), 4096),
        ("llama", perturbed, stack(CPU, engine="llama.cpp", engine_version="0.3.16"), 32),
        ("mlx", flipped, stack(CPU, engine="mlx", engine_version="0.26.0"), 50),
    ):
        make_capture(tmp_path / name, logits, tokens, fp, shard_positions=shard)
        paths.append(tmp_path / name)
    return paths


@mpmath.workdps(30)
def _mp_kl(a: np.ndarray, b: np.ndarray) -> float:
    la = [mpmath.mpf(float(x)) for x in a]
    lb = [mpmath.mpf(float(x)) for x in b]
    za, zb = mpmath.log(sum(mpmath.exp(x) for x in la)), mpmath.log(sum(mpmath.exp(x) for x in lb))
    return float(sum(mpmath.exp(x - za) * ((x - za) - (y - zb)) for x, y in zip(la, lb)))


def test_pairwise_matrices_centroid_and_clusters(three_stacks):
    r = compare_stacks(three_stacks, gap=2)
    assert r.pairwise_kl_mean.shape == (3, 3)
    assert np.all(np.diag(r.pairwise_kl_mean) == 0)
    assert np.all(r.pairwise_kl_mean[~np.eye(3, dtype=bool)] > 0)
    # Stack 0 and 2 differ only at the five planted positions; their top-1 disagrees exactly there.
    pair02 = next(p for p in r.pairs if (p.a, p.b) == (0, 2))
    assert pair02.first_position == 50
    assert pair02.n_disagreements == 4
    assert pair02.clusters == [(50, 53, 3), (90, 90, 1)]
    assert r.top1_disagreement[0, 2] == pytest.approx(4 / N)
    # KL to the mean-probability centroid is bounded by log N for every position.
    assert np.all(r.kl_to_centroid >= 0) and np.all(r.kl_to_centroid <= np.log(3) + 1e-12)
    assert np.argmax(r.kl_to_centroid[:, 90]) == 2


def test_float64_values_match_an_mpmath_reference(three_stacks):
    from kldcard.capture.store import open_capture

    r = compare_stacks(three_stacks)
    z = [to_float64(open_capture(p).raw_rows(0, N)) for p in three_stacks]
    # Pairwise forward KL(P_0 ‖ P_1), token mean, against 30-digit arithmetic on two small captures
    # cut from the same logits (mpmath over the whole fixture would take seconds).
    small = []
    for k in (0, 1):
        make_capture(three_stacks[0].parent / f"small{k}", z[k][:12, :80].astype(np.float32),
                     open_capture(three_stacks[0]).token_ids[:13], stack(CPU, engine=f"e{k}"))
        small.append(three_stacks[0].parent / f"small{k}")
    rs = compare_stacks(small)
    mp_mean = sum(_mp_kl(z[0][i, :80], z[1][i, :80]) for i in range(12)) / 12
    assert rs.pairwise_kl_mean[0, 1] == pytest.approx(mp_mean, rel=1e-9)
    # KL(P_1 ‖ M) with M the mean of the three probability vectors, at a few positions.
    for i in (0, 50, 90):
        probs = [np.exp(x[i] - x[i].max()) / np.exp(x[i] - x[i].max()).sum() for x in z]
        m = sum(probs) / 3
        assert r.kl_to_centroid[1, i] == pytest.approx(float(np.sum(probs[1] * np.log(probs[1] / m))), rel=1e-9)


def test_identical_stacks_have_zero_divergence(tmp_path):
    rng = np.random.default_rng(3)
    tokens = rng.integers(0, 64, 21).astype(np.int32)
    z = rng.standard_normal((20, 64)).astype(np.float32)
    for name in ("a", "b"):
        make_capture(tmp_path / name, z, tokens, stack(CPU))
    r = compare_stacks([tmp_path / "a", tmp_path / "b"])
    assert np.all(r.pairwise_kl_mean == 0) and np.all(r.kl_to_centroid == 0)
    assert r.pairs[0].first_position is None and r.pairs[0].clusters == []
    assert r.to_dict()["portability"] == [{"a": 0, "b": 1, "differences": []}]


def test_report_states_units_direction_and_centroid(three_stacks):
    d = compare_stacks(three_stacks).to_dict()
    assert d["units"] == "nats"
    assert d["vocabulary"] == f"full ({V} tokens)"
    assert "KL(P_row ‖ P_col)" in d["pairwise_kl"]["direction"]
    assert d["centroid"]["kind"] == CENTROID == "mean-probability"
    assert "minimises" in d["centroid"]["why"]
    assert [e["differences"][0]["coordinate"] for e in d["portability"]] == ["engine", "engine", "engine"]
    json.dumps(d)  # JSON-serialisable


def test_mismatched_tokens_are_refused(tmp_path, three_stacks):
    rng = np.random.default_rng(5)
    make_capture(tmp_path / "other", rng.standard_normal((N, V)).astype(np.float32),
                 rng.integers(0, V, N + 1).astype(np.int32), stack(CPU))
    with pytest.raises(CaptureMismatch, match="token ids"):
        compare_stacks([three_stacks[0], tmp_path / "other"])
    with pytest.raises(UsageError):
        compare_stacks([three_stacks[0]])


def test_plots_are_png_files(tmp_path, three_stacks):
    files = write_plots(compare_stacks(three_stacks), tmp_path / "plots")
    assert sorted(f.name for f in files) == ["stacks-heatmap.png", "stacks-per-position.png"]
    for f in files:
        assert f.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert not [p for p in (tmp_path / "plots").iterdir() if p.name.startswith(".")]


def test_cli_writes_report_and_plots(tmp_path, three_stacks, capsys):
    out = tmp_path / "report.json"
    rc = main(["stacks", *map(str, three_stacks), "-o", str(out), "--plots", str(tmp_path / "plots"), "--gap", "2"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "nats" in text and "KL(P_row ‖ P_col)" in text and "mean-probability" in text
    assert "first at position 50" in text
    data = json.loads(out.read_text())
    assert data["top1_divergence"]["pairs"][1]["clusters"] == [[50, 53, 3], [90, 90, 1]]
    assert (tmp_path / "plots" / "stacks-heatmap.png").is_file()


def test_cli_bad_input_is_one_line_exit_2(tmp_path, three_stacks, capsys):
    rc = main(["stacks", str(three_stacks[0]), str(tmp_path / "missing")])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1 and err.startswith("kldcard: error:")


def test_masked_token_gives_infinite_pairwise_kl_but_finite_centroid_distance(tmp_path):
    rng = np.random.default_rng(9)
    tokens = rng.integers(0, 50, 11).astype(np.int32)
    z = rng.standard_normal((10, 50)).astype(np.float32)
    masked = z.copy()
    masked[4, 7] = -np.inf  # this stack can never emit token 7 at position 4
    make_capture(tmp_path / "a", z, tokens, stack(CPU))
    make_capture(tmp_path / "b", masked, tokens, stack(CPU, engine="other"))
    r = compare_stacks([tmp_path / "a", tmp_path / "b"])
    assert r.pairwise_kl_max[0, 1] == np.inf and np.isfinite(r.pairwise_kl_max[1, 0])
    assert np.all(np.isfinite(r.kl_to_centroid)) and r.kl_to_centroid[:, 4].max() <= np.log(2)
    d = r.to_dict()
    assert d["pairwise_kl"]["max"][0][1] == "inf"
    json.dumps(d, allow_nan=False)
    assert len(write_plots(r, tmp_path / "plots")) == 2


@pytest.mark.parametrize("value", [np.nan, np.inf])
def test_nan_or_inf_logits_are_a_one_line_error(tmp_path, capsys, value):
    rng = np.random.default_rng(9)
    tokens = rng.integers(0, 50, 11).astype(np.int32)
    z = rng.standard_normal((10, 50)).astype(np.float32)
    bad = z.copy()
    bad[6, 3] = value
    make_capture(tmp_path / "a", z, tokens, stack(CPU))
    make_capture(tmp_path / "b", bad, tokens, stack(CPU))
    assert main(["stacks", str(tmp_path / "a"), str(tmp_path / "b")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "NaN" in err and "6" in err


def test_result_does_not_depend_on_the_thread_count(three_stacks):
    one = compare_stacks(three_stacks, threads=1)
    three = compare_stacks(three_stacks, threads=3)
    assert np.array_equal(one.pairwise_kl, three.pairwise_kl)
    assert np.array_equal(one.pairwise_kl_mean, three.pairwise_kl_mean)
    assert np.array_equal(one.kl_to_centroid, three.kl_to_centroid)
    assert one.pairwise_kl.shape == (3, 3, N)
