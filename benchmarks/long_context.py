"""Long contexts: wall time and peak memory of ``kldcard evaluate`` and of llama-perplexity's two KLD passes.

For each n_ctx in 4,096, 8,192, 16,384 and 32,768 (two windows of n_ctx tokens each, the fewest
llama-perplexity accepts), on the tiny Qwen3 test models (F32 reference, Q4_K_M candidate,
vocabulary 151,936):

- ``llama-perplexity --kl-divergence-base`` (pass 1, reference) and ``--kl-divergence`` (pass 2,
  candidate), the base file on disk;
- ``kldcard evaluate`` at llama-perplexity's positions (``protocol: llama-perplexity``: the second half
  of each window) and at ``every:32`` over the same windows.

Each process's peak RSS comes from ``wait4`` through a lean launcher (:data:`capture.LAUNCHER`).
llama-perplexity keeps a window's full-vocabulary logits in memory (n_ctx × n_vocab × 4 bytes) and
writes a base file of 303,880 bytes per scored token; kldcard requests logits only at scored positions
and compares them as they leave the engine, but stores the reference's scored rows (float32) on disk.
A run whose computed memory would pass ``--max-gb`` (default 10: the machine is shared) or the free
memory, or whose files would pass ``--max-disk-gb``, is not launched: the table says "computed" with
the arithmetic. ``--budget-s`` stops launching once the runs so far have used it.

Then the seed's experiment in miniature: the same F32 weights through llama.cpp with flash attention
off (reference) and on (candidate), two arithmetic paths, over the longest window that fits, every:32,
with the depth profile, onset and clusters ``kldcard evaluate`` reports.

The text: the licence texts Debian ships in ``/usr/share/common-licenses`` (each file once, sorted by
name), then, when more tokens are needed, the ``copyright`` files under ``/usr/share/doc`` (sorted).
The files used are listed in the output with the text's sha256.

    python benchmarks/long_context.py [--ctx 4096,8192,16384,32768] [--budget-s 1200] [--json FILE]
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from capture import LAUNCHER  # noqa: E402
from evaluate_speed import LLAMA_PERPLEXITY  # noqa: E402

from kldcard.demo.tiny_models import TinyParams, build_tiny_models, params_key  # noqa: E402

N_VOCAB = 151_936
GB = 1e9
# llama-perplexity's measured RSS over its logits buffer at n_ctx 8,192 (issue 25: 6.6 GB for 5.0 GB)
LP_OVERHEAD = 1.35


def build_text(hf_dir: Path, n_tokens: int, out: Path) -> tuple[int, list[str]]:
    """Concatenate shipped texts until ``n_tokens`` Qwen3 tokens; returns (tokens, files used)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(hf_dir)
    seen, files, parts, n = set(), [], [], 0
    candidates = sorted(Path("/usr/share/common-licenses").iterdir()) + sorted(Path("/usr/share/doc").glob("*/copyright"))
    for f in candidates:
        real = f.resolve()
        if real in seen or not real.is_file():
            continue
        seen.add(real)
        text = real.read_text(encoding="utf-8", errors="replace")
        parts.append(text)
        files.append(str(real))
        n += len(tok(text, add_special_tokens=False)["input_ids"])
        if n >= n_tokens * 1.02:
            break
    body = "\n\n".join(parts)
    out.write_text(body, encoding="utf-8")
    return len(tok(body)["input_ids"]), files


def cut_text(hf_dir: Path, source: Path, n_tokens: int, out: Path) -> int:
    """The shortest prefix of ``source`` (cut at a line end) with at least ``n_tokens`` tokens: both
    tools then see the same two windows (llama-perplexity drops the few-token tail, kldcard scores it
    as a short third window)."""
    from transformers import AutoTokenizer

    tok = AutoTokenizer.from_pretrained(hf_dir)
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    count = lambda k: len(tok("".join(lines[:k]))["input_ids"])  # noqa: E731
    lo, hi = 1, len(lines)
    while lo < hi:  # the fewest lines that reach n_tokens
        mid = (lo + hi) // 2
        lo, hi = (mid + 1, hi) if count(mid) < n_tokens else (lo, mid)
    out.write_text("".join(lines[:lo]), encoding="utf-8")
    return count(lo)


