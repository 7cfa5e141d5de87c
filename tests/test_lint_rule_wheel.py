"""``kldcard rule CODE`` from an installed wheel, outside the checkout (the docs ship in the package)."""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import venv
from pathlib import Path

from helpers_lint import ROOT, run_cli


def test_rule_command_is_an_alias_of_show_rule(capsys):
    rc1, out1, _ = run_cli(capsys, "rule", "KLD303")
    rc2, out2, _ = run_cli(capsys, "lint", "--show-rule", "kld303")
    assert (rc1, rc2) == (0, 0) and out1 == out2 and out1.startswith("# KLD303 ")
    rc, _, err = run_cli(capsys, "rule", "KLD999")
    assert rc == 2 and "unknown rule" in err


def test_rule_doc_from_a_wheel_installed_outside_the_checkout(tmp_path):
    wheels = tmp_path / "wheels"
    subprocess.run(
        [sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q", "-w", str(wheels), str(ROOT)],
        check=True, capture_output=True, timeout=120,
    )
    wheel = next(wheels.glob("kldcard-*.whl"))
    env_dir = tmp_path / "venv"
    venv.EnvBuilder(with_pip=False).create(env_dir)
    py = env_dir / "bin" / "python"
    site = Path(subprocess.run([py, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], capture_output=True, text=True, check=True).stdout.strip())
    # the base requirements (pydantic, PyYAML, huggingface_hub) come from this interpreter's
    # site-packages, appended after the fresh venv's own, so the wheel's kldcard wins
    (site / "base-requirements.pth").write_text(sysconfig.get_paths()["purelib"] + "\n", encoding="utf-8")
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "-q", "--target", str(site), str(wheel)], check=True, capture_output=True, timeout=120)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    where = subprocess.run([py, "-c", "import kldcard; print(kldcard.__file__)"], capture_output=True, text=True, env=env, cwd=tmp_path, check=True)
    assert where.stdout.startswith(str(site))
    proc = subprocess.run([py, "-m", "kldcard", "rule", "KLD303"], capture_output=True, text=True, env=env, cwd=tmp_path, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("# KLD303 prose-eval-text-missing") and "## Why is this bad?" in proc.stdout
