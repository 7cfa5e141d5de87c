"""What the pre-commit hook and the GitHub Action install to lint a card: size and time, before and after
the lint-only base install (issue 15).

    python benchmarks/lint_install.py [--before a012690]

Both install kldcard the way those two do (``pip install <repo>``, no extras) into a fresh virtualenv:
"before" from an earlier commit (git worktree), "after" from this tree. pip's wheel cache is left as it
is, so the time is the install, not the download; run it twice to see a warm-cache figure.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def size_mb(path: Path) -> float:
    return sum(p.stat().st_size for p in path.rglob("*") if p.is_file() and not p.is_symlink()) / 1e6


def install(source: Path, venv: Path) -> tuple[float, float, list[str]]:
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
    py = venv / "bin" / "python"
    base = size_mb(venv)
    t0 = time.perf_counter()
    subprocess.run([str(py), "-m", "pip", "install", "--quiet", "--disable-pip-version-check",
                    "-c", str(ROOT / "constraints.txt"), str(source)], check=True)
    seconds = time.perf_counter() - t0
    freeze = subprocess.run([str(py), "-m", "pip", "freeze", "--exclude", "kldcard"], capture_output=True,
                            text=True, check=True).stdout.split()
    ok = subprocess.run([str(venv / "bin" / "kldcard"), "lint", str(ROOT / "examples" / "cards" / "compliant.md")],
                        capture_output=True).returncode
    if ok != 0:
        raise SystemExit(f"kldcard lint failed in the {source} install")
    return seconds, size_mb(venv) - base, freeze


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--before", default="a012690")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        worktree = Path(tmp) / "before-src"
        subprocess.run(["git", "worktree", "add", "--detach", str(worktree), args.before], cwd=ROOT,
                       check=True, capture_output=True)
        try:
            rows = [(f"before ({args.before})", *install(worktree, Path(tmp) / "v-before")),
                    ("after (this tree)", *install(ROOT, Path(tmp) / "v-after"))]
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(worktree)], cwd=ROOT, capture_output=True)
    print("pip install <repo> into a fresh venv, as pre-commit (language: python) and action.yml do")
    for name, s, mb, pkgs in rows:
        print(f"  {name:<20} {s:6.1f} s  {mb:7.1f} MB  {len(pkgs):3d} packages")
    (_, s0, mb0, p0), (_, s1, mb1, p1) = rows
    print(f"  after/before: time {s1 / s0:.2f}, size {mb1 / mb0:.2f}")
    gone = sorted({p.split('==')[0] for p in p0} - {p.split('==')[0] for p in p1})
    print(f"  no longer installed: {', '.join(gone)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
