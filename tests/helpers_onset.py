"""Simulated depth series with a known onset, or none (tests/test_depth_onset.py and
benchmarks/onset_calibration.py, which describes the three kinds)."""

from __future__ import annotations

import numpy as np

from kldcard.compare.onset import onset_test

PHI = 0.5
P_DIFFERS = 0.10


def simulate(kind: str, n: int, rng: np.random.Generator, phi: float = PHI) -> tuple[np.ndarray, np.ndarray, int | None]:
    """(log KLD, top-1 differs as 0/1, true onset index or None)."""
    e = rng.standard_normal(n) * np.sqrt(1 - phi**2)
    x = np.empty(n)
    x[0] = rng.standard_normal()
    for t in range(1, n):
        x[t] = phi * x[t - 1] + e[t]
    logk = -9.0 + x
    p = np.full(n, P_DIFFERS)
    tau = None
    if kind == "step":
        tau = int(rng.integers(int(0.35 * n), int(0.8 * n)))
        logk[tau:] += 1.0
        p[tau:] = 0.20
    elif kind == "clusters":
        tau = int(rng.integers(int(0.35 * n), int(0.8 * n)))
        t = tau
        while t < n:
            length = int(rng.integers(3, 11))
            logk[t:t + length] += 3.0
            p[t:t + length] = 0.6
            t += length + int(rng.geometric(0.04))
    differs = (rng.random(n) < p).astype(np.float64)
    return logk, differs, tau


def calibrate(series: int, points: int, tolerance: int, alpha: float, seed: int, permutations: int,
              phi: float = PHI) -> dict:
    """Per kind: alarms, share with an alarm, share with the onset within ``tolerance`` points, median delay."""
    rng = np.random.default_rng(seed)
    out = {}
    for kind in ("none", "step", "clusters"):
        alarms = within = 0
        delays = []
        for i in range(series):
            logk, differs, tau = simulate(kind, points, rng, phi)
            fit = onset_test(logk, differs, alpha=alpha, permutations=permutations, seed=i)
            if fit is None or not fit.alarm:
                continue
            alarms += 1
            if tau is not None:
                within += abs(fit.onset_index - tau) <= tolerance
                delays.append(fit.alarm_index - tau)
        out[kind] = {"series": series, "alarms": alarms, "rate": alarms / series,
                     "within": within / series if kind != "none" else None,
                     "median_delay": float(np.median(delays)) if delays else None}
    return out
