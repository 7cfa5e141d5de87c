"""kldcard evaluate over a long window: the card gets the depth table with intervals, the onset
sentence and the clusters, the depth plot, and lints clean; older results render as before."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from kldcard.evaluate import evaluate, load_project
from kldcard.render.depth import LONG_CONTEXT

V1 = Path(__file__).parent / "data" / "compare_v1"


@pytest.fixture(scope="module")
def long_card(tiny_qwen3, engines_text, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("long")
    (tmp / "text.txt").write_text((engines_text.read_text(encoding="utf-8") + "\n") * 9, encoding="utf-8")
    data = {
        "reference": {"engine": "llama.cpp", "model": str(tiny_qwen3["gguf_f32"])},
        "candidates": [{"name": "tiny-qwen3-q4_k_m", "engine": "llama.cpp", "model": str(tiny_qwen3["gguf_q4"])}],
        "text": {"path": "text.txt", "name": "lighthouse x9", "source": {"url": "https://example.org/lighthouse"}},
        "positions": "every:8",  # one window of ~2,450 tokens: long context, ~300 depth points
        "disclosures": {"reference": {"model": "tiny-qwen3-f32.gguf"}, "calibration": {"none": True}},
        "card": "card/README.md",
        "plot": "card/kld.png",
    }
    (tmp / "project.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    out = evaluate(load_project(tmp / "project.yaml"), say=lambda s: None)
    return tmp, out


def test_long_context_card_has_depth_table_with_intervals_onset_and_clusters(long_card):
    tmp, out = long_card
    assert out.findings == 0
    card = (tmp / "card" / "README.md").read_text(encoding="utf-8")
    assert "#### Where divergence lives" in card
    assert "| Interval | Effective n |" in card  # the output-range table carries them
    assert ("agrees with the reference up to about" in card) or ("no onset of disagreement" in card)
    assert "cluster(s) hold" in card and "Late − early (nats)" in card
    result = json.loads(out.candidates[0].result_path.read_text(encoding="utf-8"))
    depth = result["depth"]
    assert depth["max_depth"] + 1 >= LONG_CONTEXT and depth["onset"]["false_alarm_rate"] == 0.05
    assert all(r["forward_kl"]["ci_low"] is not None for r in result["ranges"] if r["n"] > 2)
    png = tmp / "card" / "kld.png"
    assert png.is_file() and png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_older_results_render_without_the_new_fields():
    from kldcard.render.disclosures import Disclosures
    from kldcard.render.evaluation import evaluation_from_result_files, load_result
    from kldcard.render.section import render_section

    paths = sorted(str(p) for p in V1.glob("candidate-*.json"))
    disc = Disclosures.model_validate(yaml.safe_load((V1 / "disclosures.yaml").read_text()))
    assert all(load_result(p).depth is None for p in paths)
    text = render_section(evaluation_from_result_files(paths, [json.loads(Path(p).read_text()) for p in paths], disc))
    assert "Where divergence lives" not in text and "| Interval | Effective n |" not in text
    assert "#### By output range" in text


def test_render_cli_draws_the_depth_plot_for_long_windows(long_card, tmp_path, capsys):
    from kldcard.cli.main import main

    _, out = long_card
    disc = tmp_path / "disclosures.yaml"
    disc.write_text(yaml.safe_dump({"reference": {"model": "tiny-qwen3-f32.gguf"}, "calibration": {"none": True},
                                    "evaluation_text": {"source": {"url": "https://example.org/lighthouse"}}}))
    png = tmp_path / "depth.png"
    code = main(["render", str(out.candidates[0].result_path), "--disclosures", str(disc), "--plot", str(png)])
    text = capsys.readouterr().out
    assert code == 0 and png.read_bytes()[:4] == b"\x89PNG"
    assert "over depth, windows overlaid" in text and "#### Where divergence lives" in text
