"""hf://OWNER/NAME[@REVISION] cards from a Hugging Face cache laid out as huggingface_hub lays it out."""

from __future__ import annotations

import hashlib
import os
import json
from pathlib import Path

import pytest
from helpers_lint import COMPLIANT, EXAMPLES, run_subprocess

from kldcard.card.hub import parse_spec
from kldcard.errors import InputError

COMMIT = "3f1c9a7e5b2d4c6a8e0f1b3d5c7a9e2f4b6d8c0a"
OLD_COMMIT = "0a8c6e4b2d0f9a7c5e3b1d8f6a4c2e0b9d7f5a3c"


def _populate_cache(cache: Path, repo_id: str, files: dict[str, bytes]) -> None:
    """models--owner--name/{blobs/<sha1>, snapshots/<commit>/README.md -> ../../blobs/<sha1>, refs/main}."""
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    (repo / "blobs").mkdir(parents=True)
    (repo / "refs").mkdir()
    for commit, data in files.items():
        # non-LFS files are stored under their git blob sha1 (the etag the Hub sends)
        blob = hashlib.sha1(b"blob %d\0" % len(data) + data).hexdigest()
        (repo / "blobs" / blob).write_bytes(data)
        snap = repo / "snapshots" / commit
        snap.mkdir(parents=True)
        os.symlink(Path("..", "..", "blobs", blob), snap / "README.md")
    (repo / "refs" / "main").write_text(COMMIT)  # no trailing newline, as huggingface_hub writes it


