"""The GitHub Action passes the new flags through: a baseline workflow run for real with bash."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import yaml
from helpers_lint import EXAMPLES, ROOT

KLD303 = EXAMPLES / "KLD303-prose-eval-text-missing.md"


def _step_env(tmp_path: Path, **inputs: str) -> tuple[str, dict[str, str]]:
    spec = yaml.safe_load((ROOT / "action.yml").read_text(encoding="utf-8"))
    assert {"baseline", "extend-select", "repos", "config", "exit-zero", "statistics"} <= set(spec["inputs"])
    step = spec["runs"]["steps"][-1]
    env = {k: v for k, v in os.environ.items() if not k.startswith("KLDCARD_")}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"
    for key in step["env"]:
        env[key] = ""
    env.update(inputs)
    return step["run"], env


def test_action_with_a_baseline_fails_only_on_new_findings(tmp_path):
    card = tmp_path / "README.md"
    card.write_bytes(KLD303.read_bytes())
    base = tmp_path / "kldcard-baseline.json"
    subprocess.run([sys.executable, "-m", "kldcard", "lint", "--write-baseline", base, card], check=True, capture_output=True, cwd=tmp_path)
    run, env = _step_env(tmp_path, KLDCARD_PATHS=str(card), KLDCARD_BASELINE=str(base), KLDCARD_STATISTICS="true")
    proc = subprocess.run(["bash", "-c", run], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "::error" not in proc.stdout
    card.write_text(card.read_text(encoding="utf-8").replace("0.0231", "0.0199"), encoding="utf-8")
    proc = subprocess.run(["bash", "-c", run], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 1 and "title=KLD303::" in proc.stdout
    assert "1\tKLD303\t" in proc.stdout  # the statistics step's count, in the log
    proc = subprocess.run(["bash", "-c", run], capture_output=True, text=True, env={**env, "KLDCARD_EXIT_ZERO": "true"}, cwd=tmp_path)
    assert proc.returncode == 0 and "title=KLD303::" in proc.stdout


def test_action_extend_select(tmp_path):
    run, env = _step_env(tmp_path, KLDCARD_PATHS=str(KLD303), KLDCARD_SELECT="KLD1", KLDCARD_EXTEND_SELECT="KLD303")
    proc = subprocess.run(["bash", "-c", run], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 1 and "title=KLD303::" in proc.stdout
