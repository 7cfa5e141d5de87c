"""The demo on the tiny model that predicts its text: realistic figures (the targets of issue 26), the
size chart, the Pareto column, a clean lint, and llama.cpp's 16-nat base-file floor dropping real
vocabulary entries. One demo run (about a minute on 2 cores) serves every test here."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kldcard.compare.result import CompareResult
from kldcard.demo.steps import run_demo


@pytest.fixture(scope="module")
def demo(tiny_qwen3_lm, tmp_path_factory):
    out = tmp_path_factory.mktemp("demo")
    lines: list[str] = []
    result = run_demo(out, say=lines.append, models=tiny_qwen3_lm)
    results = {p.stem.removeprefix("candidate-"): CompareResult.model_validate_json(p.read_text(encoding="utf-8"))
               for p in (out / "results").glob("candidate-*.json")}
    return out, result, results, "\n".join(lines)


def _share_confident(r: CompareResult, at_least: float) -> float:
    n = sum(b.n for b in r.confidence)
    return sum(b.n for b in r.confidence if b.low >= at_least) / n


def test_reference_predicts_its_text(demo) -> None:
    _, _, results, _ = demo
    r = results["q4_k_m"]
    assert r.positions.n_scored >= 300
    assert _share_confident(r, 0.5) >= 0.30  # top-1 probability >= 0.5 on at least 30% of positions
    top5 = next(t for t in r.label_in_top_k if t.k == 5)
    assert top5.reference >= 0.30  # the actual next token in the reference's top 5
    assert all(b.n > 0 for b in r.confidence)  # every confidence bucket has positions


def test_quantizations_diverge_as_real_ones_do(demo) -> None:
    _, _, results, _ = demo
    q8, q4 = results["q8_0"], results["q4_k_m"]
    assert q8.forward_kl.mean < 0.01
    assert 0.01 < q4.forward_kl.mean < 0.2
    assert 0.80 <= q4.top1_agreement <= 0.99
    assert q8.top1_agreement > q4.top1_agreement


def test_sizes_reach_the_result_the_sidecar_and_the_card(demo) -> None:
    out, result, results, _ = demo
    for name, r in results.items():
        size = r.candidate.model.size
        assert size is not None and size.source == "gguf tensor table"
        assert size.bytes == Path(r.candidate.model.path).stat().st_size
    assert results["q4_k_m"].candidate.model.size.bits_per_weight < results["q8_0"].candidate.model.size.bits_per_weight
    sidecar = json.loads((out / "card" / "kld_evaluation.json").read_text(encoding="utf-8"))
    assert all(c["model"]["size"]["bits_per_weight"] > 0 for c in sidecar["kld_evaluation"]["candidates"])
    card = result.card.read_text(encoding="utf-8")
    assert "| Candidate | Quantization | Bits per weight | File size | Mean KLD | p99 KLD | Pareto |" in card
    assert "![Mean forward KL(P_ref ‖ P_cand) in nats with its interval, and p99, against bits per weight" in card
    assert (out / "card" / "kld_vs_size.png").read_bytes()[:4] == b"\x89PNG"
    assert "<svg" in (out / "card" / "kld_vs_size.svg").read_text(encoding="utf-8")
    assert card.index("#### Summary") < card.index("| # | Disclosure | Value |")
    badge = json.loads((out / "card" / "kld_badge.json").read_text(encoding="utf-8"))
    assert badge["schemaVersion"] == 1 and badge["message"].endswith("nats [" + badge["message"].split("[")[1])


def test_the_demo_card_lints_clean_and_no_count_exceeds_n(demo) -> None:
    _, result, _, log = demo
    assert result.ok and result.findings == 0
    card = result.card.read_text(encoding="utf-8")
    import re

    for a, n in re.findall(r"(\d[\d,]*) of (\d[\d,]*)", card):
        assert int(a.replace(",", "")) <= int(n.replace(",", "")), f"{a} of {n}"
    assert "Lint findings: 0" in log


def test_the_16_nat_floor_drops_real_vocabulary_entries(demo) -> None:
    from kldcard.capture.store import open_capture
    from kldcard.llamacpp.basefile import MAINLINE_FLOOR_NATS, encode_records, split_records
    from kldcard.llamacpp.floor import measure_format_floor
    from kldcard.render.section import BASE_FILE_SELF_KL

    out, _, _, _ = demo
    ref = open_capture(next((out / ".kldcard-cache" / "reference").iterdir()), verify=False)
    z = ref.logits_f32(0, 64)
    _, _, codes = split_records(encode_records(z), z.shape[1])
    dropped = (codes == 0).sum(axis=1)
    assert (dropped > 0).mean() >= 0.5  # most positions lose part of the vocabulary to the floor
    assert 1_000 < dropped.mean() < z.shape[1]
    floor = measure_format_floor(z, floor_nats=MAINLINE_FLOOR_NATS).summary()
    masked = floor["float64_full_vocab_masked_floor"]["mean"]
    # the card's caveat quotes this model's figure (all 330 positions); these 64 agree within 2x
    assert BASE_FILE_SELF_KL[16.0] / 2 < masked < BASE_FILE_SELF_KL[16.0] * 2
    assert np.isfinite(masked)


def test_the_ranking_carries_sizes_and_standings(demo) -> None:
    from kldcard.compare.rank import RankResult

    out, _, results, log = demo
    ranking = RankResult.model_validate_json((out / "ranking.json").read_text(encoding="utf-8"))
    by = {r.name: r for r in ranking.ranking}
    for name, r in by.items():
        size = results[name.removeprefix("tiny-qwen3-")].candidate.model.size
        assert (r.bits_per_weight, r.bytes) == (size.bits_per_weight, size.bytes)
    # Q4_K_M is smaller, Q8_0 distinguishably closer: both on the front, neither dominated
    assert {r.pareto for r in by.values()} == {"front"}
    assert "on the size/KLD Pareto front (bits per weight vs mean KLD)" in log
