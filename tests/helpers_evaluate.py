"""A `kldcard evaluate` project file over the tiny models, for the evaluate tests."""

from __future__ import annotations

from pathlib import Path

import yaml

from kldcard.demo.runner import DEMO_TEXT


def write_project(tmp: Path, models: dict, candidates: list[dict], **extra) -> Path:
    """``tmp/project.yaml``: the F32 GGUF as reference, ``candidates``, the demo text (written next to it),
    every position, a card at ``card/README.md``; ``extra`` keys override or add."""
    (tmp / "text.txt").write_text(DEMO_TEXT, encoding="utf-8")
    data = {
        "reference": {"engine": "llama.cpp", "model": str(models["gguf_f32"])},
        "candidates": candidates,
        "text": {"path": "text.txt", "name": "kldcard demo text", "source": {"url": "https://example.org/demo-text"}},
        "positions": "all",
        "disclosures": {"reference": {"model": "tiny-qwen3-f32.gguf"}, "calibration": {"none": True}},
        "card": "card/README.md",
        **extra,
    }
    path = tmp / "project.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path
