"""``kldcard capture`` and ``kldcard stack`` on the command line: outputs, errors, interruption."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from kldcard.capture.store import open_capture
from kldcard.cli.main import main
from kldcard.errors import InputError

pytestmark = pytest.mark.engines

REPO = Path(__file__).resolve().parent.parent


def cli(*argv: str) -> int:
    return main([str(a) for a in argv])


def subprocess_cli(*argv: str, block: str | None = None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Run ``kldcard`` in a fresh interpreter; ``block`` makes one module unimportable there."""
    pre = f"import sys; sys.modules[{block!r}] = None; " if block else "import sys; "
    code = pre + "from kldcard.cli.main import main; sys.exit(main(sys.argv[1:]))"
    return subprocess.run([sys.executable, "-c", code, *map(str, argv)], capture_output=True, text=True,
                          timeout=timeout, cwd=REPO)


def test_capture_repeat_reports_bit_identical(tiny_qwen3, engines_text, tmp_path, capsys):
    out = tmp_path / "cap"
    rc = cli("capture", "--engine", "llama.cpp", "--model", tiny_qwen3["gguf_q8_0"], "--text", engines_text,
             "--out", out, "--positions", "every:16", "--n-batch", "96", "--n-ubatch", "32", "--threads", "1",
             "--kv-type", "q8_0", "--flash-attn", "on", "--repeat", "2", "--no-progress", "--json")
    assert rc == 0
    summary = json.loads(capsys.readouterr().out)
    assert summary["runs"] == 2 and summary["bit_identical"] is True
    assert summary["logits_sha256"][0] == summary["logits_sha256"][1]
    cap = open_capture(out)
    s = cap.manifest.stack
    assert (s.prefill_chunk, s.n_ubatch, s.threads, s.kv_cache_dtype) == (96, 32, 1, "q8_0")
    assert s.attention_backend == "flash-attn on" and s.weights_dtype == "q8_0"
    assert cap.manifest.context.prefill_chunk == 96
    assert any("bit-identical" in n and "2 runs" in n for n in cap.manifest.notes)
    assert cap.n_positions == len(range(0, 271, 16))


def test_capture_text_output_names_what_was_stored(tiny_llama, engines_text, tmp_path, capsys):
    rc = cli("capture", "--engine", "mlx", "--model", tiny_llama["hf"], "--text", engines_text,
             "--out", tmp_path / "c", "--positions", "second-half", "--n-ctx", "128", "--no-progress")
    assert rc == 0
    out = capsys.readouterr().out
    assert "wrote" in out and "x 128256 vocab (bf16)" in out and "second-half" in out
    cap = open_capture(tmp_path / "c")
    assert cap.manifest.context.n_ctx == 128 and cap.manifest.context.n_chunks == 2
    assert cap.positions.tolist() == list(range(64, 127)) + list(range(192, 255))


@pytest.mark.parametrize(("engine", "module", "extra"), [
    ("llama.cpp", "llama_cpp", "llama"), ("mlx", "mlx_lm", "mlx"), ("transformers", "torch", "hf")])
def test_missing_engine_is_one_line_with_the_install_command(engine, module, extra, tmp_path, engines_text):
    proc = subprocess_cli("capture", "--engine", engine, "--model", tmp_path, "--text", engines_text,
                          "--out", tmp_path / "c", block=module)
    assert proc.returncode == 2
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert f"engine {engine!r} is not installed" in lines[0]
    assert f"pip install 'kldcard[{extra}]'" in lines[0]
    assert not (tmp_path / "c").exists()


