"""Benchmark ``kldcard evaluate`` against ``llama-perplexity --kl-divergence`` on the same job.

Same GGUF pair (the tiny Qwen3 test model: F32 reference, Q4_K_M and Q8_0 candidates), same text
(~7,400 tokens), same ``-c`` (128) and positions (llama-perplexity's: the second half of each chunk),
each tool run in its own process, wall time including start-up and model load:

- llama-perplexity: ``--kl-divergence-base`` once on the reference (writes the base file), then
  ``--kl-divergence`` once per candidate;
- kldcard evaluate (protocol llama-perplexity): the reference captured once, then each candidate
  compared as its logits leave the engine; and the same with a llama-perplexity base file as the
  reference, and with an existing reference capture (candidates only).

The reference's cost is paid once by both tools; the per-candidate figures are what a publisher of N
quantizations pays N times. ``--repeat N`` runs the whole job N times, the tools alternating, and
keeps each figure's fastest (on a shared machine, load then hits both alike).
Usage::

    python benchmarks/evaluate_speed.py [--tokens 7400] [--ctx 128] [--repeat 1] [--llama-perplexity PATH]
                                        [--json FILE]
"""

from __future__ import annotations

import argparse
import json
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

from kldcard.demo.tiny_models import LM_PARAMS, build_tiny_models, params_key  # noqa: E402

# where the test suite builds it (scripts/build-llama-tools.sh .cache/llama-tools; tests/conftest.py llama_tools)
LLAMA_PERPLEXITY = str(REPO / ".cache" / "llama-tools" / "llama-tools-0.3.36" / "bin" / "llama-perplexity")


def timed(cmd: list[str], env: dict | None = None) -> float:
    t = time.perf_counter()
    r = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    wall = time.perf_counter() - t
    if r.returncode != 0:
        raise SystemExit(f"{cmd[0]} failed ({r.returncode}):\n{r.stdout[-3000:]}")
    return wall


def evaluate_times(project: Path, env: dict) -> tuple[float, dict[str, float]]:
    """Wall time of one ``kldcard evaluate`` process and the per-candidate seconds it printed."""
    t = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "kldcard", "evaluate", str(project), "--no-progress"], env=env,
                       capture_output=True, text=True)
    wall = time.perf_counter() - t
    if r.returncode not in (0, 1):
        raise SystemExit(f"kldcard evaluate failed:\n{r.stderr[-3000:]}")
    per = {}
    for line in r.stderr.splitlines():
        if ": evaluated (" in line:
            name, rest = line.split(": evaluated (", 1)
            per[name.strip()] = float(rest.split(" s)")[0])
        if line.startswith("reference ") and ("captured (" in line or "converted from the base file (" in line):
            per["(reference)"] = float(line.rsplit("(", 1)[1].split(" s)")[0])
    return wall, per


