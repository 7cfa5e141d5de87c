"""What verifying ``kldcard evaluate``'s cache costs: a warm rerun with the verified per-file hash
cache, side by side with the alternative of hashing every file again on every run.

Same job as ``benchmarks/evaluate_speed.py`` (tiny Qwen3 GGUFs: F32 reference, Q4_K_M and Q8_0
candidates; llama-perplexity's positions), each run a ``kldcard evaluate`` process, wall time:

- cold: nothing cached (model files hashed once, reference captured, both candidates evaluated);
- warm: everything cached; every result entry and the reference capture verified, model files and
  shards looked up in the hash cache by (device, inode, size, mtime_ns, ctime_ns);
- warm, no hash cache: ``sha256.json`` removed first, so every model file and every reference
  shard is read and hashed again (what content keys cost without the per-file cache).

Usage::

    python benchmarks/evaluate_cache.py [--tokens 7400] [--ctx 128] [--repeat 3]
"""

from __future__ import annotations

import argparse
import os
import platform
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from capture import text_with_tokens  # noqa: E402

from kldcard.demo.tiny_models import TinyParams, build_tiny_models, params_key  # noqa: E402


PER_CANDIDATE: list[float] = []  # seconds each candidate took, as the cold run printed them


def run(project: Path, env: dict) -> float:
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "kldcard", "evaluate", str(project), "--no-progress"], env=env,
                       capture_output=True, text=True)
    wall = time.perf_counter() - t
    if r.returncode not in (0, 1):
        raise SystemExit(f"kldcard evaluate failed:\n{r.stderr[-3000:]}")
    PER_CANDIDATE[:] = [float(line.split(": evaluated (", 1)[1].split(" s)")[0]) for line in r.stderr.splitlines()
                        if ": evaluated (" in line] or PER_CANDIDATE
    return wall


def main() -> int:
    import yaml

    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", type=int, default=7400)
    ap.add_argument("--ctx", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=3, help="warm runs of each kind (fastest kept)")
    args = ap.parse_args()

    cache = Path(os.environ.get("KLDCARD_TEST_CACHE") or REPO / ".cache" / "test-models")
    p = TinyParams()
    models = build_tiny_models(cache / f"qwen3-{params_key('qwen3', p)}", "qwen3", params=p, cache_dir=cache)
    work = Path(tempfile.mkdtemp(prefix="kldcard-evaluate-cache-bench-"))
    text = work / "text.txt"
    n_tok = text_with_tokens(models["hf"], args.tokens, text)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cands = [("q4_k_m", models["gguf_q4"]), ("q8_0", models["gguf_q8_0"])]
    data = {"reference": {"engine": "llama.cpp", "model": str(models["gguf_f32"])},
            "candidates": [{"name": n, "engine": "llama.cpp", "model": str(m)} for n, m in cands],
            "text": {"path": str(text), "name": "benchmark text"}, "positions": "second-half", "n_ctx": args.ctx,
            "protocol": "llama-perplexity", "cache": str(work / "cache")}
    project = work / "project.yaml"
    project.write_text(yaml.safe_dump(data), encoding="utf-8")

    cold = run(project, env)
    warm = min(run(project, env) for _ in range(args.repeat))
    index = work / "cache" / "sha256.json"
    rehash = []
    for _ in range(args.repeat):
        index.unlink()
        rehash.append(run(project, env))
    model_bytes = sum(Path(m).stat().st_size for m in [models["gguf_f32"], *(m for _, m in cands)])
    ref_bytes = sum(f.stat().st_size for f in (work / "cache" / "reference").rglob("*") if f.is_file())
    print(f"evaluate cache: tiny Qwen3 (vocab 151,936), {n_tok} tokens, -c {args.ctx}, 2 candidates; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    print(f"files behind the keys: models {model_bytes / 2**20:.0f} MiB, reference capture {ref_bytes / 2**20:.0f} MiB")
    print("wall seconds, one kldcard evaluate process each (fastest of "
          f"{args.repeat} for the warm runs):")
    print(f"  cold (hash, capture, evaluate 2)                       {cold:8.2f}")
    print("  per candidate in the cold run (printed by kldcard)       " + ", ".join(f"{x:.2f}" for x in PER_CANDIDATE))
    print(f"  warm, verified hash cache (stat, seals, result sha256) {warm:8.2f}")
    print(f"  warm, every file hashed again (no hash cache)          {min(rehash):8.2f}")
    from kldcard.files import sha256_file

    t = time.perf_counter()
    for f in [models["gguf_f32"], *(m for _, m in cands)]:
        sha256_file(f)
    rate = model_bytes / (time.perf_counter() - t)
    print(f"  the hash cache saves {min(rehash) - warm:.2f} s per warm run here; sha256 runs at {rate / 1e9:.2f} GB/s "
          f"on this machine, so without it every run would pay ~{16e9 / rate:.0f} s per 16 GB model file")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
