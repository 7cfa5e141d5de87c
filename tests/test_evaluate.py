"""kldcard evaluate: one command from model files to a linted card, cached by content, resumable."""

from __future__ import annotations

import json
import re
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
import yaml
from helpers_evaluate import write_project

from kldcard.capture.quantization import contradiction, gguf_tensor_types, quantization_label
from kldcard.errors import InputError
from kldcard.evaluate import evaluate, load_project
from kldcard.evaluate.cache import check_free_disk

REPO = Path(__file__).resolve().parents[1]




def _gguf(models: dict, q: str) -> dict:
    return {"name": f"tiny-qwen3-{q}", "engine": "llama.cpp", "model": str(models[f"gguf_{q}"])}


@pytest.fixture(scope="module")
def evaluated(tiny_qwen3, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("evaluate")
    path = write_project(tmp, tiny_qwen3, [_gguf(tiny_qwen3, "q8_0"), _gguf(tiny_qwen3, "q4_k_m")])
    return tmp, path, evaluate(load_project(path), say=lambda s: None)


def _front_matter(card: Path) -> str:
    return card.read_text(encoding="utf-8").split("---\n")[1]


def test_evaluate_writes_a_clean_compact_card_with_measured_quantization(evaluated):
    tmp, _, first = evaluated
    assert first.findings == 0
    assert first.evaluated == ["tiny-qwen3-q8_0", "tiny-qwen3-q4_k_m"]
    card = tmp / "card" / "README.md"
    block = yaml.safe_load(_front_matter(card))["kld_evaluation"]
    q4 = block["candidates"][1]
    # measured from the tensor table, not taken from the file name
    assert q4["model"]["quantization"] == "q4_k_m" and q4["model"]["tensors"]["token_embd"] == "Q6_K"
    assert q4["model"]["tensors"]["file_type"] == "MOSTLY_Q4_K_M"
    # the shared stack once; the candidate states what differs
    assert "runtime" not in q4 and q4["runtime_changes"] == {"weights_dtype": "q4_k_m"}
    assert len(_front_matter(card).splitlines()) <= 150
    # no candidate logits were stored: only the reference capture holds logit shards
    cache = tmp / ".kldcard-cache"
    shards = list(cache.rglob("logits-*.safetensors"))
    assert shards and all("reference" in p.relative_to(cache).parts for p in shards)


def test_compact_front_matter_grows_at_most_20_lines_per_candidate(evaluated):
    from kldcard.render.section import render_section
    from kldcard.render.update import render_card_text
    from kldcard.schema import KldEvaluation

    tmp, _, _ = evaluated
    full = json.loads((tmp / "card" / "kld_evaluation.json").read_text(encoding="utf-8"))["kld_evaluation"]
    sizes = []
    for extra in range(3):
        data = json.loads(json.dumps(full))
        for k in range(extra):
            data["candidates"].append({**data["candidates"][1], "name": f"copy-{k}"})
        ev = KldEvaluation.model_validate(data)
        text = render_card_text("", ev, section=render_section(ev), model_name="m", compact=True)
        sizes.append(len(text.split("---\n")[1].splitlines()))
    assert sizes[0] <= 150 and sizes[1] - sizes[0] <= 20 and sizes[2] - sizes[1] <= 20, sizes


def test_huggingface_hub_reads_one_model_index_entry_with_distinct_results(evaluated):
    from huggingface_hub import ModelCard, ModelCardData

    tmp, _, _ = evaluated
    card = ModelCard((tmp / "card" / "README.md").read_text(encoding="utf-8"))
    data = card.data
    assert isinstance(data, ModelCardData) and data.model_name
    results = [r for r in data.eval_results if r.metric_type == "kl_divergence"]
    assert len(results) == 2 and all(type(r.metric_value) is float for r in results)
    # huggingface_hub merges results with equal (task, dataset type/config/split/revision): ours stay apart
    assert len({r.unique_identifier for r in results}) == 2
    assert {r.dataset_revision for r in results} == {yaml.safe_load(_front_matter(tmp / "card" / "README.md"))
                                                    ["kld_evaluation"]["evaluation_text"]["sha256"]}
    index = yaml.safe_load(_front_matter(tmp / "card" / "README.md"))["model-index"]
    assert len(index) == 1


def test_lint_checks_the_sidecar_and_the_stated_quantization(evaluated, tmp_path, tiny_qwen3):
    import shutil

    from kldcard.lint.runner import lint_card

    tmp, _, _ = evaluated
    shutil.copytree(tmp / "card", tmp_path / "card")
    card, side = tmp_path / "card" / "README.md", tmp_path / "card" / "kld_evaluation.json"
    assert lint_card(card).findings == []
    side.write_bytes(side.read_bytes() + b" ")
    assert [f.rule_id for f in lint_card(card).findings] == ["KLD012"]
    side.unlink()
    assert [f.rule_id for f in lint_card(card).findings] == ["KLD011"]
    shutil.copy(tmp / "card" / "kld_evaluation.json", side)
    text = card.read_text(encoding="utf-8")
    card.write_text(text.replace("quantization: q8_0,", "quantization: q4_k_m,", 1), encoding="utf-8")
    assert "KLD211" in [f.rule_id for f in lint_card(card).findings]
    # the file at hand: a GGUF next to the card contradicting the label (block without tensors)
    card.write_text(re.sub(r", tensors: \{[^}]*\}", "", text, count=1), encoding="utf-8")
    assert lint_card(card).findings == []
    shutil.copy(tiny_qwen3["gguf_q4"], tmp_path / "card" / "tiny-qwen3-q8_0.gguf")
    codes = [f.rule_id for f in lint_card(card).findings]
    assert "KLD211" in codes


def test_rerun_is_all_cached_and_a_new_candidate_is_the_only_work(evaluated, tiny_qwen3):
    tmp, path, first = evaluated
    card = (tmp / "card" / "README.md").read_bytes()
    again = evaluate(load_project(path), say=lambda s: None)
    assert again.evaluated == [] and again.reference_cached
    assert (tmp / "card" / "README.md").read_bytes() == card
    data = yaml.safe_load(path.read_text(encoding="utf-8"))
    # an MLX candidate against a llama.cpp reference is a cross-stack comparison; the project says so
    # on purpose, naming the coordinates (what KLD207 reports without it) and why
    coords = ["engine", "attention_backend", "compute_dtype", "kv_cache_dtype"]
    data["candidates"].append({"name": "tiny-qwen3-mlx-bf16", "engine": "mlx", "model": str(tiny_qwen3["hf"]),
                               "cross_stack": {"coordinates": coords, "reason": "what Apple-silicon users run"}})
    path.write_text(yaml.safe_dump(data), encoding="utf-8")
    more = evaluate(load_project(path), say=lambda s: None)
    assert more.evaluated == ["tiny-qwen3-mlx-bf16"]
    assert [c.result_path for c in more.candidates[:2]] == [c.result_path for c in first.candidates]
    assert more.findings == 0
    from kldcard.lint.runner import lint_card

    card_path = tmp / "card" / "README.md"
    assert lint_card(card_path).findings == []
    text = card_path.read_text(encoding="utf-8")
    block = yaml.safe_load(_front_matter(card_path))["kld_evaluation"]
    assert block["candidates"][2]["cross_stack"] == {"coordinates": coords, "reason": "what Apple-silicon users run"}
    assert "tiny-qwen3-mlx-bf16 was measured on mlx against a llama.cpp reference, on purpose" in text
    mlx_result = yaml.safe_load(_front_matter(card_path))["model-index"][0]["results"][2]
    assert mlx_result["metrics"][0]["args"]["cross_stack"] == ", ".join(coords)
    assert "on another stack (llama.cpp reference, mlx candidate)" in mlx_result["metrics"][0]["name"]
    assert "its KLD includes the stack difference as well as the quantization" in " ".join(text.split())
    # ranked with the same-stack candidates only: its KLD measures another quantity
    assert [e["name"] for e in block["comparison"]["ranking"]] != [] and "tiny-qwen3-mlx-bf16" not in {
        e["name"] for e in block["comparison"]["ranking"]}
    assert "tiny-qwen3-mlx-bf16" not in {e.name for e in more.ranking.ranking}
    assert "and it is left out of the paired ranking" in " ".join(text.split())
    # an unacknowledged difference still warns; an acknowledged one that does not exist is reported
    edited = text.replace("coordinates: [engine, attention_backend,", "coordinates: [tensor_parallel, attention_backend,")
    assert edited != text
    card_path.write_text(edited, encoding="utf-8")
    try:
        found = lint_card(card_path).findings
    finally:
        card_path.write_text(text, encoding="utf-8")
    assert [f.rule_id for f in found] == ["KLD207", "KLD207"]
    assert "stack coordinate engine differs" in found[0].message
    assert "acknowledges a stack difference in tensor_parallel" in found[1].message


def test_streamed_compare_equals_compare_of_two_stored_captures(tmp_path, tiny_qwen3):
    from kldcard.capture.run import run_capture
    from kldcard.compare.run import compare

    path = write_project(tmp_path, tiny_qwen3, [_gguf(tiny_qwen3, "q4_k_m")], card=None)
    out = evaluate(load_project(path), say=lambda s: None)
    with np.load(out.candidates[0].per_token_path) as f:
        streamed = {k: f[k] for k in f.files}
    ref_dir = tmp_path / ".kldcard-cache" / "reference" / out.reference_key
    cand = run_capture("llama.cpp", tiny_qwen3["gguf_q4"], tmp_path / "text.txt", tmp_path / "cand", positions="all",
                       store_dtype="f32", progress=False).capture
    _, td = compare(ref_dir, cand, bootstrap=0, return_per_token=True)
    # the same kernel on the same float32 rows: bit-identical per token
    assert np.array_equal(streamed["forward_kl"], td.forward_kl)
    assert np.array_equal(streamed["top1_cand"], td.top1_cand)


def test_sigkill_mid_run_then_rerun_finishes_and_skips_finished_work(tmp_path, tiny_qwen3, evaluated):
    path = write_project(tmp_path, tiny_qwen3, [_gguf(tiny_qwen3, "q8_0"), _gguf(tiny_qwen3, "q4_k_m")])
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    cmd = [sys.executable, "-m", "kldcard", "evaluate", str(path), "--no-progress"]
    results = tmp_path / ".kldcard-cache" / "results"
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 600
    # a result is complete when its sealed entry is written (last)
    while not list(results.glob("*.entry.json")) and proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert proc.poll() is None, "the run ended before it could be killed"
    proc.send_signal(signal.SIGKILL)
    proc.wait()
    done = list(results.glob("*.entry.json"))
    assert len(done) == 1  # the first candidate is complete, the second left nothing that looks complete
    first_bytes = done[0].read_bytes()
    json.loads(first_bytes)

    rerun = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert rerun.returncode == 0, rerun.stderr[-2000:]
    assert "tiny-qwen3-q8_0\tcached" in rerun.stdout and "tiny-qwen3-q4_k_m\tevaluated" in rerun.stdout
    assert done[0].read_bytes() == first_bytes
    third = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600)
    assert third.stdout.count("\tcached") == 2 and third.returncode == 0
    # identical to an uninterrupted run of the same job (the module's evaluated fixture), token by token
    _, _, clean = evaluated
    for line, ref in zip(sorted(third.stdout.splitlines()), sorted(clean.candidates[:2], key=lambda c: c.name)):
        name, _, result_path = line.split("\t")
        assert name == ref.name
        with np.load(Path(result_path).with_name(Path(result_path).stem + ".per-token.npz")) as resumed, \
                np.load(ref.per_token_path) as want:
            assert all(np.array_equal(resumed[k], want[k], equal_nan=True) for k in want.files)


