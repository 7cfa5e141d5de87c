"""``kldcard compare`` checks a manifest's provenance against what it can recompute (issue 27): a
hand-edited text sha256, n_ctx, position scheme or quantization is one line, exit 2, and never
reaches the result."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from kldcard.cli.main import main
from kldcard.demo.runner import DEMO_TEXT


@pytest.fixture(scope="module")
def captures(tiny_qwen3, tmp_path_factory):
    """Real llama.cpp captures of the tiny model: F32 reference, Q8_0 candidate, every 4th position
    in windows of 64 tokens."""
    from kldcard.capture.run import run_capture

    tmp = tmp_path_factory.mktemp("prov")
    text = tmp / "text.txt"
    text.write_text(DEMO_TEXT, encoding="utf-8")
    for name, model in (("ref", tiny_qwen3["gguf_f32"]), ("q8", tiny_qwen3["gguf_q8_0"])):
        run_capture("llama.cpp", model, text, tmp / name, positions="every:4", n_ctx=64, progress=False)
    return tmp


def _edited(captures: Path, tmp: Path, name: str, edit) -> Path:
    """A copy of capture ``name`` (shards linked, not copied) with ``edit`` applied to its manifest."""
    out = tmp / name
    shutil.copytree(captures / name, out, copy_function=os.symlink)
    (out / "manifest.json").unlink()
    manifest = json.loads((captures / name / "manifest.json").read_text(encoding="utf-8"))
    edit(manifest)
    (out / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")
    return out


def _compare(ref: Path, cand: Path, out: Path, capsys, *extra: str) -> tuple[int, str]:
    code = main(["compare", str(ref), str(cand), "-o", str(out), "--bootstrap", "0", "--no-progress", *extra])
    return code, capsys.readouterr().err


def test_unedited_captures_compare_and_the_text_at_hand_matches(captures, tmp_path, capsys):
    code, err = _compare(captures / "ref", captures / "q8", tmp_path / "r.json", capsys,
                         "--text", str(captures / "text.txt"))
    assert code == 0, err
    result = json.loads((tmp_path / "r.json").read_text(encoding="utf-8"))
    assert result["reference"]["context"]["n_ctx"] == 64


def _set(path: str, value):
    def edit(m):
        node = m
        *head, last = path.split(".")
        for k in head:
            node = node[k]
        node[last] = value
    return edit


@pytest.mark.parametrize(
    ("role", "path", "value", "message"),
    [
        ("ref", "context.n_ctx", 128, "context"),
        ("q8", "context.n_ctx", 32, "context"),
        ("ref", "context.n_chunks", 1, "context"),
        ("ref", "positions.scheme", "all", "positions"),
        ("q8", "positions.every_n", 8, "positions"),
        ("ref", "text.sha256", "0" * 64, "text sha256"),
        ("q8", "model.quantization", "Q4_K_M", "quantization"),
    ],
)
def test_hand_edited_provenance_is_one_line_exit_2_and_no_result(captures, tmp_path, capsys, role, path, value,
                                                                  message):
    edited = _edited(captures, tmp_path, role, _set(path, value))
    ref, cand = (edited, captures / "q8") if role == "ref" else (captures / "ref", edited)
    out = tmp_path / "r.json"
    code, err = _compare(ref, cand, out, capsys)
    assert code == 2 and message in err and len(err.strip().splitlines()) == 1, err
    assert "Traceback" not in err and not out.exists()


def test_a_text_that_is_not_the_manifests_is_refused(captures, tmp_path, capsys):
    other = tmp_path / "other.txt"
    other.write_text(DEMO_TEXT + " ", encoding="utf-8")
    code, err = _compare(captures / "ref", captures / "q8", tmp_path / "r.json", capsys, "--text", str(other))
    assert code == 2 and "text sha256" in err and not (tmp_path / "r.json").exists()
