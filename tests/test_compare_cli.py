"""``kldcard compare`` and ``kldcard capture-import`` end to end, with exit codes."""

from __future__ import annotations

import json
import subprocess
import sys

import numpy as np
import pytest
from helpers_compare import capture_pair, logits_pair

from kldcard.cli.main import main
from kldcard.compare.run import CompareResult


@pytest.fixture
def caps(tmp_path):
    zr, zc = logits_pair(np.random.default_rng(8), 30, 400, 0.15)
    return capture_pair(tmp_path, zr, zc, dtype="bf16")


def test_compare_writes_result_and_prints_labelled_summary(caps, tmp_path, capsys):
    ref, cand = caps
    out = tmp_path / "result.json"
    rc = main(["compare", str(ref.path), str(cand.path), "-o", str(out), "--per-token", str(tmp_path / "t.csv"),
               "--bootstrap", "200", "--seed", "5", "--buckets", "width:10", "--threads", "2"])
    assert rc == 0
    text = capsys.readouterr().out
    assert "scored 30 positions (0..29), vocabulary 400 entries, float64, nats" in text
    assert "forward KL(P_ref || P_cand): mean" in text and "95% block-bootstrap CI" in text and "n_eff" in text
    assert "reverse KL(P_cand || P_ref)" in text and "Jensen-Shannon" in text and "top-1 agreement" in text
    result = CompareResult.model_validate_json(out.read_text())
    assert result.aggregation.bootstrap.seed == 5 and len(result.ranges) == 3
    assert result.per_token_file == str(tmp_path / "t.csv") and (tmp_path / "t.csv").is_file()
    assert not list(tmp_path.glob(".result.json.*"))


def test_mismatch_is_one_line_exit_2_and_leaves_existing_output(tmp_path, capsys):
    z, zc = logits_pair(np.random.default_rng(9), 5, 64, 0.1)
    ref, _ = capture_pair(tmp_path, z, zc, names=("r", "x"))
    padded = np.concatenate([zc, np.zeros((5, 4), np.float32)], axis=1)
    _, cand = capture_pair(tmp_path, z, padded, names=("y", "c"))
    out = tmp_path / "result.json"
    out.write_text("previous result\n")
    rc = main(["compare", str(ref.path), str(cand.path), "-o", str(out)])
    err = capsys.readouterr().err
    assert rc == 2 and err.count("\n") == 1
    assert err.startswith("kldcard: error: vocabulary sizes differ: reference 64 vs candidate 68")
    assert out.read_text() == "previous result\n"
    rc = main(["compare", str(ref.path), str(cand.path), "-o", str(out), "--align-vocab", "common-prefix",
               "--bootstrap", "0"])
    assert rc == 0 and json.loads(out.read_text())["vocabulary"]["alignment"] == "common-prefix"


@pytest.mark.parametrize(
    "extra, message",
    [
        (["--per-token", "x.parquet"], "--per-token file must end in .npz or .csv"),
        (["--bootstrap", "-1"], "--bootstrap must be 0 (SE only) or >= 2"),
        (["--level", "1.5"], "--level must lie strictly between 0 and 1"),
        (["--buckets", "5,1"], "bad bucket edges"),
    ],
)
def test_bad_options_exit_2(caps, tmp_path, capsys, extra, message):
    ref, cand = caps
    rc = main(["compare", str(ref.path), str(cand.path), "-o", str(tmp_path / "r.json"), *extra])
    assert rc == 2 and message in capsys.readouterr().err
    assert not (tmp_path / "r.json").exists()


def test_missing_and_corrupt_captures_exit_2(caps, tmp_path, capsys):
    ref, cand = caps
    assert main(["compare", str(ref.path), str(tmp_path / "nope"), "-o", str(tmp_path / "r.json")]) == 2
    assert "not a capture directory" in capsys.readouterr().err
    (cand.path / "tokens.safetensors").write_bytes(b"garbage")
    assert main(["compare", str(ref.path), str(cand.path), "-o", str(tmp_path / "r.json")]) == 2
    assert "manifest says" in capsys.readouterr().err


