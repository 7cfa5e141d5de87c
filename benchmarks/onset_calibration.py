"""Calibrate kldcard's onset detector (:mod:`kldcard.compare.onset`) on simulated depth series.

Each series has ``--points`` depth points (512 = every:32 over 16,384 tokens). Per point: log KLD is
an AR(1) series of SD 1 (φ 0.5: neighbouring positions diverge together, as real ones do; then again
with φ 0, i.i.d.) and the top-1 token differs with probability 0.10. Three kinds of series:

* ``none``: no onset (the false-alarm rate: share of series with any alarm, target 5%);
* ``step``: from a depth τ drawn uniformly in [35%, 80%] of the series, log KLD rises by 1 SD and the
  top-1 disagreement rate to 0.20;
* ``clusters``: from τ on, bursts of 3–10 points (log KLD +3 SD, top-1 differs with probability 0.6)
  start with probability 0.04 per point, the first at τ exactly — the seed's long-context pattern.

For series with an onset it prints the share detected, the share whose estimated onset lies within
``--tolerance`` depth points of τ, and the median delay from τ to the alarm. Run::

    python benchmarks/onset_calibration.py            # 400 series of each kind and dependence (~25 s CPU)
    python benchmarks/onset_calibration.py --series 60  # the test's fast version
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

from helpers_onset import P_DIFFERS, PHI, calibrate  # noqa: E402

def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--series", type=int, default=400, help="series of each kind")
    ap.add_argument("--points", type=int, default=512, help="depth points per series")
    ap.add_argument("--tolerance", type=int, default=16, help="depth points between the estimated and true onset")
    ap.add_argument("--alpha", type=float, default=0.05, help="the test's stated false-alarm rate")
    ap.add_argument("--permutations", type=int, default=400)
    ap.add_argument("--seed", type=int, default=0)
    a = ap.parse_args(argv)
    t = time.perf_counter()
    print(f"onset detector calibration: {a.series} simulated series of each kind, {a.points} depth points, "
          f"top-1 differs p {P_DIFFERS}, stated false-alarm rate {a.alpha:.0%}, {a.permutations} bootstrap "
          f"resamples of the early part, seed {a.seed}")
    print(f"| log KLD | series | alarms | share with an alarm | onset within ±{a.tolerance} points | "
          "median delay to the alarm (points) |")
    print("|---|---|---:|---:|---:|---:|")
    for phi in (PHI, 0.0):
        res = calibrate(a.series, a.points, a.tolerance, a.alpha, a.seed, a.permutations, phi)
        for kind, r in res.items():
            within = "n/a" if r["within"] is None else f"{r['within']:.1%}"
            delay = "n/a" if r["median_delay"] is None else f"{r['median_delay']:.0f}"
            print(f"| {'AR(1) phi ' + str(phi) if phi else 'i.i.d.'} | {kind} | {r['alarms']} of {r['series']} | "
                  f"{r['rate']:.1%} | {within} | {delay} |")
    print(f"({time.perf_counter() - t:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
