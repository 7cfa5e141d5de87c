"""Paired ranking, control excess, confidence buckets and label-in-top-k: from real captures
through ``kldcard compare`` / ``kldcard rank`` to the rendered card, and format_version 1 results
(written by kldcard before block uncertainty) still rendering."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from helpers_compare import META, logits_pair
from helpers_render import make_evaluation

from kldcard.capture.store import create_capture_from_arrays
from kldcard.cli.main import main
from kldcard.compare.divergence import divergence_logits
from kldcard.compare.rank import RankResult
from kldcard.compare.run import compare
from kldcard.lint.consistency import check_uncertainty
from kldcard.render.disclosures import Disclosures
from kldcard.render.evaluation import evaluation_from_result_files, load_result
from kldcard.render.section import render_section

V1 = Path(__file__).parent / "data" / "compare_v1"


def _captures(tmp: Path, n_windows: int, window: int = 16, v: int = 64):
    """A reference and three candidates over ``n_windows`` context windows: two with the same noise
    level (not distinguishable), one much noisier."""
    rng = np.random.default_rng(0)
    n = n_windows * window
    z, _ = logits_pair(rng, n, v, 0.0)
    pos = np.arange(n)
    ids = np.arange(n + 1) % v
    meta = {**META, "context": {"n_ctx": window, "n_chunks": n_windows, "stride": window, "prefill_chunk": window}}
    ref = create_capture_from_arrays(tmp / "ref", z, pos, ids, {**meta, "model": {"name": "ref"}}, dtype="f32")
    cands = {}
    for name, sigma, seed in (("q8a", 0.05, 1), ("q8b", 0.05, 2), ("q2", 0.6, 3)):
        zc = (z + np.random.default_rng(seed).normal(size=z.shape) * sigma).astype(np.float32)
        cands[name] = create_capture_from_arrays(tmp / name, zc, pos, ids, {**meta, "model": {"name": name}},
                                                 dtype="f32")
    return ref, cands


def test_rank_cli_marks_indistinguishable_candidates_and_the_control_excess(tmp_path, capsys):
    ref, cands = _captures(tmp_path, 24)
    paths = []
    for name, cap in cands.items():
        out = tmp_path / f"{name}.json"
        assert main(["compare", str(ref.path), str(cap.path), "-o", str(out), "--per-token",
                     str(tmp_path / f"{name}.npz"), "--bootstrap", "400", "--no-progress"]) == 0
        paths.append(str(out))
    res = load_result(paths[0])
    assert res.aggregation.uncertainty_method == "window-bootstrap" and res.aggregation.n_windows == 24
    assert res.forward_kl.n_blocks == 24 and res.forward_kl.n_eff is not None
    capsys.readouterr()
    rank_json = tmp_path / "ranking.json"
    assert main(["rank", *paths, "--control", "q8a", "--bootstrap", "400", "-o", str(rank_json)]) == 0
    text = capsys.readouterr().out
    assert "not distinguishable from" in text and "excess of q2 over control q8a" in text
    r = RankResult.model_validate_json(rank_json.read_text())
    assert [c.name for c in r.ranking][-1] == "q2"
    by = {c.name: c for c in r.ranking}
    assert by["q8a"].group == by["q8b"].group != by["q2"].group
    assert by["q8a"].not_distinguishable_from == ["q8b"]
    excess = {e.candidate: e for e in r.excess_over_control}
    assert excess["q2"].ci_low > 0 and excess["q8b"].ci_low < 0 < excess["q8b"].ci_high
    # the card: the ranking, what "not distinguishable" means, the control's caveat
    ev = make_evaluation()
    ev = ev.model_copy(update={"comparison": r.to_card_comparison()})
    section = render_section(ev)
    assert "#### Paired ranking" in section and "not distinguishable on this text when" in section
    assert "it can be negative, and it is valid only on the control's stack" in section
    assert "| q2 − q8a |" in section or "| q2 − q8b |" in section


def test_rank_refuses_a_control_that_is_not_a_candidate(tmp_path, capsys):
    ref, cands = _captures(tmp_path, 4)
    paths = []
    for name in ("q8a", "q2"):
        out = tmp_path / f"{name}.json"
        assert main(["compare", str(ref.path), str(cands[name].path), "-o", str(out), "--per-token",
                     str(tmp_path / f"{name}.npz"), "--no-progress"]) == 0
        paths.append(str(out))
    assert main(["rank", *paths, "--control", "bf16", "-o", str(tmp_path / "r.json")]) == 2
    assert "--control 'bf16' is not one of the candidates" in capsys.readouterr().err
    # 4 windows are too few to resample whole windows: moving blocks over the positions instead
    assert load_result(paths[0]).aggregation.uncertainty_method == "block-bootstrap"


def test_iid_method_stays_available_by_name(tmp_path):
    ref, cands = _captures(tmp_path, 24)
    res = compare(ref, cands["q2"], bootstrap=200, uncertainty="iid")
    assert res.aggregation.uncertainty_method == "bootstrap" and res.forward_kl.n_eff is None
    assert res.forward_kl.ci_low < res.forward_kl.mean < res.forward_kl.ci_high


def test_kernel_reports_reference_confidence_and_label_ranks():
    rng = np.random.default_rng(5)
    z, zc = logits_pair(rng, 50, 200, 0.3, dtype=np.float64)
    z[-1, 7] = -np.inf  # a masked entry: the robust path must fill the same columns
    targets = rng.integers(0, 200, 50)
    td = divergence_logits(z, zc, next_token=targets)
    zf = np.where(np.isinf(z), -np.inf, z)
    p = np.exp(zf - zf.max(axis=1, keepdims=True))
    np.testing.assert_allclose(td.p_top_ref, 1.0 / p.sum(axis=1), rtol=1e-12)
    want_r = (z > z[np.arange(50), targets][:, None]).sum(axis=1)
    want_c = (zc > zc[np.arange(50), targets][:, None]).sum(axis=1)
    assert list(td.rank_ref) == list(want_r) and list(td.rank_cand) == list(want_c)


def test_confidence_buckets_and_top_k_reach_the_card(tmp_path):
    ref, cands = _captures(tmp_path, 4)
    res = compare(ref, cands["q2"], bootstrap=100)
    assert [(b.low, b.high) for b in res.confidence] == [(0.0, 0.25), (0.25, 0.5), (0.5, 0.75), (0.75, 0.95),
                                                          (0.95, 1.0)]
    assert sum(b.n for b in res.confidence) == res.positions.n_scored
    ks = res.label_in_top_k
    assert [t.k for t in ks] == [1, 2, 3, 4, 5]
    assert all(a.reference <= b.reference and a.candidate <= b.candidate for a, b in zip(ks, ks[1:]))
    card = res.to_card_results()
    assert len(card.confidence) == 5 and card.label_in_top_k[0].k == 1


def test_format_version_1_results_still_render():
    paths = sorted(str(p) for p in V1.glob("candidate-*.json"))
    datas = [json.loads(Path(p).read_text()) for p in paths]
    assert {d["format_version"] for d in datas} == {1} and "confidence" not in datas[0]
    disc = Disclosures.model_validate(yaml.safe_load((V1 / "disclosures.yaml").read_text()))
    ev = evaluation_from_result_files(paths, datas, disc)
    assert ev.aggregation.uncertainty.method == "bootstrap"  # version 1: the per-token bootstrap
    assert ev.aggregation.uncertainty.interval == "percentile"
    section = render_section(ev)
    assert "bootstrap interval over individual tokens, assumed independent" in section
    assert "#### Paired ranking" not in section and "#### By reference confidence" not in section


@pytest.mark.parametrize(("method", "n_chunks", "found"), [("bootstrap", 40, True), ("se-iid", 2, True),
                                                           ("window-bootstrap", 40, False), ("bootstrap", 1, False)])
def test_kld209_iid_interval_over_chunks(method, n_chunks, found):
    raw = {"aggregation": {"uncertainty": {"method": method}}, "context": {"n_chunks": n_chunks}}
    assert bool([f for f in check_uncertainty(raw) if f[0] == "KLD209"]) is found
