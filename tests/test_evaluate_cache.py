"""kldcard evaluate's cache proves what it serves (issue 27): keyed by content, results and the
reference verified before use, identity from the key, leftovers of killed runs removed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import yaml
from helpers_evaluate import write_project

from kldcard.errors import InputError
from kldcard.evaluate import evaluate, load_project
from kldcard.files import sha256_file

REPO = Path(__file__).resolve().parents[1]
Q8, Q4 = "tiny-qwen3-q8_0", "tiny-qwen3-q4_k_m"




def _cands(models: dict) -> list[dict]:
    return [{"name": Q8, "engine": "llama.cpp", "model": str(models["gguf_q8_0"])},
            {"name": Q4, "engine": "llama.cpp", "model": str(models["gguf_q4_k_m"])}]


def _block(tmp: Path) -> dict:
    side = json.loads((tmp / "card" / "kld_evaluation.json").read_text(encoding="utf-8"))
    return side["kld_evaluation"]


def _by_name(tmp: Path) -> dict[str, tuple[str, float]]:
    """Card entry name -> (quantization, mean forward KLD)."""
    return {c["name"]: (c["model"]["quantization"], c["results"]["kld"]["mean"]) for c in _block(tmp)["candidates"]}


@pytest.fixture(scope="module")
def warm(tiny_qwen3, tmp_path_factory):
    """A project evaluated once: (directory, what its card says per candidate)."""
    tmp = tmp_path_factory.mktemp("warm")
    evaluate(load_project(write_project(tmp, tiny_qwen3, _cands(tiny_qwen3))), say=lambda s: None)
    return tmp, _by_name(tmp)


@pytest.fixture
def copy(warm, tmp_path):
    """A private copy of the warm project (cache included) to tamper with."""
    shutil.copytree(warm[0], tmp_path / "p")
    return tmp_path / "p"


def _run(tmp: Path):
    lines: list[str] = []
    out = evaluate(load_project(tmp / "project.yaml"), say=lines.append)
    return out, lines


def _results(tmp: Path) -> Path:
    return tmp / ".kldcard-cache" / "results"


def test_swapped_names_with_a_warm_cache_keep_each_files_quantization_and_kld(warm, copy):
    _, want = warm
    data = yaml.safe_load((copy / "project.yaml").read_text(encoding="utf-8"))
    a, b = data["candidates"]
    a["name"], b["name"] = b["name"], a["name"]
    (copy / "project.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    out, _ = _run(copy)
    assert out.evaluated == []  # both served from the cache
    got = _by_name(copy)
    # the name is the project's label; quantization and KLD stay those of the file it names
    assert got[Q4] == want[Q8] and got[Q8] == want[Q4]
    assert sorted(got.values()) == sorted(want.values())


def test_renamed_candidate_with_a_warm_cache_is_served_under_its_new_name(warm, copy):
    _, want = warm
    data = yaml.safe_load((copy / "project.yaml").read_text(encoding="utf-8"))
    data["candidates"][0]["name"] = "q8-renamed"
    (copy / "project.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    out, _ = _run(copy)
    assert out.evaluated == [] and out.findings == 0
    assert _by_name(copy) == {"q8-renamed": want[Q8], Q4: want[Q4]}


def test_hand_edited_cached_result_is_discarded_and_evaluated_again(warm, copy):
    _, want = warm
    (js,) = [p for p in _results(copy).glob("*.json") if not p.name.endswith(".entry.json")
             and json.loads(p.read_text())["forward_kl"]["mean"] == want[Q8][1]]
    data = json.loads(js.read_text(encoding="utf-8"))
    data["forward_kl"]["mean"] = 1.234e-06
    js.write_text(json.dumps(data), encoding="utf-8")
    out, lines = _run(copy)
    assert out.evaluated == [Q8]
    assert any(line.startswith("cache: result ") and Q8 in line and "discarded" in line for line in lines), lines
    assert _by_name(copy)[Q8] == want[Q8]


def test_truncated_result_and_garbage_sha256_json_are_discarded_with_one_line_each(warm, copy):
    _, want = warm
    js = next(p for p in _results(copy).glob("*.json") if not p.name.endswith(".entry.json"))
    js.write_bytes(js.read_bytes()[:100])
    (copy / ".kldcard-cache" / "sha256.json").write_bytes(b"\x00garbage{")
    out, lines = _run(copy)
    assert len(out.evaluated) == 1
    assert sum("sha256.json" in line and "discarded" in line for line in lines) == 1, lines
    assert sum(line.startswith("cache: result ") for line in lines) == 1, lines
    assert _by_name(copy) == want


def test_cached_reference_with_a_zeroed_row_and_its_mtime_restored_is_captured_again(warm, copy):
    _, want = warm
    ref = next((copy / ".kldcard-cache" / "reference").iterdir())
    shard = ref / "logits-00000.safetensors"
    st = shard.stat()
    manifest = json.loads((ref / "manifest.json").read_text(encoding="utf-8"))
    row = manifest["n_vocab"] * 4
    with open(shard, "r+b") as f:  # one row of float32 logits zeroed, the size kept
        f.seek(1024 + 5 * row)
        f.write(b"\0" * row)
    os.utime(shard, ns=(st.st_atime_ns, st.st_mtime_ns))
    shutil.rmtree(_results(copy))  # the candidates are compared with the reference again
    out, lines = _run(copy)
    assert not out.reference_cached
    assert any(line.startswith("cache: reference capture") and "failed verification" in line for line in lines), lines
    assert _by_name(copy) == want


def test_model_file_edited_in_place_with_size_and_mtime_restored_is_hashed_again(warm, copy):
    original = Path(yaml.safe_load((copy / "project.yaml").read_text())["candidates"][1]["model"])
    model = copy / "models" / original.name  # the same name and bytes: the same key
    model.parent.mkdir()
    shutil.copy(original, model)
    data = yaml.safe_load((copy / "project.yaml").read_text(encoding="utf-8"))
    data["candidates"][1]["model"] = str(model)
    (copy / "project.yaml").write_text(yaml.safe_dump(data), encoding="utf-8")
    first, _ = _run(copy)
    assert first.evaluated == []  # same bytes, same key: the warm result
    before = _block(copy)["candidates"][1]["model"]["sha256"]
    st = model.stat()
    with open(model, "r+b") as f:  # the last byte of the last tensor's data, size unchanged
        f.seek(-1, os.SEEK_END)
        last = f.read(1)
        f.seek(-1, os.SEEK_END)
        f.write(bytes([last[0] ^ 0x01]))
    os.utime(model, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert (model.stat().st_size, model.stat().st_mtime_ns) == (st.st_size, st.st_mtime_ns)
    out, _ = _run(copy)
    assert out.evaluated == [Q4]
    after = _block(copy)["candidates"][1]["model"]["sha256"]
    assert after != before and after == sha256_file(model)


@pytest.mark.parametrize("name", ["a/b", "..", "x\ny", " padded"])
def test_candidate_name_unusable_as_a_file_name_is_refused_before_any_engine_runs(tmp_path, tiny_qwen3, name):
    cands = _cands(tiny_qwen3)
    cands[0]["name"] = name
    path = write_project(tmp_path, tiny_qwen3, cands)
    with pytest.raises(InputError, match="candidate name") as exc:
        load_project(path)
    assert "\n" not in str(exc.value)


def test_push_dry_run_refuses_a_repo_id_that_is_no_repo_id(tmp_path, tiny_qwen3, capsys):
    from kldcard.cli.main import main

    path = write_project(tmp_path, tiny_qwen3, _cands(tiny_qwen3))
    code = main(["evaluate", str(path), "--push", "../../x y", "--dry-run", "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "--push" in err and "repo id" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / ".kldcard-cache").exists() and not (tmp_path / "card").exists()


def test_partial_reference_of_a_killed_run_is_removed_by_the_next_run_but_not_a_live_ones(tmp_path, tiny_qwen3):
    path = write_project(tmp_path, tiny_qwen3, _cands(tiny_qwen3)[:1])
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    refs = tmp_path / ".kldcard-cache" / "reference"
    proc = subprocess.Popen([sys.executable, "-m", "kldcard", "evaluate", str(path), "--no-progress"], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    while proc.poll() is None and time.monotonic() < deadline and not any(
            p.name.startswith(".") and ".partial-" in p.name and any(p.glob("logits-*")) for p in
            (refs.iterdir() if refs.is_dir() else [])):
        time.sleep(0.02)
    assert proc.poll() is None, "the run ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    (killed,) = [p for p in refs.iterdir() if ".partial-" in p.name]
    # a concurrently running writer's work directory: locked, and must survive the next run
    live = subprocess.Popen([sys.executable, "-c", "import sys, time; from pathlib import Path; "
                             "from kldcard.capture.partial import make_partial_dir; "
                             f"print(make_partial_dir(Path({str(refs / 'other')!r})), flush=True); time.sleep(600)"],
                            env=env, stdout=subprocess.PIPE, text=True)
    try:
        live_dir = Path(live.stdout.readline().strip())
        old = time.time() - 3600
        for d in (killed, live_dir):
            os.utime(d, (old, old))
        out, lines = _run(tmp_path)
        assert not killed.exists() and live_dir.is_dir()
        assert any("removed 1 unfinished reference capture" in line for line in lines), lines
        assert out.evaluated == [Q8]
    finally:
        live.kill()
        live.wait()
        live.stdout.close()