def test_gguf_tensor_table_and_stated_quantization(tiny_qwen3):
    info = gguf_tensor_types(tiny_qwen3["gguf_q8_0"])
    assert info["file_type"] == "MOSTLY_Q8_0" and info["attention"] == "Q8_0"
    assert quantization_label(info) == "q8_0"
    assert contradiction("Q8_0", info) is None
    assert "q8_0" in contradiction("Q4_K_M", info)


def test_gguf_tensor_table_per_role_from_the_header_walk(tiny_qwen3, tmp_path):
    # the same table gguf.GGUFReader gives (that reader takes ~10 s on this 151,936-token vocabulary)
    assert gguf_tensor_types(tiny_qwen3["gguf_q4_k_m"]) == {
        "format": "gguf", "file_type": "MOSTLY_Q4_K_M", "token_embd": "Q6_K", "output": "tied to token_embd",
        "experts": None, "attention": "Q4_K ×7, Q6_K ×1", "feed_forward": "Q4_K ×5, Q6_K ×1"}
    cut = tmp_path / "cut.gguf"
    cut.write_bytes(Path(tiny_qwen3["gguf_q4_k_m"]).read_bytes()[:4096])  # the vocabulary cut short
    with pytest.raises(InputError, match="cannot read the GGUF tensor table"):
        gguf_tensor_types(cut)


