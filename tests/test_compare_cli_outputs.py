"""Paths that cannot be written or read: one line and exit 2, checked before computing where possible,
and the matrix command's --percentiles (shared with ``kldcard compare``)."""

from __future__ import annotations

import json

import numpy as np
import pytest
from helpers_compare import capture_pair, logits_pair

from kldcard.cli.main import main


@pytest.fixture
def caps(tmp_path):
    zr, zc = logits_pair(np.random.default_rng(3), 12, 64, 0.2)
    return capture_pair(tmp_path, zr, zc, dtype="f32")


@pytest.mark.parametrize("command", ["compare", "matrix", "stacks"])
def test_output_that_is_a_directory_is_refused_before_computing(caps, tmp_path, capsys, command):
    ref, cand = caps
    (tmp_path / "out").mkdir()
    argv = {
        "compare": ["compare", str(ref.path), str(cand.path)],
        "matrix": ["matrix", "--reference", str(ref.path), "--candidate", str(cand.path)],
        "stacks": ["stacks", str(ref.path), str(cand.path)],
    }[command]
    assert main([*argv, "-o", str(tmp_path / "out")]) == 2
    captured = capsys.readouterr()
    assert "is a directory" in captured.err and "Traceback" not in captured.err
    assert "nats" not in captured.out  # refused before any comparison was printed


def test_parent_that_is_a_file_and_unwritable_target_exit_2(caps, tmp_path, capsys):
    ref, cand = caps
    (tmp_path / "afile").write_text("x")
    assert main(["compare", str(ref.path), str(cand.path), "-o", str(tmp_path / "afile" / "r.json")]) == 2
    assert "is a file, not a directory" in capsys.readouterr().err
    # a target that fails only while writing (here: --plots names an existing file)
    assert main(["stacks", str(ref.path), str(cand.path), "--plots", str(tmp_path / "afile")]) == 2
    assert "give a directory" in capsys.readouterr().err
    assert (tmp_path / "afile").read_text() == "x"


def test_matrix_percentiles_reach_the_results(caps, tmp_path):
    ref, cand = caps
    out = tmp_path / "t.json"
    assert main(["matrix", "--reference", str(ref.path), "--candidate", str(cand.path), "-o", str(out),
                 "--results-dir", str(tmp_path / "res"), "--percentiles", "50,99", "--bootstrap", "0",
                 "--no-progress"]) == 0
    (res,) = (tmp_path / "res").glob("*.json")
    data = json.loads(res.read_text())
    assert data["aggregation"]["percentiles"] == [50.0, 99.0]
    assert set(data["forward_kl"]["percentiles"]) == {"50", "99"}


def test_capture_import_missing_text_is_one_line(tmp_path, capsys):
    np.save(tmp_path / "l.npy", np.zeros((3, 8), dtype=np.float32))
    np.save(tmp_path / "ids.npy", np.arange(4))
    argv = ["capture-import", "--logits", str(tmp_path / "l.npy"), "--tokens", str(tmp_path / "ids.npy"),
            "--out", str(tmp_path / "cap"), "--text"]
    assert main([*argv, str(tmp_path / "nope.txt")]) == 2
    assert "text file" in capsys.readouterr().err and not (tmp_path / "cap").exists()
    (tmp_path / "t.txt").write_bytes(b"abc")
    assert main([*argv, str(tmp_path / "t.txt")]) == 0
    text = json.loads((tmp_path / "cap" / "manifest.json").read_text())["text"]
    assert text["n_bytes"] == 3 and text["name"] == "t.txt"


def test_output_with_llama_base_is_refused_not_ignored(tmp_path, capsys):
    argv = ["compare", "--reference-llama-base", str(tmp_path / "base.kld"), str(tmp_path / "cand"),
            "-o", str(tmp_path / "r.json")]
    assert main(argv) == 2
    assert "not used with --reference-llama-base" in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()
