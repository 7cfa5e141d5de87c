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


# ---- the sidecar of a compact card: next to the card in the repo, from the card's commit ----------


def _compact_card() -> tuple[bytes, bytes]:
    """A compact card rendered from the compliant example's block, and its sidecar."""
    import yaml

    from kldcard.render.metadata import sidecar_bytes
    from kldcard.render.section import render_section
    from kldcard.render.update import render_card_text
    from kldcard.schema import KldEvaluation

    block = yaml.safe_load(COMPLIANT.read_text(encoding="utf-8").split("---\n")[1])["kld_evaluation"]
    ev = KldEvaluation.model_validate(block)
    card = render_card_text("", ev, section=render_section(ev), model_name="m", compact=True)
    return card.encode("utf-8"), sidecar_bytes(ev)


def _add_file(cache: Path, repo_id: str, commit: str, name: str, data: bytes) -> None:
    repo = cache / ("models--" + repo_id.replace("/", "--"))
    blob = hashlib.sha256(data).hexdigest()  # LFS-style blob name; any name works for a symlinked snapshot
    (repo / "blobs").mkdir(parents=True, exist_ok=True)
    (repo / "blobs" / blob).write_bytes(data)
    (repo / "snapshots" / commit).mkdir(parents=True, exist_ok=True)
    os.symlink(Path("..", "..", "blobs", blob), repo / "snapshots" / commit / name)


@pytest.fixture
def compact_hub(tmp_path):
    """Repo example-org/compact: README.md at COMMIT (main) and OLD_COMMIT, sidecars as each test adds."""
    cache = tmp_path / "hf-cache"
    card, side = _compact_card()
    _populate_cache(cache, "example-org/compact", {COMMIT: card, OLD_COMMIT: card})
    env = {"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(cache), "HF_HOME": str(tmp_path / "hf-home")}
    return cache, env, side


def test_hub_card_with_its_sidecar_at_the_same_commit_lints_clean(compact_hub):
    cache, env, side = compact_hub
    _add_file(cache, "example-org/compact", COMMIT, "kld_evaluation.json", side)
    proc = run_subprocess("lint", "hf://example-org/compact", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "All checks passed (1 card, no findings)." in proc.stdout


def test_hub_sidecar_with_another_sha256_is_kld012_and_comes_from_the_cards_commit(compact_hub):
    cache, env, side = compact_hub
    _add_file(cache, "example-org/compact", COMMIT, "kld_evaluation.json", side + b" ")
    _add_file(cache, "example-org/compact", OLD_COMMIT, "kld_evaluation.json", side)
    proc = run_subprocess("lint", "-o", "json", "hf://example-org/compact", env=env)
    assert proc.returncode == 1, proc.stderr
    errors = json.loads(proc.stdout)["errors"]
    assert [e["rule_id"] for e in errors] == ["KLD012"]
    assert errors[0]["file"] == "hf://example-org/compact/README.md"
    # pinned to the older commit: its own sidecar, not main's
    proc = run_subprocess("lint", f"hf://example-org/compact@{OLD_COMMIT}", env=env)
    assert proc.returncode == 0, proc.stdout + proc.stderr


def test_hub_sidecar_the_hub_said_is_missing_is_kld011(compact_hub):
    cache, env, _ = compact_hub
    # what huggingface_hub writes when the Hub answers 404 for a file at a commit
    marker = cache / "models--example-org--compact" / ".no_exist" / COMMIT / "kld_evaluation.json"
    marker.parent.mkdir(parents=True)
    marker.touch()
    proc = run_subprocess("lint", "-o", "json", "hf://example-org/compact", env=env)
    assert proc.returncode == 1, proc.stderr  # a warning fails at the default fail level
    errors = json.loads(proc.stdout)["errors"]
    assert [e["rule_id"] for e in errors] == ["KLD011"]
    assert "not next to the card" in errors[0]["message"]


def test_hub_sidecar_offline_and_not_cached_is_one_line_exit_2(compact_hub):
    _, env, _ = compact_hub
    proc = run_subprocess("lint", "hf://example-org/compact", env=env)
    assert proc.returncode == 2
    assert proc.stderr == (
        f"kldcard: error: hf://example-org/compact (at {COMMIT[:12]}): kld_evaluation.json is not in the local "
        "Hugging Face cache and HF_HUB_OFFLINE is set; download it once while online\n"
    )


def test_hub_sidecar_outside_the_repository_is_not_fetched_and_is_kld011(compact_hub, tmp_path):
    cache, env, side = compact_hub
    card, _ = _compact_card()
    evil = card.replace(b"file: kld_evaluation.json", b"file: ../../../outside.json")
    assert evil != card
    _populate_cache(tmp_path / "other", "example-org/evil", {COMMIT: evil})
    env = {**env, "HF_HUB_CACHE": str(tmp_path / "other")}
    proc = run_subprocess("lint", "-o", "json", "hf://example-org/evil", env=env)
    assert proc.returncode == 1, proc.stderr
    errors = json.loads(proc.stdout)["errors"]
    assert [e["rule_id"] for e in errors] == ["KLD011"], proc.stderr
    assert "not a path inside the card's repository" in errors[0]["message"]