def test_free_disk_check_refuses_with_the_numbers(tmp_path):
    with pytest.raises(InputError, match=r"needs about .* GiB and .* GiB free"):
        check_free_disk(tmp_path, 1 << 60, "a huge capture")


def test_push_dry_run_lists_one_commit_with_card_and_plot(tmp_path):
    from kldcard.evaluate.publish import commit_operations, describe

    card = tmp_path / "README.md"
    card.write_text("# card\n", encoding="utf-8")
    plot = tmp_path / "kld.png"
    plot.write_bytes(b"\x89PNG")
    ops = commit_operations(card, [plot])
    assert [o.path_in_repo for o in ops] == ["README.md", "kld.png"]
    lines = describe("owner/name", ops, create_pr=True)
    assert lines[0] == "one commit to owner/name (as a pull request): 2 file(s)"
    assert "add kld.png" in lines[2]


def test_cli_refuses_dry_run_without_push(tmp_path):
    from kldcard.cli.main import main

    assert main(["evaluate", "--dry-run", "--reference", "llama.cpp:x.gguf"]) == 2


def test_hub_files_only_for_the_named_benchmark_and_never_with_a_verify_token(evaluated):
    from huggingface_hub import parse_eval_result_entries

    from kldcard.evaluate.publish import eval_results_files
    from kldcard.schema import KldEvaluation

    tmp, _, _ = evaluated
    full = json.loads((tmp / "card" / "kld_evaluation.json").read_text(encoding="utf-8"))["kld_evaluation"]
    full["candidates"] = [c for c in full["candidates"] if "mlx" not in c["name"]]  # another test may add one
    with pytest.raises(InputError, match="not that dataset"):
        eval_results_files(KldEvaluation.model_validate(full), "Salesforce/wikitext", "wikitext-2")
    full["evaluation_text"]["source"] = {"dataset": "Salesforce/wikitext", "config": "wikitext-2-raw-v1",
                                         "split": "test", "revision": "b08601e04326c79dfdd32d625aee71d232d685c3"}
    files = eval_results_files(KldEvaluation.model_validate(full), "Salesforce/wikitext", "wikitext-2")
    assert sorted(files) == [".eval_results/kld-tiny-qwen3-q4_k_m.yaml", ".eval_results/kld-tiny-qwen3-q8_0.yaml"]
    entries = parse_eval_result_entries(yaml.safe_load(files[".eval_results/kld-tiny-qwen3-q8_0.yaml"]))
    assert entries[0].verify_token is None and entries[0].value == full["candidates"][0]["results"]["kld"]["mean"]
    assert b"verifyToken" not in b"".join(files.values())


