"""Generated artefacts (JSON Schemas, rule docs, hook file) and the CI surfaces (pre-commit, action)."""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import generate
import pytest
import yaml
from helpers_lint import COMPLIANT, EXAMPLES, ROOT, front_matter

from kldcard.lint.registry import all_rules

CHECK_JSONSCHEMA = Path(sys.executable).with_name("check-jsonschema")
PRE_COMMIT = Path(sys.executable).with_name("pre-commit")


def test_generated_files_are_up_to_date():
    proc = subprocess.run([sys.executable, "scripts/generate.py", "--check"], capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 0, f"stale generated files (run `python scripts/generate.py`):\n{proc.stdout}"


def test_check_detects_drift_and_generate_repairs_it(tmp_path):
    root = tmp_path / "repo"
    assert generate.main(["--root", str(root)]) == 0  # writes everything into an empty tree
    assert generate.stale_files(root) == []
    (root / "docs" / "rules" / "KLD103.md").write_text("# edited by hand\n")
    (root / "docs" / "rules" / "KLD999.md").write_text("# a rule that no longer exists\n")
    (root / "schemas" / "kld-evaluation.schema.json").unlink()
    stale = {p.relative_to(root).as_posix() for p in generate.stale_files(root)}
    assert stale == {"docs/rules/KLD103.md", "docs/rules/KLD999.md", "schemas/kld-evaluation.schema.json"}
    assert generate.main(["--root", str(root), "--check"]) == 1
    assert (root / "docs" / "rules" / "KLD103.md").read_text() == "# edited by hand\n"  # --check writes nothing
    generate.main(["--root", str(root)])
    assert generate.stale_files(root) == [] and not (root / "docs" / "rules" / "KLD999.md").exists()


def test_schema_models_table_skips_modules_that_do_not_exist_yet():
    assert ("kldcard.capture.manifest", "CaptureManifest", "capture-manifest.schema.json") in generate.SCHEMA_MODELS
    assert ("kldcard.compare.result", "CompareResult", "compare-result.schema.json") in generate.SCHEMA_MODELS
    assert generate.model_schema("kldcard.not_written_yet", "Model", "x.json") is None


def test_rule_docs_are_ruff_style_and_indexed():
    rules = all_rules()
    index = (ROOT / "docs" / "rules" / "README.md").read_text()
    for code, rule in rules.items():
        doc = (ROOT / "docs" / "rules" / f"{code}.md").read_text()
        for heading in ("## What it does", "## Why is this bad?", "## Example", "## Use instead"):
            assert heading in doc, (code, heading)
        assert f"[{code}]({code}.md)" in index and rule.name in index


def test_pre_commit_hook_file_shape():
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    (hook,) = [h for h in hooks if h["id"] == "kldcard-lint"]
    assert hook["entry"] == "kldcard lint" and hook["language"] == "python"
    assert hook["files"] == r"(^|/)README\.md$"


def test_lint_report_schema_is_published():
    schema = json.loads((ROOT / "schemas" / "lint-report.schema.json").read_text())
    assert schema["required"] == ["status", "files", "errors"]


def test_check_jsonschema_validates_an_extracted_block(tmp_path):
    schema = ROOT / "schemas" / "kld-evaluation.schema.json"
    good = tmp_path / "block.json"
    good.write_text(json.dumps(front_matter(COMPLIANT)["kld_evaluation"]))
    proc = subprocess.run([CHECK_JSONSCHEMA, "--schemafile", schema, good], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # YAML input too, straight from a card's front matter
    good_yaml = tmp_path / "block.yaml"
    good_yaml.write_text(yaml.safe_dump(front_matter(COMPLIANT)["kld_evaluation"]))
    proc = subprocess.run([CHECK_JSONSCHEMA, "--schemafile", schema, good_yaml], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps(front_matter(EXAMPLES / "KLD103-missing-evaluation-text.md")["kld_evaluation"]))
    proc = subprocess.run([CHECK_JSONSCHEMA, "--schemafile", schema, bad], capture_output=True, text=True)
    assert proc.returncode == 1 and "sha256" in proc.stdout + proc.stderr


def test_action_yml_is_a_valid_composite_action_and_its_script_runs(tmp_path):
    action = ROOT / "action.yml"
    proc = subprocess.run([CHECK_JSONSCHEMA, "--builtin-schema", "vendor.github-actions", action], capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    spec = yaml.safe_load(action.read_text())
    assert spec["runs"]["using"] == "composite"
    assert {"paths", "select", "ignore", "version"} <= set(spec["inputs"])
    lint_step = spec["runs"]["steps"][-1]
    assert "kldcard" in lint_step["run"] and "-o github" in lint_step["run"]
    env = {
        **os.environ,
        "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}",
        "KLDCARD_PATHS": f"{COMPLIANT}\n{EXAMPLES / 'KLD202-quantized-reference.md'}",
        "KLDCARD_SELECT": "KLD1,KLD2",
        "KLDCARD_IGNORE": "",
        "KLDCARD_FAIL_ON": "",
    }
    proc = subprocess.run(["bash", "-c", lint_step["run"]], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert proc.returncode == 1
    assert proc.stdout.startswith("::warning file=") and "title=KLD202::" in proc.stdout
    proc = subprocess.run(["bash", "-c", lint_step["run"]], capture_output=True, text=True, env={**env, "KLDCARD_FAIL_ON": "error"}, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr


# --------------------------------------------------------------------------------------------
# pre-commit try-repo, for real: pre-commit builds a virtualenv and pip-installs this package.
# --------------------------------------------------------------------------------------------

# pre-commit pip-installs the hook's package into a fresh virtualenv. Resolving ~30 dependencies
# against the index costs about a minute of network round trips; a wheelhouse kept in the user's
# cache (keyed by the dependency list) turns every later run into an offline install of seconds.
WHEELHOUSE_ROOT = Path(os.environ.get("KLDCARD_TEST_WHEELHOUSE", Path.home() / ".cache" / "kldcard-tests" / "wheelhouse"))

PACKAGE_FILES = ["pyproject.toml", "setup.py", "README.md", "LICENSE", "kldcard", "schemas", "templates", ".pre-commit-hooks.yaml"]


def _git(cwd: Path, *args: str) -> None:
    env = {**os.environ, "GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.org", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.org"}
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, env=env)


@pytest.fixture(scope="module")
def hook_repo(tmp_path_factory):
    """This package's current working tree, committed in a throwaway git repo (try-repo needs a commit)."""
    repo = tmp_path_factory.mktemp("hook-repo")
    ignore = shutil.ignore_patterns("__pycache__", "*.pyc", "*.egg-info")
    for name in PACKAGE_FILES:
        src = ROOT / name
        if src.is_dir():
            shutil.copytree(src, repo / name, symlinks=True, ignore=ignore)
        elif src.is_file():
            shutil.copy2(src, repo / name)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "snapshot for pre-commit try-repo")
    return repo


def _wheelhouse(repo: Path) -> Path:
    """A directory of wheels for the hook's dependencies and build requirements, downloaded once."""
    meta = tomllib.loads((repo / "pyproject.toml").read_text())
    wanted = sorted([*meta["project"]["dependencies"], *meta["build-system"]["requires"], "wheel"])
    key = hashlib.sha256(json.dumps([sys.version_info[:2], wanted]).encode()).hexdigest()[:16]
    house = WHEELHOUSE_ROOT / key
    if not (house / ".complete").is_file():
        house.mkdir(parents=True, exist_ok=True)
        cmd = [sys.executable, "-m", "pip", "download", "--quiet", "--only-binary", ":all:", "--dest", house, *wanted]
        subprocess.run(cmd, check=True, capture_output=True, timeout=900)
        (house / ".complete").write_text("\n".join(wanted) + "\n")
    return house


def test_pre_commit_try_repo_runs_the_hook(hook_repo, tmp_path):
    work = tmp_path / "cards"
    (work / "models" / "good").mkdir(parents=True)
    (work / "models" / "bad").mkdir(parents=True)
    shutil.copy(COMPLIANT, work / "models" / "good" / "README.md")
    shutil.copy(EXAMPLES / "KLD205-calibration-is-evaluation-text.md", work / "models" / "bad" / "README.md")
    (work / "notes.md").write_text(COMPLIANT.read_text().replace("overlaps_evaluation_text: false", "overlaps_evaluation_text: true"))
    _git(work, "init", "-q")
    _git(work, "add", "-A")
    env = {
        **os.environ,
        "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
        "PIP_NO_INDEX": "1",
        "PIP_FIND_LINKS": str(_wheelhouse(hook_repo)),
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "NO_COLOR": "1",
    }

    def try_repo(*files: str) -> subprocess.CompletedProcess[str]:
        cmd = [PRE_COMMIT, "try-repo", hook_repo, "kldcard-lint", "--color", "never", "--files", *files]
        return subprocess.run(cmd, cwd=work, capture_output=True, text=True, env=env, timeout=900)

    ok = try_repo("models/good/README.md")
    assert ok.returncode == 0, ok.stdout + ok.stderr
    assert "Passed" in ok.stdout
    bad = try_repo("models/good/README.md", "models/bad/README.md", "notes.md")
    assert bad.returncode == 1, bad.stdout + bad.stderr
    assert "models/bad/README.md:" in bad.stdout and " error KLD205 " in bad.stdout
    assert "notes.md" not in bad.stdout.split("- hook id")[-1]  # files: (^|/)README\.md$ keeps other Markdown out
