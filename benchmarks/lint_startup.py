"""One-card ``kldcard lint`` wall time (a fresh process, as pre-commit and CI run it), side by side with
check-jsonschema validating the same card's extracted ``kld_evaluation`` block against the published
schema, and with kldcard as it was before the stage layout (an earlier commit, run from a git worktree).

    .venv/bin/python benchmarks/lint_startup.py [--runs 9] [--before cfe032a]

Each figure is the median of ``--runs`` fresh processes after one warm-up run (the OS page cache and
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


def wall(cmd: list[str], runs: int, env: dict | None = None, cwd: Path | None = None) -> tuple[float, float, int]:
    """Median wall seconds, median CPU seconds and the exit code of ``runs`` runs after a warm-up."""
    env = env or ENV
    subprocess.run(cmd, capture_output=True, env=env, cwd=cwd)  # writes the bytecode caches
    times, cpus, rc = [], [], 0
    for _ in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, env=env, cwd=cwd)
        times.append(time.perf_counter() - t0)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpus.append(r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime)
        rc = proc.returncode
    return statistics.median(times), statistics.median(cpus), rc


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
        rows = []
        after, after_cpu, rc = wall([str(BIN / "kldcard"), "lint", str(CARD)], args.runs)
        rows.append(("kldcard lint (this tree)", after, after_cpu, rc))
        worktree = Path(tmp) / "before"
        made = subprocess.run(["git", "worktree", "add", "--detach", str(worktree), args.before],
                              cwd=ROOT, capture_output=True).returncode == 0
        if made:
            try:
                env = {**ENV, "PYTHONPATH": str(worktree)}
                code = "import sys; from kldcard.cli.main import main; sys.exit(main(sys.argv[1:]))"
                before, before_cpu, rc_b = wall([sys.executable, "-c", code, "lint", str(CARD)], args.runs, env=env, cwd=tmp)
                rows.append((f"kldcard lint (before, {args.before})", before, before_cpu, rc_b))
            finally:
                subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, capture_output=True)
        cj, cj_cpu, rc_c = wall([str(BIN / "check-jsonschema"), "--schemafile", str(SCHEMA), str(inst)], args.runs)
        rows.append(("check-jsonschema on the extracted block", cj, cj_cpu, rc_c))
    print(f"one card ({CARD.relative_to(ROOT)}, {len(text.encode()) / 1024:.1f} KiB), median of {args.runs} "
          f"fresh processes, Python {sys.version.split()[0]}")
    print(f"  {'':<44} {'wall':>7}      {'CPU':>7}")
    for name, t, c, rc in rows:
        print(f"  {name:<44} {t * 1e3:7.0f} ms   {c * 1e3:7.0f} ms   (exit {rc})")
    ratio, ratio_cpu = after / cj, after_cpu / cj_cpu
    verdict = "met" if max(ratio, ratio_cpu) <= 0.5 else ("met on CPU time" if ratio_cpu <= 0.5 else "MISSED")
    print(f"  kldcard / check-jsonschema = {ratio:.2f} wall, {ratio_cpu:.2f} CPU (target <= 0.5: {verdict})")
    if made:
        print(f"  before / after = {before / after:.2f} wall, {before_cpu / after_cpu:.2f} CPU")
    return 0 if ratio_cpu <= 0.5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