def test_cli_push_dry_run_prints_one_commit_and_sends_nothing(evaluated, capsys):
    from kldcard.cli.main import main

    tmp, path, _ = evaluated
    code = main(["evaluate", str(path), "--push", "owner/name", "--dry-run", "--no-progress"])
    out = capsys.readouterr().out
    assert code == 0  # the MLX candidate added earlier in this module is measured across stacks on purpose
    assert "one commit to owner/name: 2 file(s)" in out
    assert "add README.md <- " in out and "add kld_evaluation.json <- " in out


def test_cli_cross_stack_flag_sets_the_candidates_acknowledgement(tmp_path, capsys):
    from kldcard.cli.evaluate import _project
    from kldcard.cli.main import build_parser, main

    text = tmp_path / "t.txt"
    text.write_text("some text\n", encoding="utf-8")
    argv = ["evaluate", "--reference", "llama.cpp:ref.gguf", "--candidate", "q4=llama.cpp:q4.gguf",
            "--candidate", "m4=mlx:mlx-4bit/", "--text", str(text)]
    project = _project(build_parser().parse_args(argv + ["--cross-stack", "m4=engine, kv_cache_dtype:the Mac build"]))
    assert [c.cross_stack for c in project.candidates][0] is None
    ack = project.candidates[1].cross_stack
    assert ack.coordinates == ["engine", "kv_cache_dtype"] and ack.reason == "the Mac build"
    assert main(argv + ["--cross-stack", "m5=engine:why"]) == 2
    assert "--cross-stack names no candidate: m5 (candidates: q4, m4)" in capsys.readouterr().err
    assert main(argv + ["--cross-stack", "m4=engine"]) == 2
    assert "give NAME=COORD[,COORD...]:REASON" in capsys.readouterr().err


def test_cli_flags_refuse_missing_disclosures_before_any_engine_runs(tmp_path, capsys):
    from kldcard.cli.main import main

    text = tmp_path / "t.txt"
    text.write_text("some text\n", encoding="utf-8")
    code = main(["evaluate", "--reference", "llama.cpp:ref.gguf", "--candidate", "q4=llama.cpp:q4.gguf",
                 "--text", str(text), "--card", str(tmp_path / "README.md"), "--no-progress"])
    err = capsys.readouterr().err
    assert code == 2 and "text.source" in err and "calibration" in err and "reference.model" not in err
    assert not (tmp_path / "README.md").exists()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("reference: [unclosed\n", r"project\.yaml:2:1: not valid YAML: expected ',' or '\]'"),
        ("a: " + "[" * 20000 + "\n", "nests too deeply"),
        ("- a\n- b\n", "a project file is a mapping"),
        ("reference: {engine: llama.cpp, model: m.gguf}\ncandidates: []\ntext: {path: t.txt}\n", "candidates"),
    ],
)
def test_bad_project_file_is_one_line(tmp_path, text, message):
    path = tmp_path / "project.yaml"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as exc:
        load_project(path)
    assert "\n" not in str(exc.value)
