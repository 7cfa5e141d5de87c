"""Per-token series with a known mean and known dependence, for the calibration of the block
bootstrap (tests/test_compare_uncertainty.py and benchmarks/uncertainty_coverage.py).

Scenarios (all values positive and heavy-tailed, like per-token KLD):

* ``ar{rho}``: ``x_t = scale · exp(σ z_t)``, ``z`` a stationary Gaussian AR(1) with unit marginal
  variance and lag-1 correlation ``rho`` ∈ {0, 0.5, 0.9}, ``σ = 1`` (lognormal marginal, skewness
  6.2). True mean ``scale · exp(σ²/2)`` exactly.
* ``bursts`` / ``rare-bursts``: ``base ~ Exponential(mean 0.01)`` plus bursts: a two-state Markov
  chain switches on with probability ``p_on`` per token and off with ``q`` (geometric lengths); each
  burst draws one amplitude ``A ~ lognormal`` (mean 1, log-sd 1) and each token in it adds
  ``A · Exponential(1)``. True mean ``0.01 + p_on/(p_on + q)`` exactly. bursts: p_on = 1/100,
  q = 1/10; rare-bursts (a reported stress case, not asserted): p_on = 1/400, q = 1/16.

Settings: ``chunked``: independent stationary chunks with their chunk ids (the cluster method, like
a capture of many context windows); ``series``: one stationary series without ids (the circular
block method, like one long context).
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass

import numpy as np

from kldcard.compare.bootstrap import block_bootstrap_intervals

N_CHUNKS, CHUNK_LEN = 128, 256
N = N_CHUNKS * CHUNK_LEN
SIGMA, SCALE = 1.0, 0.05
BASE_MEAN, AMP_LOGSD = 0.01, 1.0
# burst scenarios: (p_on per token, q_off per token) -> mean gap ~1/p_on, mean length 1/q_off
BURSTS = {"bursts": (1.0 / 100.0, 1.0 / 10.0), "rare-bursts": (1.0 / 400.0, 1.0 / 16.0)}

SCENARIOS = ("ar0", "ar0.5", "ar0.9", "bursts", "rare-bursts")
ASSERTED = ("ar0", "ar0.5", "ar0.9", "bursts")  # rare-bursts: a reported stress case, not asserted
SETTINGS = ("chunked", "series")


def true_mean(scenario: str) -> float:
    if scenario.startswith("ar"):
        return SCALE * math.exp(SIGMA**2 / 2.0)
    p_on, q_off = BURSTS[scenario]
    return BASE_MEAN + p_on / (p_on + q_off) * 1.0


def _ar_lognormal(rng: np.random.Generator, reps: int, length: int, rho: float) -> np.ndarray:
    z = np.empty((reps, length))
    z[:, 0] = rng.standard_normal(reps)
    if rho == 0.0:
        z[:, 1:] = rng.standard_normal((reps, length - 1))
    else:
        e = rng.standard_normal((reps, length)) * math.sqrt(1.0 - rho * rho)
        for t in range(1, length):
            z[:, t] = rho * z[:, t - 1] + e[:, t]
    return SCALE * np.exp(SIGMA * z)


def _bursts(rng: np.random.Generator, reps: int, length: int, p_on: float, q_off: float) -> np.ndarray:
    pi_on = p_on / (p_on + q_off)
    on = rng.random(reps) < pi_on
    mu = -AMP_LOGSD**2 / 2.0  # E[A] = 1
    amp = np.exp(mu + AMP_LOGSD * rng.standard_normal(reps))
    u = rng.random((reps, length))
    new_amp = np.exp(mu + AMP_LOGSD * rng.standard_normal((reps, length)))
    state = np.empty((reps, length), dtype=bool)
    amps = np.empty((reps, length))
    state[:, 0], amps[:, 0] = on, amp
    for t in range(1, length):
        start = ~on & (u[:, t] < p_on)
        on = np.where(on, u[:, t] >= q_off, start)
        amp = np.where(start, new_amp[:, t], amp)
        state[:, t], amps[:, t] = on, amp
    base = rng.standard_exponential((reps, length)) * BASE_MEAN
    return base + state * amps * rng.standard_exponential((reps, length))


def simulate(scenario: str, setting: str, reps: int, rng: np.random.Generator,
             n_chunks: int = N_CHUNKS, chunk_len: int = CHUNK_LEN) -> np.ndarray:
    """``reps`` series of length n_chunks·chunk_len (rows); ``chunked``: independent stationary
    chunks; ``series``: one stationary series."""
    n = n_chunks * chunk_len
    if setting == "chunked":
        rows, length = reps * n_chunks, chunk_len
    else:
        rows, length = reps, n
    if scenario.startswith("ar"):
        x = _ar_lognormal(rng, rows, length, float(scenario[2:]))
    elif scenario in BURSTS:
        x = _bursts(rng, rows, length, *BURSTS[scenario])
    else:
        raise ValueError(scenario)
    return x.reshape(reps, n)


@dataclass
class Cell:
    scenario: str
    setting: str
    method: str
    interval: str
    reps: int
    covered: int
    width_sum: float
    block_sum: float
    seconds: float

    @property
    def coverage(self) -> float:
        return self.covered / self.reps

    @property
    def mc_se(self) -> float:
        p = self.coverage
        return math.sqrt(max(p * (1 - p), 1e-12) / self.reps)


def run_cell(scenario: str, setting: str, method: str, intervals: tuple[str, ...], reps: int, resamples: int,
             seed: int, n_chunks: int = N_CHUNKS, chunk_len: int = CHUNK_LEN, batch: int = 50,
             **kwargs) -> list[Cell]:
    """Coverage of one (scenario, setting, method) over ``reps`` seeded replications, for each
    interval type (all from the same resamples). The data depend only on (scenario, setting,
    seed), so every method sees the same series."""
    mu = true_mean(scenario)
    rng = np.random.default_rng([seed, SCENARIOS.index(scenario), SETTINGS.index(setting)])
    blocks = np.repeat(np.arange(n_chunks), chunk_len) if setting == "chunked" else None
    covered = dict.fromkeys(intervals, 0)
    width = dict.fromkeys(intervals, 0.0)
    blk = 0.0
    t0 = time.perf_counter()
    done = 0
    while done < reps:
        m = min(batch, reps - done)
        data = simulate(scenario, setting, m, rng, n_chunks, chunk_len)
        for i in range(m):
            cis = block_bootstrap_intervals(data[i], blocks=blocks, method=method, intervals=intervals,
                                            resamples=resamples, seed=done + i, **kwargs)
            for iv, ci in cis.items():
                covered[iv] += ci.lo <= mu <= ci.hi
                width[iv] += ci.hi - ci.lo
            blk += ci.n_blocks if ci.method == "cluster" else (ci.block_length or 0)
        done += m
    sec = time.perf_counter() - t0
    return [Cell(scenario, setting, method, iv, reps, covered[iv], width[iv], blk, sec) for iv in intervals]
