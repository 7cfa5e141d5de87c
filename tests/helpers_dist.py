"""A real Dask cluster on loopback for the distributed tests: a scheduler and workers started as
separate processes with the venv's ``dask`` executable, each in its own process group so a test can
kill one worker outright and the finalizer can always tear everything down."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

from kldcard.capture.store import create_capture_from_arrays

DASK = str(Path(sys.executable).with_name("dask"))
META = {"model": {"name": "dist-test", "format": "npy"}, "text": {"name": "prompt-a"}}


def make_pair(root: Path, *, n: int = 300, v: int = 512, shard: int = 40, seed: int = 0, sigma: float = 0.05,
              names=("ref", "cand"), meta_text: str = "prompt-a", cand_shard: int | None = None):
    """Reference and candidate captures from seeded numpy arrays (candidate = reference + noise),
    several shards each (different shard sizes when ``cand_shard`` is given)."""
    rng = np.random.default_rng(seed)
    ids = rng.integers(0, v, size=n + 1).astype(np.int32)
    zr = rng.standard_normal((n, v), dtype=np.float32) * np.float32(2.0)
    zr[:, :8] += np.float32(6.0)
    zc = zr + rng.standard_normal((n, v), dtype=np.float32) * np.float32(sigma)
    pos = np.arange(n)
    out = []
    for name, z, sh, model in ((names[0], zr, shard, "ref-model"), (names[1], zc, cand_shard or shard, "cand-model")):
        meta = {"model": {"name": model, "format": "npy"}, "text": {"name": meta_text}}
        create_capture_from_arrays(root / name, z, pos, ids, meta, shard_positions=sh)
        out.append(root / name)
    return out


class Cluster:
    def __init__(self, tmp: Path, n_workers: int = 2):
        self.tmp = tmp
        self.file = tmp / "scheduler.json"
        self.procs: list[subprocess.Popen] = []
        self.logs = []
        env = {**os.environ, "OMP_NUM_THREADS": "1", "OPENBLAS_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
        self.env = env
        self.scheduler = self._start("scheduler", [DASK, "scheduler", "--host", "127.0.0.1", "--port", "0",
                                                   "--no-dashboard", "--scheduler-file", str(self.file)])
        self._wait(lambda: self.file.is_file() and self.file.stat().st_size > 0, "scheduler file")
        self.address = json.loads(self.file.read_text())["address"]
        self.workers = [self.start_worker(i) for i in range(n_workers)]

    def _start(self, name: str, cmd: list[str]) -> subprocess.Popen:
        log = open(self.tmp / f"{name}.log", "wb")
        self.logs.append(log)
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True,
                             cwd=self.tmp)
        self.procs.append(p)
        return p

    def start_worker(self, i: int) -> subprocess.Popen:
        return self._start(f"worker{i}", [DASK, "worker", "--scheduler-file", str(self.file), "--nthreads", "1",
                                          "--nworkers", "1", "--no-dashboard", "--host", "127.0.0.1",
                                          "--name", f"w{i}", "--local-directory", str(self.tmp / f"w{i}")])

    def _wait(self, ok, what: str, timeout: float = 60.0) -> None:
        t0 = time.monotonic()
        while not ok():
            if time.monotonic() - t0 > timeout:
                raise RuntimeError(f"timed out waiting for {what}; logs in {self.tmp}")
            time.sleep(0.1)

    def wait_workers(self, client, n: int) -> None:
        client.wait_for_workers(n, timeout=60)

    @staticmethod
    def kill(p: subprocess.Popen) -> None:
        """SIGKILL the whole process group (the nanny and its worker): a machine lost mid-run."""
        try:
            os.killpg(p.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        p.wait(timeout=30)

    def close(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                self.kill(p)
        for log in self.logs:
            log.close()