@pytest.fixture
def hub_cache(tmp_path):
    cache = tmp_path / "hf-cache"
    _populate_cache(
        cache,
        "example-org/Llama-3.1-8B-GGUF",
        {
            COMMIT: (EXAMPLES / "KLD206-model-index-mismatch.md").read_bytes(),
            OLD_COMMIT: COMPLIANT.read_bytes(),
        },
    )
    env = {"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(cache), "HF_HOME": str(tmp_path / "hf-home")}
    return cache, env


def test_lint_hf_card_from_offline_cache(hub_cache):
    cache, env = hub_cache
    proc = run_subprocess("lint", "hf://example-org/Llama-3.1-8B-GGUF", env=env)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("hf://example-org/Llama-3.1-8B-GGUF/README.md:")
    assert " error KLD206 " in proc.stdout and proc.stderr == ""


def test_lint_hf_card_at_a_pinned_revision(hub_cache):
    _, env = hub_cache
    proc = run_subprocess("lint", f"hf://example-org/Llama-3.1-8B-GGUF@{OLD_COMMIT}", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "All checks passed (1 card, no findings)." in proc.stdout


def test_offline_flag_uses_local_files_only_without_the_env_var(hub_cache):
    cache, env = hub_cache
    env = {k: v for k, v in env.items() if k != "HF_HUB_OFFLINE"}
    proc = run_subprocess("lint", "--offline", "-o", "json", "hf://example-org/Llama-3.1-8B-GGUF", env={**env, "HF_HUB_OFFLINE": "0"})
    assert proc.returncode == 1, proc.stderr
    assert '"file": "hf://example-org/Llama-3.1-8B-GGUF/README.md"' in proc.stdout


def test_uncached_repo_offline_is_one_line_exit_2(hub_cache):
    _, env = hub_cache
    proc = run_subprocess("lint", "hf://example-org/not-downloaded", env=env)
    assert proc.returncode == 2
    assert proc.stderr == (
        "kldcard: error: hf://example-org/not-downloaded: README.md is not in the local Hugging Face cache "
        "and HF_HUB_OFFLINE is set; download it once while online\n"
    )


@pytest.mark.parametrize("spec", ["hf://", "hf://justaname", "hf://a/b/c", "hf://a/b@", "hf://../x/y", "hf://a b/c"])
def test_bad_spec(spec):
    with pytest.raises(InputError, match="not a Hub card spec"):
        parse_spec(spec)


def test_spec_parsing():
    assert str(parse_spec("hf://org/model")) == "hf://org/model"
    spec = parse_spec(f"hf://org/model.v2@{COMMIT}")
    assert (spec.repo_id, spec.revision) == ("org/model.v2", COMMIT)


def test_repos_file_one_summary_line_per_repo_and_errors_do_not_stop_the_run(hub_cache, tmp_path):
    _, env = hub_cache
    repos = tmp_path / "repos.txt"
    repos.write_text(
        "# cards of the org\nexample-org/Llama-3.1-8B-GGUF\n\nexample-org/missing-repo  # not cached\n"
        f"example-org/Llama-3.1-8B-GGUF@{OLD_COMMIT}\nexample-org/Llama-3.1-8B-GGUF\n",
        encoding="utf-8",
    )
    proc = run_subprocess("lint", "--repos", repos, "-o", "json", env=env)
    assert proc.returncode == 2  # one repo could not be read: exit 2 at the end, after the others
    summary = [ln for ln in proc.stderr.splitlines() if ln.startswith("kldcard: hf://")]
    assert summary == [
        f"kldcard: hf://example-org/Llama-3.1-8B-GGUF @ {COMMIT[:12]}: 1 finding",
        f"kldcard: hf://example-org/Llama-3.1-8B-GGUF@{OLD_COMMIT} @ {OLD_COMMIT[:12]}: 0 findings",
        f"kldcard: hf://example-org/Llama-3.1-8B-GGUF @ {COMMIT[:12]}: 1 finding",
    ]
    assert "kldcard: error: hf://example-org/missing-repo" in proc.stderr
    report = json.loads(proc.stdout)
    assert [e["rule_id"] for e in report["errors"]] == ["KLD206", "KLD206"]


def test_card_cache_fetches_a_repeated_repo_once(hub_cache, tmp_path):
    # huggingface_hub reads HF_HUB_CACHE at import time: run in a fresh interpreter
    _, env = hub_cache
    bad = tmp_path / "bad.txt"
    bad.write_text("not a repo\n", encoding="utf-8")
    code = (
        "from kldcard.card.hub import CardCache, read_repo_list\n"
        "from kldcard.errors import InputError\n"
        "c = CardCache(local_files_only=True)\n"
        "a, ra = c.fetch('hf://example-org/Llama-3.1-8B-GGUF')\n"
        "b, rb = c.fetch('hf://example-org/Llama-3.1-8B-GGUF')\n"
        "assert a == b and ra == rb, (a, b)\n"
        "print(ra, c.fetches)\n"
        "try:\n    read_repo_list(%r)\nexcept InputError as e:\n    print('bad:', e)\n" % str(bad)
    )
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env={**os.environ, **env}, timeout=60)
    assert proc.returncode == 0, proc.stderr
    first, second = proc.stdout.splitlines()
    assert first == f"{COMMIT} 1"
    assert "not a repo id" in second


def test_unfetchable_repo_is_an_error_case_in_junit_and_an_issue_in_gitlab(hub_cache, tmp_path):
    from junitparser import Error, JUnitXml

    _, env = hub_cache
    repos = tmp_path / "repos.txt"
    repos.write_text("example-org/Llama-3.1-8B-GGUF\nexample-org/missing-repo\n", encoding="utf-8")
    out = tmp_path / "junit.xml"
    proc = run_subprocess("lint", "--repos", repos, "-o", "junit", "--output-file", out, env=env)
    assert proc.returncode == 2
    cases = {c.name: c for suite in JUnitXml.fromfile(str(out)) for c in suite}
    errors = [r for r in cases["hf://example-org/missing-repo"].result if isinstance(r, Error)]
    assert len(errors) == 1 and "not in the local Hugging Face cache" in errors[0].message
    proc = run_subprocess("lint", "--repos", repos, "-o", "gitlab", env=env)
    issues = json.loads(proc.stdout)
    assert proc.returncode == 2 and [i["check_name"] for i in issues] == ["KLD206", "kldcard-input-error"]
