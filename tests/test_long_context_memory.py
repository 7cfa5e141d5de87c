"""Complexity guard: an ``every:32`` capture's peak memory follows positions × vocabulary, not n_ctx.

Two window lengths in one test (~1,100 and ~4,400 tokens of the tiny Qwen3, vocabulary 151,936),
each captured in a fresh subprocess whose peak resident memory is measured from after the model load
(``/proc/self/clear_refs`` resets the high-water mark, ``VmHWM`` reads it). Logits for the whole
window (n_ctx × n_vocab × 4 bytes, what llama-perplexity holds) would add ~2 GB between the two; the
scored rows only (positions × n_vocab × 4 bytes) add ~60 MB. The test asserts the growth is far from
the first and near the second: a ratio between two sizes in one run, not an absolute number.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CHILD = r"""
import json, sys
from pathlib import Path

def hwm():
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith("VmHWM:") or line.startswith("VmRSS:"):
            yield line.split(":")[0], int(line.split()[1]) * 1024

engine, model, text, out, kw = sys.argv[1:6]
kw = json.loads(kw)
from kldcard.capture.engines import EngineSettings, open_model
from kldcard.capture.run import run_capture

# load once (engine imports, weights) so the measured peak is the capture's own
with open_model(engine, Path(model), EngineSettings(prefill_chunk=512, n_batch=kw.get("n_batch"))) as m:
    m.tokenize("warm up")
Path("/proc/self/clear_refs").write_text("5")  # reset VmHWM to the current RSS
before = dict(hwm())["VmRSS"]
kw.setdefault("positions", "every:32")
r = run_capture(engine, model, text, out, prefill_chunk=512, progress=False, digest=False, **kw)
print(json.dumps({"before": before, "peak": dict(hwm())["VmHWM"], "tokens": r.n_tokens,
                  "positions": r.n_positions, "n_vocab": r.capture.n_vocab}))
"""


def _peak(engine: str, model: Path, text: Path, out: Path, **kw) -> dict:
    proc = subprocess.run([sys.executable, "-c", CHILD, engine, str(model), str(text), str(out), json.dumps(kw)],
                          capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-2000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


@pytest.mark.parametrize("engine,key", [("transformers", "hf"), ("mlx", "hf"), ("llama.cpp", "gguf_f32")])
def test_every32_peak_memory_follows_positions_not_n_ctx(engine, key, tiny_qwen3, engines_text, tmp_path):
    if not Path("/proc/self/clear_refs").exists():
        pytest.fail("this guard needs Linux /proc (clear_refs, VmHWM)")
    base = engines_text.read_text(encoding="utf-8")
    runs = []
    for copies in (4, 16):  # one window each (n_ctx = the whole text)
        text = tmp_path / f"text{copies}.txt"
        text.write_text((base + "\n") * copies, encoding="utf-8")
        runs.append(_peak(engine, tiny_qwen3[key], text, tmp_path / f"cap{copies}"))
    short, long = runs
    n_vocab = long["n_vocab"]
    growth = (long["peak"] - long["before"]) - (short["peak"] - short["before"])
    window_term = (long["tokens"] - short["tokens"]) * n_vocab * 4  # logits of every window position
    position_term = (long["positions"] - short["positions"]) * n_vocab * 4  # logits of the scored rows
    msg = (f"{engine}: {short['tokens']} -> {long['tokens']} tokens, {short['positions']} -> {long['positions']} "
           f"positions: peak grew {growth / 2**20:.0f} MiB; n_ctx x n_vocab would add {window_term / 2**20:.0f} MiB, "
           f"positions x n_vocab {position_term / 2**20:.0f} MiB")
    print(msg)
    assert long["tokens"] >= 4 * short["tokens"] - 8
    assert growth < 0.1 * window_term, msg
    assert growth < 3 * position_term + 128 * 2**20, msg


def test_llama_perplexity_layout_peak_follows_n_batch_not_n_ctx(tiny_qwen3, engines_text, tmp_path):
    """llama-perplexity's own positions (the second half of each window) at -c 512 and -c 2048, -b 256:
    rows go on decode by decode, so the peak holds n_batch rows, not a window's n_ctx/2 (which would add
    ~0.9 GB between the two, twice: the rows and the compare's copy)."""
    if not Path("/proc/self/clear_refs").exists():
        pytest.fail("this guard needs Linux /proc (clear_refs, VmHWM)")
    text = tmp_path / "text.txt"
    text.write_text((engines_text.read_text(encoding="utf-8") + "\n") * 16, encoding="utf-8")
    runs = [_peak("llama.cpp", tiny_qwen3["gguf_f32"], text, tmp_path / f"cap{c}", protocol="llama-perplexity",
                  n_ctx=c, n_batch=256, store_dtype="bf16") for c in (512, 2048)]
    short, long = runs
    growth = (long["peak"] - long["before"]) - (short["peak"] - short["before"])
    window_term = (2048 - 512) * long["n_vocab"] * 4  # one window's logits more
    msg = (f"llama-perplexity layout: -c 512 -> 2048, {short['positions']} -> {long['positions']} positions: peak grew "
           f"{growth / 2**20:.0f} MiB; n_ctx x n_vocab would add {window_term / 2**20:.0f} MiB")
    print(msg)
    assert abs(long["positions"] - short["positions"]) < 16  # the same positions, windows 4x longer
    assert growth < 0.25 * window_term, msg