def test_bad_inputs_are_one_line_and_touch_nothing(tiny_qwen3, engines_text, tmp_path, capsys):
    existing = tmp_path / "exists"
    existing.mkdir()
    (existing / "keep.txt").write_text("mine")
    cases = [
        (["--engine", "llama.cpp", "--model", tiny_qwen3["gguf_f32"], "--text", tmp_path / "nope.txt"], "does not exist"),
        (["--engine", "transformers", "--model", tiny_qwen3["gguf_f32"], "--text", engines_text], "not a transformers"),
        (["--engine", "llama.cpp", "--model", tiny_qwen3["hf"], "--text", engines_text], "not a GGUF file"),
        (["--engine", "llama.cpp", "--model", tiny_qwen3["gguf_f32"], "--text", engines_text, "--dtype", "bf16"],
         "--dtype does not apply"),
        (["--engine", "llama.cpp", "--model", tiny_qwen3["gguf_f32"], "--text", engines_text, "--kv-type", "q3"],
         "--kv-type"),
        (["--engine", "llama.cpp", "--model", tiny_qwen3["gguf_f32"], "--text", engines_text,
          "--positions", "list:5,999"], "cannot be scored"),
    ]
    for argv, message in cases:
        rc = cli("capture", *argv, "--out", tmp_path / "c")
        err = capsys.readouterr().err.strip().splitlines()
        assert rc == 2, argv
        assert len(err) == 1 and err[0].startswith("kldcard: error:") and message in err[0], (argv, err)
        assert not (tmp_path / "c").exists()
    # a bad --positions is a usage error when the command line is parsed (argparse: exit 2), before any model loads
    with pytest.raises(SystemExit) as usage:
        cli("capture", "--engine", "llama.cpp", "--model", tiny_qwen3["gguf_f32"], "--text", engines_text,
            "--positions", "often", "--out", tmp_path / "c")
    assert usage.value.code == 2 and "bad positions 'often'" in capsys.readouterr().err
    assert not (tmp_path / "c").exists()
    rc = cli("capture", "--engine", "llama.cpp", "--model", tiny_qwen3["gguf_f32"], "--text", engines_text,
             "--out", existing)
    assert rc == 2 and "already exists" in capsys.readouterr().err
    assert [p.name for p in existing.iterdir()] == ["keep.txt"]
    bad_utf8 = tmp_path / "latin1.txt"
    bad_utf8.write_bytes("caf\xe9".encode("latin-1"))
    assert cli("capture", "--engine", "llama.cpp", "--model", tiny_qwen3["gguf_f32"], "--text", bad_utf8,
               "--out", tmp_path / "c") == 2
    assert "not valid UTF-8" in capsys.readouterr().err


def _start_slow_capture(tiny_qwen3: dict, tmp_path: Path) -> tuple[subprocess.Popen, Path]:
    text = tmp_path / "long.txt"
    text.write_text((REPO / "tests/data/engines/lighthouse.txt").read_text(encoding="utf-8") * 12, encoding="utf-8")
    out = tmp_path / "cap"
    cmd = [sys.executable, "-m", "kldcard", "capture", "--engine", "llama.cpp", "--model", str(tiny_qwen3["gguf_f32"]),
           "--text", str(text), "--out", str(out), "--positions", "every:4", "--n-batch", "8", "--no-progress"]
    # Ctrl-C as at a terminal: a job started in the background of a non-interactive shell (a CI runner's
    # `cmd &`) inherits SIGINT ignored, and Python then rightly keeps ignoring it; the child gets the default back.
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, cwd=REPO,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    # Wait until logits are being written into the hidden partial directory.
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if any(p.is_dir() and any(p.glob("logits-*")) for p in tmp_path.glob(".cap.partial-*")):
            return proc, out
        if proc.poll() is not None:
            break
        time.sleep(0.05)
    proc.kill()
    raise AssertionError(f"capture never started writing: {proc.communicate()[1][-500:]}")


def test_ctrl_c_leaves_nothing_behind(tiny_qwen3, tmp_path):
    proc, out = _start_slow_capture(tiny_qwen3, tmp_path)
    proc.send_signal(signal.SIGINT)
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    assert "interrupted" in err and "Traceback" not in err
    assert not out.exists()
    assert not list(tmp_path.glob(".cap.partial-*"))


def test_kill_leaves_no_valid_looking_capture(tiny_qwen3, tmp_path):
    proc, out = _start_slow_capture(tiny_qwen3, tmp_path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.communicate(timeout=60)
    assert not (out / "manifest.json").exists()
    with pytest.raises(InputError):
        open_capture(out)


def test_stack_prints_each_installed_engine(capsys):
    assert cli("stack", "--json") == 0
    fps = json.loads(capsys.readouterr().out)
    assert set(fps) == {"transformers", "llama.cpp", "mlx"}
    for name, fields in fps.items():
        assert isinstance(fields, dict), fields
        assert fields["engine"] == name and fields["backend"] == "cpu" and fields["device"]
        assert fields["os"] and fields["python"] and fields["engine_version"]
    assert "CPU" in fps["llama.cpp"]["engine_build"]
    assert cli("stack", "show", "--engine", "llama.cpp") == 0
    text = capsys.readouterr().out
    assert "== llama.cpp" in text and "== mlx" not in text and "flash-attn off" in text


def test_stack_reports_a_missing_engine_instead_of_failing():
    proc = subprocess_cli("stack", "--engine", "mlx", "--engine", "llama.cpp", block="mlx_lm")
    assert proc.returncode == 0
    assert "not installed" in proc.stdout and "pip install 'kldcard[mlx]'" in proc.stdout
    assert "== llama.cpp" in proc.stdout and "engine_build" in proc.stdout
