"""kldcard evaluate with a served candidate: the real llama-cpp-python server on loopback, top-k
log-probabilities, the truncated KLD disclosed as such on a card that lints clean."""

from __future__ import annotations

import shutil
from pathlib import Path

import numpy as np
import pytest
import yaml
from test_openai_capture import TEXT, _start_server, _stop

from kldcard.errors import InputError
from kldcard.evaluate import evaluate, load_project

pytestmark = pytest.mark.engines

K = 10
# what the server's stack fingerprint cannot tell (a remote API) and the llama.cpp reference records
SERVER_COORDINATES = ["attention_backend", "backend", "engine", "kv_cache_dtype", "prefill_chunk"]


def _write_project(tmp: Path, models: dict, url: str) -> Path:
    shutil.copy(TEXT, tmp / "text.txt")
    data = {
        "reference": {"engine": "llama.cpp", "model": str(models["gguf_f32"])},
        "candidates": [
            {"name": "q4-local", "engine": "llama.cpp", "model": str(models["gguf_q4"])},
            {"name": "q4-served", "engine": "openai", "server": url, "model": "tiny", "top_k": K,
             "vocab_gguf": str(models["gguf_q4"]),
             "cross_stack": {"coordinates": SERVER_COORDINATES, "reason": "the server is what users query"}},
        ],
        "text": {"path": "text.txt", "name": "short text", "source": {"url": "https://example.org/short"}},
        "disclosures": {"reference": {"model": "tiny-qwen3-f32.gguf"}, "calibration": {"none": True}},
        "card": "card/README.md",
    }
    path = tmp / "project.yaml"
    path.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def served_run(tiny_qwen3, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("served")
    proc, url = _start_server(tiny_qwen3["gguf_q4"])
    try:
        path = _write_project(tmp, tiny_qwen3, url)
        yield tmp, evaluate(load_project(path), say=lambda s: None), path
    finally:
        _stop(proc)


def test_served_candidate_is_on_a_clean_card_with_its_own_top_k_vocabulary(served_run):
    from kldcard.lint.runner import lint_card

    tmp, out, _ = served_run
    card = tmp / "card" / "README.md"
    assert out.findings == 0 and lint_card(card).findings == []
    block = yaml.safe_load(card.read_text(encoding="utf-8").split("---\n")[1])["kld_evaluation"]
    local, served = block["candidates"]
    assert block["vocabulary"]["truncation"] == "full" and "vocabulary" not in local
    assert served["vocabulary"] == {"truncation": "top-k", "top_k": K, "tail": "lumped", "reference_vocab_size": 151936,
                                    "candidate_vocab_size": 151936, "alignment": "identical"}
    # the candidate's tail is unknown: no reverse KL or JS; the quantization read from the served GGUF
    assert "reverse_kld" not in served["results"] and "js" not in served["results"]
    assert served["model"]["quantization"] == "q4_k_m"
    assert served["runtime_changes"]["engine"] == "openai-server:llama-cpp-python"
    text = " ".join(card.read_text(encoding="utf-8").split())
    assert ("q4-served: its KLD is computed from the top-10 log-probabilities it reported (tail lumped): a lower "
            "bound on the full-vocabulary KL") in text
    assert out.evaluated == ["q4-local"] and len(out.served) == 1  # asked again every run, never cached


def test_served_kld_is_a_lower_bound_of_the_same_files_full_kld(served_run):
    from kldcard.capture.sparse import open_sparse_capture

    tmp, out, _ = served_run
    block = yaml.safe_load((tmp / "card" / "README.md").read_text(encoding="utf-8").split("---\n")[1])
    local, served = block["kld_evaluation"]["candidates"]
    (scratch,) = (tmp / ".kldcard-cache" / "served").iterdir()
    positions = open_sparse_capture(scratch).positions
    with np.load(out.candidates[0].per_token_path) as z:
        full = dict(zip(z["position"].tolist(), z["forward_kl"].tolist()))
    at_same = np.mean([full[int(q)] for q in positions])
    # the lumped KL of a coarse-graining never exceeds the full one (data-processing inequality)
    assert served["results"]["n_positions"] == len(positions) and 0 < served["results"]["kld"]["mean"] <= at_same
    # the card's number is the truncated comparison of the two captures, position by position
    from kldcard.capture.store import open_capture
    from kldcard.compare.truncated import compare_truncated

    ref = open_capture(tmp / ".kldcard-cache" / "reference" / out.reference_key)
    again = compare_truncated(ref, open_sparse_capture(scratch), treatment="lumped")
    assert again.positions == positions.tolist()
    assert served["results"]["kld"]["mean"] == pytest.approx(np.mean(again.per_position), rel=1e-12)
    assert served["results"]["kld"]["max"] == pytest.approx(again.max, rel=1e-12)


def test_cli_rerun_asks_the_server_again_and_reuses_the_local_result(served_run, capsys):
    from kldcard.cli.main import main

    tmp, first, path = served_run
    card = (tmp / "card" / "README.md").read_bytes()
    assert main(["evaluate", str(path), "--no-progress"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines == [f"q4-local\tcached\t{first.candidates[0].result_path}", "q4-served\tserved\t-"]
    assert (tmp / "card" / "README.md").read_bytes() == card  # the same server answers the same


def test_a_served_candidate_needs_its_server_and_top_k(tmp_path, tiny_qwen3):
    path = _write_project(tmp_path, tiny_qwen3, "http://127.0.0.1:9")
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    del data["candidates"][1]["top_k"]
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(InputError, match="needs top_k"):
        load_project(path)
    del data["candidates"][1]["server"]
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    with pytest.raises(InputError, match="engine: openai and server: URL"):
        load_project(path)
