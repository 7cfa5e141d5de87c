"""Many stacks on real captures: transformers, llama.cpp and MLX on the same tiny Qwen3 weights.

Done-when of the stacks issue: the multi-stack report runs on captures from the three engines of the
test models. KL values are forward KL(P_row ‖ P_col) in nats over the full 151,936-token vocabulary at
every 8th position of a 272-token text.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kldcard.capture.run import capture
from kldcard.cli.main import main
from kldcard.compare.stacks import compare_stacks

pytestmark = pytest.mark.engines

COMMON = {"positions": "every:8@1", "prefill_chunk": 64, "progress": False}


@pytest.fixture(scope="module")
def three_engines(tiny_qwen3: dict, engines_text: Path, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    out = tmp_path_factory.mktemp("stacks")
    runs = (
        ("transformers", "transformers", tiny_qwen3["hf"], {"dtype": "f32"}),
        ("llama.cpp", "llama.cpp", tiny_qwen3["gguf_f32"], {}),
        ("mlx", "mlx", tiny_qwen3["hf"], {}),
    )
    paths = []
    for name, engine, model, extra in runs:
        capture(engine, model, engines_text, out / name, **COMMON, **extra)
        paths.append(out / name)
    return paths


def test_report_on_three_engines(three_engines):
    r = compare_stacks(three_engines)
    assert r.n_vocab == 151_936 and r.positions.size == 34
    off = ~np.eye(3, dtype=bool)
    assert np.all(np.isfinite(r.pairwise_kl_mean)) and np.all(r.pairwise_kl_mean[off] > 0)
    # Same weights: transformers F32 and llama.cpp F32 are far closer than either is to MLX BF16.
    assert r.pairwise_kl_mean[0, 1] < r.pairwise_kl_mean[0, 2]
    assert r.pairwise_kl_mean[0, 1] < r.pairwise_kl_mean[1, 2]
    assert np.argmax(r.kl_to_centroid_mean) == 2
    assert np.all(r.kl_to_centroid_mean < 1e-2)
    # Every pair runs on a different engine: each portability entry names it.
    d = r.to_dict()
    for entry in d["portability"]:
        assert "engine" in [x["coordinate"] for x in entry["differences"]]


def test_cli_on_three_engines(three_engines, tmp_path, capsys):
    out = tmp_path / "stacks.json"
    rc = main(["stacks", *map(str, three_engines), "-o", str(out), "--plots", str(tmp_path / "plots")])
    assert rc == 0
    text = capsys.readouterr().out
    assert "3 stacks, 34 positions, full vocabulary (151936); values in nats" in text
    data = json.loads(out.read_text())
    assert data["centroid"]["kind"] == "mean-probability"
    assert [s["stack"]["engine"] for s in data["stacks"]] == ["transformers", "llama.cpp", "mlx"]
    for name in ("stacks-heatmap.png", "stacks-per-position.png"):
        assert (tmp_path / "plots" / name).read_bytes()[:4] == b"\x89PNG"