def test_real_entry_point_subprocess(caps, tmp_path):
    ref, cand = caps
    out = tmp_path / "r.json"
    proc = subprocess.run([sys.executable, "-m", "kldcard", "compare", str(ref.path), str(cand.path), "-o", str(out),
                           "--bootstrap", "0"], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stderr
    assert "nats" in proc.stdout and proc.stderr == ""  # no progress bar when stderr is not a terminal
    assert json.loads(out.read_text())["direction"]["forward"] == "KL(P_ref || P_cand)"


def test_capture_import_npy_and_compare(tmp_path, capsys):
    zr, zc = logits_pair(np.random.default_rng(10), 12, 90, 0.1)
    np.save(tmp_path / "ref.npy", zr)
    np.save(tmp_path / "cand.npy", zc.astype(np.float64))
    np.save(tmp_path / "ids.npy", np.arange(40))
    (tmp_path / "ids.txt").write_text(" ".join(str(i) for i in range(40)))
    assert main(["capture-import", "--logits", str(tmp_path / "ref.npy"), "--tokens", str(tmp_path / "ids.npy"),
                 "--positions", "every:3@1", "--out", str(tmp_path / "r"), "--dtype", "f32"]) == 0
    assert main(["capture-import", "--logits", str(tmp_path / "cand.npy"), "--tokens", str(tmp_path / "ids.txt"),
                 "--positions", "every:3@1", "--out", str(tmp_path / "c"), "--dtype", "f32"]) == 0
    assert "12 positions x 90 vocabulary (f32) of 40 tokens" in capsys.readouterr().out
    from kldcard.capture.store import open_capture

    r = open_capture(tmp_path / "r")
    np.testing.assert_array_equal(r.positions, 1 + 3 * np.arange(12))
    np.testing.assert_array_equal(r.logits_f32(0, 12), zr)
    assert r.manifest.positions.scheme == "every-n" and r.manifest.positions.every_n == 3
    assert main(["compare", str(tmp_path / "r"), str(tmp_path / "c"), "-o", str(tmp_path / "res.json"),
                 "--bootstrap", "0"]) == 0


def test_capture_import_bf16_safetensors_is_bit_exact(tmp_path):
    import torch
    from safetensors.torch import save_file

    z = torch.randn(5, 33) * 4
    save_file({"logits": z.bfloat16(), "extra": torch.zeros(2)}, str(tmp_path / "l.safetensors"))
    save_file({"token_ids": torch.arange(6, dtype=torch.int32)}, str(tmp_path / "t.safetensors"))
    assert main(["capture-import", "--logits", str(tmp_path / "l.safetensors"), "--tokens",
                 str(tmp_path / "t.safetensors"), "--out", str(tmp_path / "c")]) == 0
    from kldcard.capture.store import open_capture

    cap = open_capture(tmp_path / "c")
    np.testing.assert_array_equal(cap.logits_f32(0, 5), z.bfloat16().float().numpy())


@pytest.mark.parametrize(
    "args, message",
    [
        (["--positions", "list:1,2"], "2 positions given for 4 logits rows"),
        (["--positions", "every:0"], "bad positions"),
        (["--tokens", "missing.npy"], "no such token-ids file"),
    ],
)
def test_capture_import_errors_exit_2(tmp_path, capsys, monkeypatch, args, message):
    monkeypatch.chdir(tmp_path)
    np.save("l.npy", np.zeros((4, 8), np.float32))
    np.save("ids.npy", np.arange(6))
    base = {"--logits": "l.npy", "--tokens": "ids.npy", "--out": "c"}
    for k, v in zip(args[::2], args[1::2]):
        base[k] = v
    argv = ["capture-import"] + [x for kv in base.items() for x in kv]
    assert main(argv) == 2
    assert message in capsys.readouterr().err
    assert not (tmp_path / "c").exists()
