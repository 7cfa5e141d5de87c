"""The summary options ``kldcard compare`` and ``kldcard matrix`` share (not a command itself).

One definition, so both commands accept, document and check bootstrap, level, seed, buckets,
percentiles, vocabulary alignment, threads and verification the same way.
"""

from __future__ import annotations

import argparse

from kldcard.errors import UsageError

__all__ = ["UNCERTAINTY_CHOICES", "add_summary_arguments", "check_summary_arguments"]

# --uncertainty choice -> kldcard.compare.summary.BootstrapOptions.method
UNCERTAINTY_CHOICES = {"auto": "auto", "window": "cluster", "block": "circular-block", "iid": "iid"}


def _percentiles(text: str) -> list[float]:
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
    if not vals or any(not 0 <= v <= 100 for v in vals):
        raise argparse.ArgumentTypeError("percentiles must lie in [0, 100]")
    return vals


def add_summary_arguments(p: argparse.ArgumentParser) -> None:
    """Add --align-vocab, --buckets, --percentiles, --bootstrap, --uncertainty, --level, --seed, --threads, --no-verify
    and --no-progress."""
    p.add_argument(
        "--align-vocab", choices=["common-prefix"], default=None,
        help="compare padded vocabularies of different sizes over their common prefix (recorded in the result)",
    )
    p.add_argument(
        "--buckets", default=None, metavar="SPEC",
        help="output ranges: pow2 (default: 0,128,256,512,...), width:N, or explicit edges like 0,512,2048",
    )
    p.add_argument("--percentiles", type=_percentiles, default=None, metavar="LIST",
                   help="percentiles to report (default: 99.9,99,95,90,10,5,1,0.1)")
    p.add_argument("--bootstrap", type=int, default=1000, metavar="N", help="bootstrap resamples for the CI of means (0: SE only)")
    p.add_argument(
        "--uncertainty", choices=("auto", "window", "block", "iid"), default="auto",
        help="interval of the means: auto (default) resamples whole context windows when the capture has >= 20 "
        "of them (window), else circular moving blocks whose length follows Politis-White 2004 (block); iid "
        "resamples single tokens as if they were independent (kldcard 0.1's bootstrap; too narrow on real text)",
    )
    p.add_argument("--level", type=float, default=0.95, help="bootstrap confidence level (default 0.95)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--threads", type=int, default=None, metavar="N",
                   help="local worker threads, without --scheduler (default: all usable cores)")
    p.add_argument("--no-verify", action="store_true", help="check shard sizes only, skip sha256 verification")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (it is also off when stderr is not a terminal)")


def check_summary_arguments(args: argparse.Namespace) -> None:
    """Raise UsageError (one line, exit 2) for out-of-range summary options."""
    if args.bootstrap < 0 or args.bootstrap == 1:
        raise UsageError("--bootstrap must be 0 (SE only) or >= 2")
    if not 0 < args.level < 1:
        raise UsageError("--level must lie strictly between 0 and 1")
    if args.threads is not None and args.threads < 1:
        raise UsageError("--threads must be >= 1")
