"""One-card ``kldcard lint`` wall time (a fresh process, as pre-commit and CI run it), side by side with
check-jsonschema validating the same card's extracted ``kld_evaluation`` block against the published
schema, and with kldcard as it was before the stage layout (an earlier commit, run from a git worktree).

    .venv/bin/python benchmarks/lint_startup.py [--runs 9] [--before a012690]

Each figure is the median of ``--runs`` cold processes (the OS page cache is warm after the first).
Target (issue 15): kldcard within 1.5x of check-jsonschema.
"""

from __future__ import annotations

import argparse
import json
import os
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


def wall(cmd: list[str], runs: int, env: dict | None = None, cwd: Path | None = None) -> tuple[float, int]:
    times, rc = [], 0
    for _ in range(runs):
        t0 = time.perf_counter()
        proc = subprocess.run(cmd, capture_output=True, env=env, cwd=cwd)
        times.append(time.perf_counter() - t0)
        rc = proc.returncode
    return statistics.median(times), rc


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--before", default="a012690", help="commit of the flat layout (default: the last one)")
    args = ap.parse_args()
    text = CARD.read_text(encoding="utf-8")
    block = yaml.safe_load(text.split("---", 2)[1])["kld_evaluation"]
    with tempfile.TemporaryDirectory() as tmp:
        inst = Path(tmp) / "block.json"
        inst.write_text(json.dumps(block))
        rows = []
        after, rc = wall([str(BIN / "kldcard"), "lint", str(CARD)], args.runs)
        rows.append(("kldcard lint (this tree)", after, rc))
        worktree = Path(tmp) / "before"
        made = subprocess.run(["git", "worktree", "add", "--detach", str(worktree), args.before],
                              cwd=ROOT, capture_output=True).returncode == 0
        if made:
            try:
                env = {**os.environ, "PYTHONPATH": str(worktree)}
                code = "import sys; from kldcard.cli.main import main; sys.exit(main(sys.argv[1:]))"
                before, rc_b = wall([sys.executable, "-c", code, "lint", str(CARD)], args.runs, env=env, cwd=tmp)
                rows.append((f"kldcard lint (before, {args.before})", before, rc_b))
            finally:
                subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, capture_output=True)
        cj, rc_c = wall([str(BIN / "check-jsonschema"), "--schemafile", str(SCHEMA), str(inst)], args.runs)
        rows.append(("check-jsonschema on the extracted block", cj, rc_c))
    print(f"one card ({CARD.relative_to(ROOT)}, {len(text.encode()) / 1024:.1f} KiB), median of {args.runs} "
          f"fresh processes, Python {sys.version.split()[0]}")
    for name, t, rc in rows:
        print(f"  {name:<44} {t * 1e3:7.0f} ms   (exit {rc})")
    ratio = after / cj
    print(f"  kldcard / check-jsonschema = {ratio:.2f} (target <= 1.5: {'met' if ratio <= 1.5 else 'MISSED'})")
    if made:
        print(f"  before / after = {before / after:.2f}")
    return 0 if ratio <= 1.5 else 1


if __name__ == "__main__":
    raise SystemExit(main())