def measured(cmd: list[str], env: dict, stdout: Path) -> dict:
    """Wall seconds and peak RSS (bytes) of one process."""
    proc = subprocess.run([sys.executable, "-c", LAUNCHER, *cmd], capture_output=True, text=True,
                          env={**env, "BENCH_STDOUT": str(stdout)})
    rep = json.loads(proc.stdout)
    if rep["code"] != 0:
        raise SystemExit(f"{cmd[0]} failed ({rep['code']}):\n{rep['stderr']}")
    return {"wall_s": round(rep["wall"], 1), "peak_rss_gb": round(rep["maxrss"] * 1024 / GB, 2)}


def free_memory() -> int:
    for line in Path("/proc/meminfo").read_text().splitlines():
        if line.startswith("MemAvailable:"):
            return int(line.split()[1]) * 1024
    return 0


def project(path: Path, ref: dict, cand: dict, text: Path, ctx: int, positions: str, cache: Path,
            protocol: bool, card: Path | None = None) -> Path:
    import yaml

    data = {"reference": ref, "candidates": [cand], "text": {"path": str(text), "name": "licence texts"},
            "positions": positions, "n_ctx": ctx, "cache": str(cache)}
    if protocol:
        data["protocol"] = "llama-perplexity"
    if card is not None:
        data.update(card=str(card), plot=str(card.with_name("kld_depth.png")),
                    disclosures={"reference": {"model": "kldcard/tiny-qwen3-f32", "sha256": "0" * 64},
                                 "calibration": {"none": True},
                                 "evaluation_text": {"source": {"url": "https://sources.debian.org/src/base-files/"}}})
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--ctx", default="4096,8192,16384,32768")
    ap.add_argument("--max-gb", type=float, default=10.0, help="never launch a process computed to need more")
    ap.add_argument("--max-disk-gb", type=float, default=6.0, help="never write more files than this per run")
    ap.add_argument("--budget-s", type=float, default=1200.0, help="stop launching runs after this much wall time")
    ap.add_argument("--llama-perplexity", default=LLAMA_PERPLEXITY)
    ap.add_argument("--work", type=Path, default=None)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("--skip-experiment", action="store_true")
    ap.add_argument("--jobs", default="every32,llama-perplexity,positions",
                    help="which jobs to run: every32 (kldcard at every:32), llama-perplexity (its two passes), "
                         "positions (kldcard at llama-perplexity's positions)")
    a = ap.parse_args(argv)
    ctxs = [int(c) for c in a.ctx.split(",")]
    jobs = set(a.jobs.split(","))
    cache = Path(os.environ.get("KLDCARD_TEST_CACHE") or REPO / ".cache" / "test-models")
    p = TinyParams()
    models = build_tiny_models(cache / f"qwen3-{params_key('qwen3', p)}", "qwen3", params=p, cache_dir=cache)
    work = a.work or Path(tempfile.mkdtemp(prefix="kldcard-long-context-"))
    work.mkdir(parents=True, exist_ok=True)
    text = work / "licences.txt"
    n_tok, files = build_text(models["hf"], 2 * max(ctxs), text)
    sha = hashlib.sha256(text.read_bytes()).hexdigest()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    t0 = time.perf_counter()
    rows: list[dict] = []

    def run(label: str, ctx: int, need_mem: float, need_disk: float, cmd: list[str], cleanup: list[Path]) -> None:
        row = {"job": label, "n_ctx": ctx, "computed_gb": round(need_mem / GB, 2), "disk_gb": round(need_disk / GB, 2)}
        avail = free_memory()
        why = None
        if need_mem > a.max_gb * GB:
            why = f"computed {need_mem / GB:.1f} GB > the {a.max_gb:g} GB this shared machine allows a process"
        elif need_mem > avail:
            why = f"computed {need_mem / GB:.1f} GB > {avail / GB:.1f} GB free"
        elif need_disk > a.max_disk_gb * GB:
            why = f"files {need_disk / GB:.1f} GB > {a.max_disk_gb:g} GB allowed"
        elif time.perf_counter() - t0 > a.budget_s:
            why = f"time budget of {a.budget_s:.0f} s spent"
        if why:
            row["not_run"] = why
        else:
            row.update(measured(cmd, env, work / "stdout.txt"))
        for c in cleanup:
            subprocess.run(["rm", "-rf", str(c)], check=False)
        rows.append(row)
        print(json.dumps(row), flush=True)

    lp = a.llama_perplexity
    ref, cand = models["gguf_f32"], models["gguf_q4"]

    def kldcard_run(ctx: int, positions: str) -> None:
        protocol = positions == "second-half"
        n_pos = 2 * (ctx - 1 - ctx // 2) if protocol else 2 * ctx // 32
        tag = positions.replace(":", "")
        c = work / f"cache-{ctx}-{tag}"
        # kldcard: one decode's output rows in memory (llama-perplexity's layout: up to n_batch 2048 rows;
        # every:32: a 512-token prefill chunk's 16), held by the engine and by the compare's block, plus
        # the runtime; the reference's scored rows (float32) on disk
        need = 2 * (2048 if protocol else 512) * N_VOCAB * 4 + 1.5 * GB
        prj = project(work / f"p-{ctx}-{tag}.yaml", {"engine": "llama.cpp", "model": str(ref)},
                      {"name": "q4_k_m", "engine": "llama.cpp", "model": str(cand)}, texts[ctx], ctx, positions, c,
                      protocol)
        run(f"kldcard evaluate ({'llama-perplexity positions' if protocol else 'every:32'}, F32 + Q4_K_M)", ctx,
            need, n_pos * N_VOCAB * 4, [sys.executable, "-m", "kldcard", "evaluate", str(prj), "--no-progress"], [c])

    usable, texts = [], {}
    for ctx in ctxs:
        if n_tok < 2 * ctx:
            rows.append({"job": "all", "n_ctx": ctx, "not_run": f"text has {n_tok} tokens < 2 x {ctx}"})
        else:
            usable.append(ctx)
            texts[ctx] = work / f"licences-{ctx}.txt"
            cut_text(models["hf"], text, 2 * ctx + 1, texts[ctx])
    # first what every size needs (every:32 and llama-perplexity), then kldcard at llama-perplexity's
    # positions, the job whose reference capture grows with n_ctx on disk (dropped first by the budget)
    for ctx in usable:
        scored = 2 * (ctx - 1 - ctx // 2)
        logits = ctx * N_VOCAB * 4  # llama-perplexity's per-window logits buffer
        base_file = 20 + 4 * 2 * ctx + 2 * (N_VOCAB + 4) * scored
        base = work / f"base-{ctx}.kld"
        common = ["-f", str(texts[ctx]), "-c", str(ctx), "--chunks", "2", "-b", str(min(ctx, 2048))]
        if "every32" in jobs:
            kldcard_run(ctx, "every:32")
        if "llama-perplexity" not in jobs:
            continue
        run("llama-perplexity --kl-divergence-base (F32)", ctx, logits * LP_OVERHEAD, base_file,
            [lp, "-m", str(ref), *common, "--kl-divergence-base", str(base)], [])
        run("llama-perplexity --kl-divergence (Q4_K_M)", ctx, logits * LP_OVERHEAD, 0,
            [lp, "-m", str(cand), *common, "--kl-divergence-base", str(base), "--kl-divergence"], [base])
    for ctx in usable if "positions" in jobs else []:
        kldcard_run(ctx, "second-half")
    rows.sort(key=lambda r: (r["n_ctx"], r["job"]))

    print(f"\nlong context: tiny Qwen3 (vocab {N_VOCAB:,}), text {n_tok:,} tokens (sha256 {sha[:16]}), from "
          f"{len(files)} files: {', '.join(Path(f).name if 'common-licenses' in f else f for f in files)}; "
          f"two windows of n_ctx each; {os.cpu_count()} cores (shared)")
    print("| n_ctx | job | wall (s) | peak RSS (GB) | note |")
    print("|---:|---|---:|---:|---|")
    for r in rows:
        note = r.get("not_run", "")
        if "job" in r and r["job"].startswith("llama-perplexity"):
            note = (note + "; " if note else "") + f"logits n_ctx x n_vocab x 4 = {r['n_ctx'] * N_VOCAB * 4 / GB:.1f} GB"
        if note.startswith("computed") or "not_run" in r:
            note = "cannot run here: " + note
        print(f"| {r['n_ctx']:,} | {r['job']} | {r.get('wall_s', '-')} | {r.get('peak_rss_gb', '-')} | {note} |")

    if not a.skip_experiment:
        experiment(models, work, ctxs, env, rows)
    if a.json:
        a.json.write_text(json.dumps({"tokens": n_tok, "text_sha256": sha, "files": files, "rows": rows}, indent=2) + "\n")
    print(f"({time.perf_counter() - t0:.0f} s)")
    return 0


def experiment(models: dict, work: Path, ctxs: list[int], env: dict, rows: list) -> None:
    """Flash attention off (reference) against on (candidate): same weights, two arithmetic paths."""
    # the longest window an every:32 run finished at, at most 16,384 (two more engine passes over the text)
    done = [c for c in ctxs if any(r.get("n_ctx") == c and "wall_s" in r and "every:32" in r["job"] for r in rows)]
    ctx = min(max(done or [min(ctxs)]), 16384)
    text = work / f"licences-{ctx}.txt"
    ref = {"engine": "llama.cpp", "model": str(models["gguf_f32"]), "settings": {"flash_attn": False}}
    cand = {"name": "f32-flash-attn-on", "engine": "llama.cpp", "model": str(models["gguf_f32"]),
            "settings": {"flash_attn": True}, "quantization": "none (F32; flash attention on)",
            "cross_stack": {"coordinates": ["attention_backend"],
                            "reason": "the experiment: the same weights through two attention paths"}}
    card = work / "experiment" / "README.md"
    card.parent.mkdir(parents=True, exist_ok=True)
    prj = project(work / "experiment.yaml", ref, cand, text, ctx, "every:32", work / "cache-experiment", False, card)
    r = subprocess.run([sys.executable, "-m", "kldcard", "evaluate", str(prj), "--no-progress"], env=env,
                       capture_output=True, text=True)
    print(f"\nthe seed's experiment in miniature: F32 weights, llama.cpp flash attention off (reference) vs on, "
          f"n_ctx {ctx:,}, two windows, every:32 (exit {r.returncode})")
    res = sorted((work / "cache-experiment").glob("results/*.json"))
    if res:
        data = json.loads(res[-1].read_text())
        d, f = data.get("depth") or {}, data["forward_kl"]
        print(f"mean KL(P_ref || P_cand) {f['mean']:.3e} nats over {f['n']} positions; top-1 agreement "
              f"{data['top1_agreement']:.4%}")
        for rg in data["ranges"]:
            k = rg["forward_kl"]
            print(f"  range [{rg['start']}, {rg['end']}): n {rg['n']}, mean {k['mean']:.3e}, interval "
                  f"[{k.get('ci_low') or 0:.3e}, {k.get('ci_high') or 0:.3e}], n_eff {k.get('n_eff')}")
        print(f"  onset: {json.dumps(d.get('onset'))}")
        print(f"  clusters: {d.get('n_clusters')} holding {d.get('clusters_share', 0):.0%} of the KLD; "
              f"late vs early: {json.dumps(d.get('late_vs_early'))}")
    if card.is_file():
        print(f"card: {card}")
    print(r.stderr[-1500:])
    rows.append({"job": "experiment", "n_ctx": ctx, "exit": r.returncode})


if __name__ == "__main__":
    sys.exit(main())