def project_file(path: Path, reference: dict, candidates: list[tuple[str, Path]], text: Path, ctx: int,
                 cache: Path) -> Path:
    import yaml

    data = {"reference": reference,
            "candidates": [{"name": n, "engine": "llama.cpp", "model": str(m)} for n, m in candidates],
            "text": {"path": str(text), "name": "benchmark text"}, "positions": "second-half", "n_ctx": ctx,
            "protocol": "llama-perplexity", "cache": str(cache)}
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    return path


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--tokens", type=int, default=7400)
    ap.add_argument("--ctx", type=int, default=128)
    ap.add_argument("--repeat", type=int, default=1, help="per-candidate runs of each tool (fastest kept)")
    ap.add_argument("--llama-perplexity", default=LLAMA_PERPLEXITY)
    ap.add_argument("--work", help="working directory (default: a temporary one)")
    ap.add_argument("--json", help="also write the figures here")
    args = ap.parse_args()

    cache = Path(os.environ.get("KLDCARD_TEST_CACHE") or REPO / ".cache" / "test-models")
    p = LM_PARAMS  # the tiny model that predicts its text: a language model's distributions
    models = build_tiny_models(cache / f"qwen3-bigram-{params_key('qwen3', p)}", "qwen3", params=p, cache_dir=cache)
    ref, cands = models["gguf_f32"], [("q4_k_m", models["gguf_q4"]), ("q8_0", models["gguf_q8_0"])]
    work = Path(args.work or tempfile.mkdtemp(prefix="kldcard-evaluate-bench-"))
    work.mkdir(parents=True, exist_ok=True)
    text = work / "text.txt"
    n_tok = text_with_tokens(models["hf"], args.tokens, text)
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    lp = args.llama_perplexity
    base = work / "base.kld"
    common = ["-f", str(text), "-c", str(args.ctx)]  # llama-perplexity as a user runs it (its default batch)

    fig: dict[str, dict[str, float]] = {"llama-perplexity": {}, "kldcard evaluate": {},
                                        "kldcard evaluate (base file reference)": {},
                                        "kldcard evaluate (reference capture)": {}}
    def keep(tool: str, figures: dict[str, float]) -> None:  # the fastest of the repeats, figure by figure
        row = fig[tool]
        for k, v in figures.items():
            row[k] = min(v, row.get(k, v))

    ref_dir = None
    for r in range(args.repeat):  # each round runs every figure once, the tools alternating
        keep("llama-perplexity", {"(reference)": timed([lp, "-m", str(ref), *common, "--kl-divergence-base",
                                                        str(base)])})
        # kldcard: one process for the reference and every candidate (what a user runs) ...
        proj = project_file(work / f"full-{r}.yaml", {"engine": "llama.cpp", "model": str(ref)}, cands, text,
                            args.ctx, work / f"cache-full-{r}")
        wall, per = evaluate_times(proj, env)
        keep("kldcard evaluate", {**per, "(one process, all)": wall})
        # ... the base file llama-perplexity wrote as the reference ...
        proj = project_file(work / f"base-{r}.yaml", {"basefile": str(base)}, cands, text, args.ctx,
                            work / f"cache-base-{r}")
        wall, per = evaluate_times(proj, env)
        keep("kldcard evaluate (base file reference)", {**per, "(one process, all)": wall})
        # ... and a reference capture made earlier: candidates only, one process each, like
        # llama-perplexity (each of its runs against the base file)
        ref_dir = ref_dir or next((work / "cache-full-0" / "reference").iterdir())
        for name, m in cands:
            keep("llama-perplexity", {name: timed([lp, "-m", str(m), *common, "--kl-divergence-base", str(base),
                                                   "--kl-divergence"])})
            proj = project_file(work / f"cand-{name}.yaml", {"capture": str(ref_dir)}, [(name, m)], text, args.ctx,
                                work / f"cache-{name}-{r}")  # a fresh cache: the candidate really runs
            keep("kldcard evaluate (reference capture)", {name: evaluate_times(proj, env)[0]})

    print(f"evaluate speed: tiny Qwen3 (vocab 151,936), {n_tok} tokens, -c {args.ctx}, llama-perplexity positions; "
          f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores")
    print("wall seconds (each tool in its own process; kldcard's in-process figures exclude start-up):")
    names = ["(reference)", *[n for n, _ in cands], "(one process, all)"]
    print(f"{'':44s}" + "".join(f"{n:>20s}" for n in names))
    for tool, row in fig.items():
        print(f"{tool:44s}" + "".join(f"{row[n]:20.2f}" if n in row else f"{'-':>20s}" for n in names))
    print(f"per candidate, kldcard / llama-perplexity --kl-divergence (target: at most 1.2x; every figure the "
          f"fastest of {args.repeat}):")
    for tool in list(fig)[1:]:
        how = "own process, wall" if "capture" in tool else "in one process, printed per candidate"
        print(f"  {tool} ({how}): " + ", ".join(
            f"{n} {fig[tool][n] / fig['llama-perplexity'][n]:.2f}x" for n, _ in cands if n in fig[tool]))
    if args.json:
        Path(args.json).write_text(json.dumps({"tokens": n_tok, "ctx": args.ctx, "figures": fig}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
