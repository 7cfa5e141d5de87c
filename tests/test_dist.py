"""Distributed compare on a real Dask cluster (scheduler + workers as separate processes on
loopback): results identical to the local run, bit for bit; a worker killed mid-run changes nothing;
an unreachable scheduler is one line and exit 2."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from helpers_dist import Cluster, make_pair

from kldcard.capture.store import create_capture_from_arrays
from kldcard.compare.run import CompareResult, compare
from kldcard.compare.stacks import compare_stacks
from kldcard.distributed.cluster import connect
from kldcard.distributed.compare import compare_on_cluster, compare_stacks_on_cluster
from kldcard.distributed.tasks import compare_rows
from kldcard.distributed.urls import open_capture_url
from kldcard.errors import InputError, NonFiniteLogits

VOLATILE = {"created_utc", "numerics"}  # numerics.threads records the thread count, nothing else differs


def _same_per_token(a, b) -> None:
    ca, cb = a.columns(), b.columns()
    assert list(ca) == list(cb)
    for k in ca:
        assert ca[k].dtype == cb[k].dtype, k
        assert ca[k].tobytes() == cb[k].tobytes(), f"{k} differs"  # bit for bit, NaN included


def _same_result(dist: CompareResult, local: CompareResult) -> None:
    assert dist.model_dump(exclude=VOLATILE) == local.model_dump(exclude=VOLATILE)
    assert dist.numerics.robust_rows == local.numerics.robust_rows


@pytest.fixture(scope="module")
def cluster(tmp_path_factory):
    c = Cluster(tmp_path_factory.mktemp("cluster"), n_workers=2)
    try:
        yield c
    finally:
        c.close()


@pytest.fixture(scope="module")
def client(cluster):
    cl = connect(cluster.address, timeout=30)
    cl.wait_for_workers(2, timeout=60)
    yield cl
    cl.close()


@pytest.fixture(scope="module")
def pair(tmp_path_factory):
    # different shard sizes on the two sides: task ranges are cut at both sides' shard boundaries
    return make_pair(tmp_path_factory.mktemp("pair"), n=300, v=512, shard=40, cand_shard=70)


# ----------------------------------------------------------------------------------------------
# Opening by URL (no cluster)
# ----------------------------------------------------------------------------------------------


def test_byte_range_reader_reads_the_same_rows_as_the_memory_map(pair):
    ref, _ = pair
    mm = open_capture_url(ref)
    br = open_capture_url(f"file://{ref}", mmap=False, verify=True)
    assert mm.memory_mapped and not br.memory_mapped
    assert np.array_equal(mm.positions, br.positions) and np.array_equal(mm.token_ids, br.token_ids)
    assert mm.shard_starts == br.shard_starts == list(range(0, 300, 40))
    for a, b in [(0, 1), (35, 85), (0, 300), (299, 300), (120, 120)]:
        x, y = mm.read_rows(a, b), br.read_rows(a, b)
        assert x.dtype == y.dtype == np.uint16 and x.shape == y.shape == (b - a, 512)
        assert np.array_equal(x, y)


def test_task_values_do_not_depend_on_the_reader(pair):
    ref, cand = (str(p) for p in pair)
    a = compare_rows(ref, cand, 512, 30, 90, True)
    b = compare_rows(f"file://{ref}", f"file://{cand}", 512, 30, 90, False)
    for k in ("forward_kl", "reverse_kl", "js", "p_ref", "top1_ref"):
        assert a[k].tobytes() == b[k].tobytes()
    assert np.all(a["forward_kl"] > 0)


def test_damaged_capture_is_one_clear_error_through_the_url_reader(tmp_path):
    ref, _ = make_pair(tmp_path, n=20, v=64, shard=8)
    shard = ref / "logits-00001.safetensors"
    with open(shard, "ab") as f:
        f.write(b"x")
    with pytest.raises(Exception) as exc:
        open_capture_url(f"file://{ref}", mmap=False)
    assert "size" in str(exc.value) and "logits-00001" in str(exc.value)


# ----------------------------------------------------------------------------------------------
# On the cluster
# ----------------------------------------------------------------------------------------------


def test_distributed_compare_is_identical_to_local(client, pair):
    ref, cand = pair
    local, ltd = compare(ref, cand, return_per_token=True, bootstrap=200, seed=7)
    seen = []
    dist, dtd = compare_on_cluster(client, str(ref), f"file://{cand}", bootstrap=200, seed=7, task_positions=16,
                                   return_per_token=True, progress=seen.append)
    _same_per_token(dtd, ltd)
    _same_result(dist, local)
    assert dist.forward_kl.ci_low is not None and dist.forward_kl.ci_low == local.forward_kl.ci_low
    assert sum(seen) == 300 and len(seen) > 10  # tasks cut by 16 positions and by both sides' shards
    assert dist.numerics.threads == 2


def test_distributed_compare_over_byte_ranges_is_identical(client, pair):
    ref, cand = pair
    local = compare(ref, cand, bootstrap=50)
    dist = compare_on_cluster(client, f"file://{ref}", f"file://{cand}", bootstrap=50, mmap=False)
    assert dist.model_dump(exclude=VOLATILE | {"reference_path", "candidate_path"}) == \
        local.model_dump(exclude=VOLATILE | {"reference_path", "candidate_path"})
    assert dist.reference_path == f"file://{ref}"


def test_non_finite_logits_are_named_as_locally(client, tmp_path):
    rng = np.random.default_rng(3)
    z = rng.standard_normal((30, 64), dtype=np.float32)
    bad = z.copy()
    bad[[4, 21], 5] = np.nan
    ids = rng.integers(0, 64, 31)
    meta = {"model": {"name": "m", "format": "npy"}}
    create_capture_from_arrays(tmp_path / "r", z, np.arange(30), ids, meta, shard_positions=8)
    create_capture_from_arrays(tmp_path / "c", bad, np.arange(30), ids, meta, shard_positions=8)
    with pytest.raises(NonFiniteLogits) as loc:
        compare(tmp_path / "r", tmp_path / "c")
    with pytest.raises(NonFiniteLogits) as dist:
        compare_on_cluster(client, str(tmp_path / "r"), str(tmp_path / "c"), task_positions=4)
    assert dist.value.positions == loc.value.positions == [4, 21]
    assert str(dist.value) == str(loc.value)


def test_distributed_stacks_are_identical_to_local(client, tmp_path):
    a, b = make_pair(tmp_path, n=90, v=256, shard=25, seed=1, sigma=0.3)
    c, _ = make_pair(tmp_path, n=90, v=256, shard=30, seed=1, sigma=0.3, names=("c", "unused"))
    paths = [str(a), str(b), str(c)]
    local = compare_stacks(paths, threads=2)
    dist = compare_stacks_on_cluster(client, paths, task_positions=7)
    assert dist.to_dict() == local.to_dict()
    for name in ("pairwise_kl", "kl_to_centroid", "top1", "pairwise_kl_mean", "top1_disagreement"):
        assert getattr(dist, name).tobytes() == getattr(local, name).tobytes(), name
    assert dist.pairwise_kl_mean[0, 1] > 0 and dist.pairwise_kl_mean[0, 2] == 0  # a and c are the same logits


def _matrix_captures(root: Path):
    ra, ca = make_pair(root, n=60, v=128, shard=16, seed=0, names=("ref-a", "q4-a"), meta_text="prompt-a")
    _, ca2 = make_pair(root, n=60, v=128, shard=16, seed=0, sigma=0.2, names=("ref-a2", "q2-a"), meta_text="prompt-a")
    rb, cb = make_pair(root, n=45, v=128, shard=16, seed=5, names=("ref-b", "q4-b"), meta_text="prompt-b")
    lonely, _ = make_pair(root, n=10, v=128, shard=16, seed=9, names=("lonely", "lonely-c"), meta_text="prompt-c")
    return [ra, rb], [ca, ca2, cb, lonely]


def test_matrix_cli_on_the_cluster_matches_local(cluster, tmp_path, monkeypatch, capsys):
    from kldcard.cli import main as cli_main

    if "matrix" not in cli_main.COMMANDS:  # until the lead registers the command
        monkeypatch.setattr(cli_main, "COMMANDS", [*cli_main.COMMANDS, "matrix"])
    refs, cands = _matrix_captures(tmp_path / "caps")
    args = ["matrix", "--reference", *map(str, refs), "--candidate", *map(str, cands), "--bootstrap", "100"]
    rc = cli_main.main([*args, "-o", str(tmp_path / "dist.json"), "--markdown", str(tmp_path / "dist.md"),
                        "--results-dir", str(tmp_path / "results"), "--scheduler", str(cluster.file),
                        "--task-positions", "8"])
    out = capsys.readouterr().out
    assert rc == 0, out
    assert cli_main.main([*args, "-o", str(tmp_path / "local.json")]) == 0
    dist, local = (json.loads((tmp_path / n).read_text()) for n in ("dist.json", "local.json"))
    assert len(dist["rows"]) == 3  # prompt-a: ref-a x {q4-a, q2-a}; prompt-b: ref-b x q4-b
    assert dist["rows"] == local["rows"]
    assert [r["prompt"] for r in dist["rows"]] == ["prompt-a", "prompt-a", "prompt-b"]
    assert dist["rows"][1]["forward_kl_mean"] > dist["rows"][0]["forward_kl_mean"] > 0  # more noise, more KL
    assert dist["unmatched"] == [str(cands[3])] and "not compared" in out
    assert dist["units"] == "nats" and dist["scheduler"].startswith("tcp://127.0.0.1:")
    md = (tmp_path / "dist.md").read_text()
    assert "KL(P_ref || P_cand)" in md and md.count("| prompt-a |") == 2
    files = sorted((tmp_path / "results").iterdir())
    assert len(files) == 3
    res = CompareResult.model_validate_json(files[0].read_text())
    assert res.forward_kl.mean == dist["rows"][0]["forward_kl_mean"]


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize("where", ["address", "file"])
def test_unreachable_scheduler_is_one_line_and_exit_2(tmp_path, where):
    refs, cands = _matrix_captures(tmp_path / "caps")
    sched = f"tcp://127.0.0.1:{_free_port()}" if where == "address" else str(tmp_path / "nope" / "scheduler.json")
    code = ("import sys; from kldcard.cli import main as m\n"
            "m.COMMANDS.append('matrix') if 'matrix' not in m.COMMANDS else None\n"
            "sys.exit(m.main(sys.argv[1:]))")
    out = tmp_path / "t.json"
    p = subprocess.run([sys.executable, "-c", code, "matrix", "--reference", str(refs[0]), "--candidate",
                        str(cands[0]), "-o", str(out), "--scheduler", sched, "--connect-timeout", "2"],
                       capture_output=True, text=True, timeout=60)
    assert p.returncode == 2, p.stderr
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("kldcard: error:"), p.stderr
    assert "scheduler" in lines[0] and "Traceback" not in p.stderr
    assert not out.exists()


def test_connect_timeout_is_respected(tmp_path):
    import time

    t0 = time.monotonic()
    with pytest.raises(InputError, match="within 1 s"):
        connect(f"tcp://127.0.0.1:{_free_port()}", timeout=1)
    assert time.monotonic() - t0 < 15


# ----------------------------------------------------------------------------------------------
# Faults: a worker killed mid-run (its own cluster: the kill must not disturb other tests)
# ----------------------------------------------------------------------------------------------


def test_worker_killed_mid_run_changes_nothing(tmp_path, pair):
    ref, cand = pair
    local, ltd = compare(ref, cand, return_per_token=True, bootstrap=100)
    (tmp_path / "kill").mkdir()
    c = Cluster(tmp_path / "kill", n_workers=2)
    try:
        cl = connect(str(c.file), timeout=30)
        cl.wait_for_workers(2, timeout=60)
        victim_name = "w1"
        state = {"done": 0, "killed_with": None}

        def progress(n: int) -> None:
            state["done"] += n
            if state["killed_with"] is None:
                # the victim is still busy with its share of the graph when it dies
                processing = {cl.scheduler_info()["workers"][a]["name"]: len(t) for a, t in cl.processing().items()}
                state["killed_with"] = processing.get(victim_name, 0)
                Cluster.kill(c.workers[1])

        # 300 positions in tasks of 4 (76 tasks), each held 40 ms: about 1.5 s on two workers
        dist, dtd = compare_on_cluster(cl, str(ref), str(cand), bootstrap=100, task_positions=4,
                                       return_per_token=True, progress=progress, slow_s=0.04)
        assert state["killed_with"] and state["killed_with"] > 0
        assert state["done"] == 300
        assert len(cl.scheduler_info()["workers"]) == 1  # the run finished on the survivor
        _same_per_token(dtd, ltd)
        _same_result(dist, local)
        cl.close()
    finally:
        c.close()


def test_kill_helper_really_kills(tmp_path):
    # the fault test is only as good as the kill: the worker's whole process group must be gone
    (tmp_path / "k").mkdir()
    c = Cluster(tmp_path / "k", n_workers=1)
    try:
        w = c.workers[0]
        Cluster.kill(w)
        assert w.poll() is not None
        with pytest.raises(ProcessLookupError):
            os.killpg(w.pid, 0)
    finally:
        c.close()
    assert all(p.poll() is not None for p in c.procs)


# ----------------------------------------------------------------------------------------------
# The hooks ``kldcard compare --scheduler`` and ``kldcard stacks --scheduler`` call
# ----------------------------------------------------------------------------------------------


def _command_parser(name: str):
    import argparse
    from importlib import import_module

    from kldcard.cli.cluster import add_scheduler_arguments

    sub = argparse.ArgumentParser(prog="kldcard").add_subparsers()
    p = import_module(f"kldcard.cli.{name}").add_parser(sub)
    add_scheduler_arguments(p)  # a no-op once the command has the option itself
    add_scheduler_arguments(p)
    return p


def test_compare_hook_takes_the_compare_commands_arguments(cluster, pair):
    from kldcard.cli.cluster import compare_from_args
    from kldcard.compare.summary import DEFAULT_PERCENTILES

    ref, cand = pair
    args = _command_parser("compare").parse_args(
        [str(ref), str(cand), "-o", "unused.json", "--bootstrap", "64", "--seed", "3", "--buckets", "width:100",
         "--scheduler", cluster.address])
    dist, dtd = compare_from_args(args, percentiles=DEFAULT_PERCENTILES)
    local, ltd = compare(ref, cand, bootstrap=64, seed=3, buckets="width:100", return_per_token=True)
    _same_per_token(dtd, ltd)
    _same_result(dist, local)
    assert [r.start for r in dist.ranges] == [0, 100, 200]


def test_stacks_hook_takes_the_stacks_commands_arguments(cluster, tmp_path):
    from kldcard.cli.cluster import stacks_from_args

    a, b = make_pair(tmp_path, n=50, v=128, shard=20, seed=2)
    args = _command_parser("stacks").parse_args([str(a), str(b), "--gap", "3", "--scheduler", str(cluster.file)])
    assert stacks_from_args(args).to_dict() == compare_stacks([a, b], gap=3).to_dict()


def test_matrix_without_a_cluster_reads_urls_in_process(tmp_path):
    from kldcard.distributed.matrix import plan_matrix, run_matrix

    refs, cands = _matrix_captures(tmp_path)
    mm = run_matrix(plan_matrix(refs, cands[:3]), None, bootstrap=30)
    urls = run_matrix(plan_matrix([f"file://{r}" for r in refs], [f"file://{c}" for c in cands[:3]], mmap=False),
                      None, bootstrap=30, task_positions=5)
    keep = ("prompt", "n_positions", "vocabulary", "forward_kl_mean", "forward_kl_se", "forward_kl_ci",
            "forward_kl_p99", "reverse_kl_mean", "js_mean", "top1_agreement", "rms_delta_p", "ln_ppl_ratio")
    assert [{k: r[k] for k in keep} for r in urls.rows] == [{k: r[k] for k in keep} for r in mm.rows]
    assert not mm.unmatched and len(mm.rows) == 3 and "| prompt-b |" in mm.markdown()


def test_a_capture_replaced_at_the_same_path_is_never_read_stale(tmp_path):
    from kldcard.distributed.urls import cached_capture
    from kldcard.errors import CorruptCapture

    ref, cand = make_pair(tmp_path, n=20, v=64, shard=8, seed=1)
    planned = open_capture_url(ref).fingerprint
    first = compare_rows(str(ref), str(cand), 64, 0, 20, True, 0.0, (planned, open_capture_url(cand).fingerprint))
    assert cached_capture(str(ref)).fingerprint == planned
    make_pair(tmp_path / "other", n=20, v=64, shard=8, seed=2)
    import shutil

    shutil.rmtree(ref)
    shutil.copytree(tmp_path / "other" / "ref", ref)  # same path, different content
    with pytest.raises(CorruptCapture, match="changed since the comparison was planned"):
        compare_rows(str(ref), str(cand), 64, 0, 20, True, 0.0, (planned, None))
    fresh = open_capture_url(ref).fingerprint
    again = compare_rows(str(ref), str(cand), 64, 0, 20, True, 0.0, (fresh, None))
    assert again["forward_kl"].tobytes() != first["forward_kl"].tobytes()


def test_a_service_that_is_not_a_scheduler_is_one_clear_error():
    import threading

    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(4)

    def answer() -> None:  # an HTTP server where the scheduler should be
        while True:
            try:
                conn, _ = srv.accept()
            except OSError:
                return
            with conn:
                conn.sendall(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n" * 8)

    t = threading.Thread(target=answer, daemon=True)
    t.start()
    try:
        with pytest.raises(InputError, match="not as a Dask scheduler|cannot reach the Dask scheduler"):
            connect(f"tcp://127.0.0.1:{srv.getsockname()[1]}", timeout=2)
    finally:
        srv.close()
        t.join(timeout=5)
