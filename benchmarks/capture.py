"""Benchmark ``kldcard capture``: a 20k-token text, 151,936-token vocabulary, every 32nd position.

For each engine (transformers, llama.cpp, MLX) the capture runs in its own process (``kldcard
capture ...``) so that its wall time and peak resident memory (``ru_maxrss`` of the child) are
measured alone. The model is the tiny Qwen3 test model (2 layers, hidden 256, the real Qwen3
tokenizer and vocabulary), so the numbers measure kldcard's capture path (tokenization, chunked
prefill, output projection at the sampled positions only, BF16 store) rather than a big model's
FLOPs. The naive recipe — full logits for every position — would hold 20,000 x 151,936 float32 =
12.2 GB; kldcard stores 625 rows (190 MB BF16) and keeps one prefill chunk in memory.

Usage::

    python benchmarks/capture.py [--tokens 20000] [--every 32] [--engines transformers,llama.cpp,mlx]
                                 [--work DIR] [--json FILE]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kldcard.capture.fingerprint import cpu_count, cpu_model  # noqa: E402
from kldcard.demo.tiny_models import LM_PARAMS, build_tiny_models, params_key  # noqa: E402

WORDS = (
    "the a of and to in is was that for on with as by at from it be this are have which or one had not but "
    "what all were when we there can an your their said if do will each about how up out them then she many "
    "some so these would other into has more her two like him see time could no make than first been its who "
    "now people my made over did down only way find use may water long little very after words called just "
    "where most know get through back much before go good new write our used me man too any day same right "
    "look think also around another came come work three word must because does part even place well such "
    "lighthouse harbour keeper ship reef lens barometer weather morning evening north south east west storm"
).split()


def make_text(n_words: int, seed: int = 0) -> str:
    """Deterministic English-like text: seeded words in sentences and paragraphs."""
    rng = np.random.default_rng(seed)
    words = rng.choice(WORDS, size=n_words)
    out, sentence = [], []
    for i, w in enumerate(words):
        sentence.append(str(w))
        if len(sentence) >= rng.integers(6, 18):
            s = " ".join(sentence)
            out.append(s[0].upper() + s[1:] + ("." if i % 7 else ",\n"))
            sentence = []
    return " ".join(out) + "\n"


def text_with_tokens(hf_dir: Path, n_tokens: int, path: Path) -> int:
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(hf_dir)
    n_words = int(n_tokens * 0.9)
    while True:
        text = make_text(n_words)
        n = len(tok(text)["input_ids"])
        if n >= n_tokens:
            break
        n_words = int(n_words * n_tokens / n) + 50
    path.write_text(text, encoding="utf-8")
    return n


# A lean launcher: Linux carries a forked child's RSS high-water mark across exec, so a child forked
# from this (large) process would report at least this process's RSS. The launcher is small and
# forks the capture itself, then reports the capture's own rusage.
LAUNCHER = """
import json, os, subprocess, sys, time
t0 = time.perf_counter()
p = subprocess.Popen(sys.argv[1:], stdout=open(os.environ["BENCH_STDOUT"], "w"), stderr=subprocess.PIPE)
err = p.stderr.read()
_, status, ru = os.wait4(p.pid, 0)
sys.stdout.write(json.dumps({"code": os.waitstatus_to_exitcode(status), "wall": time.perf_counter() - t0,
                             "maxrss": ru.ru_maxrss, "cpu": ru.ru_utime + ru.ru_stime,
                             "stderr": err.decode("utf-8", "replace")[-2000:]}))
