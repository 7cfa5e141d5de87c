"""One-card ``kldcard lint`` wall time (a fresh process, as pre-commit and CI run it), side by side with
check-jsonschema validating the same card's extracted ``kld_evaluation`` block against the published
schema, and with kldcard as it was before the stage layout (an earlier commit, run from a git worktree).

    .venv/bin/python benchmarks/lint_startup.py [--runs 9] [--before cfe032a]

The commands take turns, run for run, so that a machine whose speed drifts slows each alike; each figure is the
median of ``--runs`` fresh processes after one warm-up run, and the ratios are the medians of the per-round ratios (the OS page cache and
Python's bytecode caches are warm, as for pre-commit or CI after the install; PYTHONDONTWRITEBYTECODE is
unset for the runs). Wall time and CPU time (user + system of the process) are both printed: on a shared
machine the CPU time is the steadier figure. Target (issue 28): kldcard at most half of check-jsonschema's
time on the same card's block (issue 15's target was 1.5x).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parent.parent
CARD = ROOT / "examples" / "cards" / "compliant.md"
SCHEMA = ROOT / "schemas" / "kld-evaluation.schema.json"
BIN = Path(sys.executable).parent


ENV = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}


def interleaved(cmds: list[tuple[list[str], dict, Path | None]], runs: int) -> list[tuple[list[float], list[float], int]]:
    """Per command: the wall and CPU seconds of ``runs`` runs after one warm-up each, and its last exit code. The
    commands take turns (run i of every command before run i + 1 of any), so that a machine whose speed drifts
    during the measurement (a shared VM) slows each command alike and the per-round ratios stay comparable."""
    for cmd, env, cwd in cmds:
        subprocess.run(cmd, capture_output=True, env=env, cwd=cwd)  # writes the bytecode caches
    out: list[tuple[list[float], list[float], int]] = [([], [], 0) for _ in cmds]
    for _ in range(runs):
        for k, (cmd, env, cwd) in enumerate(cmds):
            r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
            t0 = time.perf_counter()
            proc = subprocess.run(cmd, capture_output=True, env=env, cwd=cwd)
            out[k][0].append(time.perf_counter() - t0)
            r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
            out[k][1].append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
            out[k] = (out[k][0], out[k][1], proc.returncode)
    return out


def ratio(a: list[float], b: list[float]) -> float:
    """The median of the per-round ratios a[i] / b[i]."""
    return statistics.median(x / y for x, y in zip(a, b))


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--before", default="cfe032a", help="an earlier commit to run beside (default: the last before the pydantic-free path)")
    args = ap.parse_args()
    text = CARD.read_text(encoding="utf-8")
    block = yaml.safe_load(text.split("---", 2)[1])["kld_evaluation"]
    with tempfile.TemporaryDirectory() as tmp:
        inst = Path(tmp) / "block.json"
        inst.write_text(json.dumps(block))
        names = ["kldcard lint (this tree)", "check-jsonschema on the extracted block"]
        cmds = [([str(BIN / "kldcard"), "lint", str(CARD)], ENV, None),
                ([str(BIN / "check-jsonschema"), "--schemafile", str(SCHEMA), str(inst)], ENV, None)]
        worktree = Path(tmp) / "before"
        made = subprocess.run(["git", "worktree", "add", "--detach", str(worktree), args.before],
                              cwd=ROOT, capture_output=True).returncode == 0
        try:
            if made:
                code = "import sys; from kldcard.cli.main import main; sys.exit(main(sys.argv[1:]))"
                names.insert(1, f"kldcard lint (before, {args.before})")
                cmds.insert(1, ([sys.executable, "-c", code, "lint", str(CARD)], {**ENV, "PYTHONPATH": str(worktree)}, Path(tmp)))
            results = interleaved(cmds, args.runs)
        finally:
            if made:
                subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, capture_output=True)
    print(f"one card ({CARD.relative_to(ROOT)}, {len(text.encode()) / 1024:.1f} KiB), median of {args.runs} "
          f"fresh processes each, taking turns, Python {sys.version.split()[0]}")
    print(f"  {'':<44} {'wall':>7}      {'CPU':>7}")
    for name, (t, c, rc) in zip(names, results):
        print(f"  {name:<44} {statistics.median(t) * 1e3:7.0f} ms   {statistics.median(c) * 1e3:7.0f} ms   (exit {rc})")
    (after, after_cpu, _), (cj, cj_cpu, _) = results[0], results[-1]
    wall_ratio, cpu_ratio = ratio(after, cj), ratio(after_cpu, cj_cpu)
    verdict = "met" if max(wall_ratio, cpu_ratio) <= 0.5 else ("met on CPU time" if cpu_ratio <= 0.5 else "MISSED")
    print(f"  kldcard / check-jsonschema = {wall_ratio:.2f} wall, {cpu_ratio:.2f} CPU, median of the per-round ratios "
          f"(target <= 0.5: {verdict})")
    if made:
        before, before_cpu, _ = results[1]
        print(f"  before / after = {ratio(before, after):.2f} wall, {ratio(before_cpu, after_cpu):.2f} CPU")
    return 0 if cpu_ratio <= 0.5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
