"""Shared helpers for the linter tests (test_lint_*.py)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml

from kldcard.cli.main import main

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples" / "cards"
COMPLIANT = EXAMPLES / "compliant.md"
DATA = Path(__file__).resolve().parent / "data" / "lint"
FAILING = sorted(p for p in EXAMPLES.glob("KLD*.md"))


def run_cli(capsys, *argv: str) -> tuple[int, str, str]:
    """Run ``kldcard`` in-process; returns (exit code, stdout, stderr)."""
    capsys.readouterr()
    rc = main([str(a) for a in argv])
    out, err = capsys.readouterr()
    return rc, out, err


def run_subprocess(*argv: str, env: dict[str, str] | None = None, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    """Run ``python -m kldcard`` in a fresh interpreter (for env-dependent behaviour)."""
    full_env = {**os.environ, **(env or {})}
    return subprocess.run(
        [sys.executable, "-m", "kldcard", *map(str, argv)],
        capture_output=True,
        text=True,
        env=full_env,
        cwd=cwd or ROOT,
        timeout=120,
    )


def front_matter(path: Path) -> dict:
    text = path.read_text(encoding="utf-8")
    return yaml.safe_load(text.split("---\n", 2)[1])


def write_card(path: Path, metadata: dict | None, body: str = "# A model\n") -> Path:
    """A card file with ``metadata`` as front matter (None: no front matter)."""
    if metadata is None:
        path.write_text(body, encoding="utf-8")
    else:
        path.write_text("---\n" + yaml.safe_dump(metadata, sort_keys=False) + "---\n" + body, encoding="utf-8")
    return path