"""


def run_one(label: str, engine: str, model: Path, text: Path, out: Path, every: int, extra: list[str]) -> dict:
    cmd = [sys.executable, "-m", "kldcard", "capture", "--engine", engine, "--model", str(model), "--text", str(text),
           "--out", str(out), "--positions", f"every:{every}", "--no-progress", "--json", *extra]
    summary_file = out.with_name(out.name + ".json")
    env = {**os.environ, "BENCH_STDOUT": str(summary_file)}
    proc = subprocess.run([sys.executable, "-c", LAUNCHER, *cmd], capture_output=True, text=True, env=env)
    rep = json.loads(proc.stdout)
    if rep["code"] != 0:
        raise SystemExit(f"{engine} failed ({rep['code']}):\n{rep['stderr']}")
    summary = json.loads(summary_file.read_text())
    summary_file.unlink()
    wall = rep["wall"]
    # ru_maxrss is KiB on Linux, bytes on macOS.
    peak = rep["maxrss"] * (1 if sys.platform == "darwin" else 1024)
    size = sum(f.stat().st_size for f in out.iterdir())
    return {
        "run": label,
        "engine": engine,
        "wall_s": round(wall, 2),
        "cpu_s": round(rep["cpu"], 2),
        "capture_s": round(sum(summary["seconds"]), 2),
        "load_s": summary["load_seconds"],
        "peak_rss_mb": round(peak / 2**20, 1),
        "n_tokens": summary["n_tokens"],
        "n_positions": summary["n_positions"],
        "n_vocab": summary["n_vocab"],
        "store_mb": round(size / 2**20, 1),
        "stack": {k: summary["stack"][k] for k in ("engine_version", "backend", "device", "attention_backend",
                                                   "weights_dtype", "prefill_chunk", "threads")},
    }


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--tokens", type=int, default=20_000)
    ap.add_argument("--every", type=int, default=32)
    ap.add_argument("--engines", default="transformers,llama.cpp,mlx")
    ap.add_argument("--work", type=Path, default=None, help="keep models/captures here (default: a temp dir)")
    ap.add_argument("--json", type=Path, default=None, help="also write the results as JSON")
    args = ap.parse_args(argv)

    cache = Path(os.environ.get("KLDCARD_TEST_CACHE") or REPO / ".cache" / "test-models")
    p = LM_PARAMS  # the tiny model that predicts its text: a language model's distributions
    models = build_tiny_models(cache / f"qwen3-bigram-{params_key('qwen3', p)}", "qwen3", params=p, cache_dir=cache)
    work = args.work or Path(tempfile.mkdtemp(prefix="kldcard-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    text = work / "bench.txt"
    n = text_with_tokens(models["hf"], args.tokens, text)
    print(f"text: {n} tokens (Qwen3 tokenizer), {text.stat().st_size} bytes; positions every {args.every}; "
          f"machine: {cpu_model()}, {cpu_count()} CPUs, {platform.platform()}", flush=True)
    runs = {
        "transformers": [("transformers bf16", models["hf"], ["--dtype", "bf16"]),
                         ("transformers f32", models["hf"], ["--dtype", "f32"])],
        "llama.cpp": [("llama.cpp f32", models["gguf_f32"], []), ("llama.cpp q4_k_m", models["gguf_q4"], [])],
        "mlx": [("mlx bf16", models["hf"], [])],
    }
    results = []
    for engine in [e.strip() for e in args.engines.split(",") if e.strip()]:
        for label, model, extra in runs[engine]:
            out = work / f"cap-{label.replace(' ', '-')}"
            shutil.rmtree(out, ignore_errors=True)
            r = run_one(label, engine, model, text, out, args.every, extra)
            results.append(r)
            print(f"{label:<18} wall {r['wall_s']:7.2f} s, CPU {r['cpu_s']:7.2f} s (capture {r['capture_s']:.2f} s, "
                  f"load {r['load_s']:.2f} s)  peak RSS {r['peak_rss_mb']:7.1f} MB  {r['n_positions']} positions x "
                  f"{r['n_vocab']} -> {r['store_mb']} MB on disk", flush=True)
        shutil.rmtree(out, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps({"tokens": n, "every": args.every, "results": results}, indent=2) + "\n")
    worst = max(r["peak_rss_mb"] for r in results)
    print(f"max peak RSS {worst:.1f} MB ({'under' if worst < 2048 else 'OVER'} the 2 GB budget)")
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if worst < 2048 else 1


if __name__ == "__main__":
    sys.exit(main())
