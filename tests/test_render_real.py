"""Render from real captures: tiny models, llama.cpp captures, float64 compare, card, lint.

This runs ``kldcard demo``'s steps on the session's tiny Qwen3 models (tests/conftest.py), so it is
also the demo's end-to-end test: a card rendered from real results lints with zero findings,
huggingface_hub parses it with float KLD values, and a rerun through the CLI is byte-identical.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from huggingface_hub import ModelCard

from kldcard.cli.main import main
from kldcard.compare.run import CompareResult
from kldcard.demo.steps import run_demo
from kldcard.errors import InputError
from kldcard.lint.runner import lint_card
from kldcard.render.disclosures import Disclosures
from kldcard.render.evaluation import evaluation_from_results

pytestmark = pytest.mark.engines


@pytest.fixture(scope="module")
def demo(tiny_qwen3: dict, tmp_path_factory: pytest.TempPathFactory):
    lines: list[str] = []
    result = run_demo(tmp_path_factory.mktemp("demo"), say=lines.append, models=tiny_qwen3)
    return result, lines


def test_demo_renders_a_card_that_lints_clean(demo) -> None:
    result, lines = demo
    assert [s.status for s in result.steps] == ["ok"] * 7, lines
    assert result.ok and result.findings == 0
    assert lint_card(result.card).findings == []
    headings = [ln.strip() for ln in lines if ln.strip().startswith("== Step")]
    assert len(headings) == 7 and headings[-1] == "== Step 7/7: Lint the card =="
    assert f"Your card: {result.card}" in lines and "Lint findings: 0" in lines
    assert result.plot is not None and result.plot.read_bytes()[:4] == b"\x89PNG"


def test_demo_card_shows_block_intervals_a_paired_ranking_and_confidence_buckets(demo) -> None:
    result, _ = demo
    body = result.card.read_text(encoding="utf-8")
    assert "block-bootstrap interval" in body and "Effective n of scored positions" in body
    assert "#### Paired ranking" in body and "| tiny-qwen3-q4_k_m − tiny-qwen3-q8_0 |" in body
    assert "Two candidates are not distinguishable on this text when the 95% interval" in body
    assert "#### By reference confidence" in body and "| [0.95, 1] |" in body
    assert "Label in top-k" in body
    block = yaml.safe_load(body.split("---\n")[1])["kld_evaluation"]
    assert block["aggregation"]["uncertainty"]["method"] == "block-bootstrap"  # one context window
    assert [r["name"] for r in block["comparison"]["ranking"]] == ["tiny-qwen3-q8_0", "tiny-qwen3-q4_k_m"]
    assert block["candidates"][0]["results"]["kld"]["n_eff"] > 0


def test_hub_parses_the_real_card_with_float_values(demo) -> None:
    result, _ = demo
    card = ModelCard(result.card.read_text(encoding="utf-8"))
    kld = [r for r in card.data.eval_results if r.metric_type == "kl_divergence"]
    assert len(kld) == 2 and all(type(r.metric_value) is float for r in card.data.eval_results)
    block = card.data.to_dict()["kld_evaluation"]
    means = [c["results"]["kld"]["mean"] for c in block["candidates"]]
    # Q4_K_M is further from the F32 reference than Q8_0, and both are measurably above zero.
    assert 0 < means[0] < means[1]
    # The value in model-index is the body's number, rounded, not a different measurement.
    for r, mean in zip(kld, means):
        assert abs(r.metric_value - mean) <= 5e-7 + 5e-4 * mean
    body = result.card.read_text(encoding="utf-8")
    assert "](kld_per_position.png)" in body and "## Evaluation" in body
    assert body.startswith("---\ntags: [gguf, quantized, kldcard-demo]  # your own metadata stays as it is\n")


def test_cli_rerender_from_result_files_is_a_no_op(demo, capsys: pytest.CaptureFixture[str]) -> None:
    result, _ = demo
    out = result.out_dir
    results = [str(out / "results" / "candidate-q8_0.json"), str(out / "results" / "candidate-q4_k_m.json"),
               str(out / "ranking.json")]  # the paired ranking the demo wrote
    args = ["render", *results, "--disclosures", str(out / "disclosures.yaml"), "--card", str(result.card),
            "--model-name", "tiny-qwen3-GGUF", "--no-base-model", "--plot", str(result.plot), "--compact"]
    before = result.card.read_bytes()
    assert main([*args, "--check"]) == 0, capsys.readouterr()
    assert main([*args, "--write"]) == 0
    assert result.card.read_bytes() == before


def test_missing_disclosures_are_listed_in_one_error(demo) -> None:
    result, _ = demo
    res = [CompareResult.model_validate(json.loads(p.read_text())) for p in sorted((result.out_dir / "results").glob("*.json"))]
    with pytest.raises(InputError) as err:
        evaluation_from_results(res, overrides=Disclosures())
    msg = str(err.value)
    for key in ("reference.model", "evaluation_text.source", "candidates.tiny-qwen3-q8_0.calibration",
                "candidates.tiny-qwen3-q4_k_m.calibration", "--disclosures FILE"):
        assert key in msg
    disc = yaml.safe_load((result.out_dir / "disclosures.yaml").read_text())
    disc["candidates"] = {"no-such-candidate": {"calibration": {"none": True}}}
    with pytest.raises(InputError, match="no-such-candidate"):
        evaluation_from_results(res, overrides=Disclosures.model_validate(disc))


def test_plot_is_not_written_when_the_card_cannot_be_spliced(demo, tmp_path: Path, capsys) -> None:
    result, _ = demo
    out = result.out_dir
    card = tmp_path / "README.md"
    card.write_text("# x\n\n<!-- kldcard:end -->\n<!-- kldcard:start schema=1 -->\n", encoding="utf-8")
    before = card.read_bytes()
    png = tmp_path / "kld.png"
    results = [str(out / "results" / "candidate-q8_0.json"), str(out / "results" / "candidate-q4_k_m.json")]
    code = main(["render", *results, "--disclosures", str(out / "disclosures.yaml"), "--card", str(card),
                 "--plot", str(png), "--write"])
    assert code == 2 and "markers must appear once each" in capsys.readouterr().err
    assert not png.exists() and card.read_bytes() == before
