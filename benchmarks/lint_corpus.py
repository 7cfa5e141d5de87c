"""Lint 1,000 free-form cards (the prose corpus, replicated) and print the time; then lint time per MB
of ordinary and pathological cards side by side.

    python benchmarks/lint_corpus.py [--cards 1000] [--mb 1.0]

Three timings over the same cards:
  prose    parse_card + check_prose, in memory (the prose linter's own cost, card parsing included)
  runner   kldcard.lint.runner.lint_paths on files (read, structured + prose checkers)
  parse    parse_card alone (front matter YAML + body split), the floor under both
There is no naive prose linter to compare with; the parse line shows how much of the time is card
reading rather than claim and disclosure detection.
Target (issue 7): under 10 s for 1,000 cards on the 2-core dev machine.

Per MB (issue 16): each pathological card of tests/helpers_prose.py's PATHOLOGICAL is grown to about
``--mb`` MB and linted (parse_card + check_prose); the ordinary line is the real and invented corpora
concatenated to the same size. Printed: seconds per MB and the projection for a card at the 10 MiB
size limit (linear, as the complexity guards in tests/test_lint_bad_input.py check). Target: no card
under the size limit over 2 s.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
import time
from itertools import cycle, islice
from pathlib import Path

from kldcard.card.document import MAX_CARD_BYTES, parse_card
from kldcard.lint.prose import check_prose
from kldcard.lint.runner import lint_paths

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "prose_corpus"
REAL = ROOT / "tests" / "data" / "real_cards" / "cards"
sys.path.insert(0, str(ROOT / "tests"))
from helpers_prose import PATHOLOGICAL  # noqa: E402  (the cards the complexity guards use)


def _grow(make, target: int) -> bytes:
    """The pathological card at the smallest power-of-two size parameter reaching ``target`` bytes."""
    n = 16
    while len(make(n)) < target:
        n *= 2
    return make(n)


def _seconds(data: bytes) -> tuple[float, float]:
    """(wall, CPU) seconds to lint ``data``: on a shared machine the CPU time is the steadier figure."""
    t0, c0 = time.perf_counter(), time.process_time()
    check_prose(parse_card(data, "<bench>"))
    return time.perf_counter() - t0, time.process_time() - c0


def per_mb(mb: float, only: list[str] | None = None) -> bool:
    """Print lint seconds per MB, ordinary vs pathological (``only``: those named); True when every
    projection is under 2 s."""
    target = int(mb * 1e6)
    ordinary = b""
    sources = sorted(CORPUS.glob("*.md")) + sorted(REAL.glob("*.md"))
    for p in cycle(sources):
        if len(ordinary) >= target:
            break
        ordinary += p.read_bytes() + b"\n\n"
    rows = [("ordinary: corpora concatenated", ordinary)]
    rows += [(name, _grow(make, target)) for name, make in PATHOLOGICAL.items() if not only or name in only]
    real_max = max(sources, key=lambda p: p.stat().st_size)
    rows.insert(0, (f"largest real card ({real_max.stat().st_size / 1e3:.0f} KB)", real_max.read_bytes()))
    limit_mb = MAX_CARD_BYTES / 1e6
    print(f"\nlint time per MB (parse_card + check_prose), projected to the {MAX_CARD_BYTES >> 20} MiB size limit:")
    print(f"{'card':48s} {'size':>9s} {'time':>8s} {'s/MB':>6s} {'at limit':>9s} {'CPU s/MB':>9s}")
    ok = True
    for name, data in rows:
        dt, cpu = _seconds(data)
        rate = dt / (len(data) / 1e6)
        at_limit = rate * limit_mb
        ok &= at_limit < 2.0 or name.startswith("largest")
        print(f"{name:48s} {len(data) / 1e6:7.2f}MB {dt:7.2f}s {rate:6.2f} {at_limit:8.1f}s {cpu / (len(data) / 1e6):9.2f}")
    print(f"target  no card under the size limit over 2 s: {'met' if ok else 'MISSED'}")
    return ok

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cards", type=int, default=1000)
    ap.add_argument("--mb", type=float, default=1.0, help="size of each card in the per-MB comparison")
    ap.add_argument("--only", action="append", help="per-MB comparison only: this pathological card (repeatable)")
    args = ap.parse_args()
    if args.only:
        _seconds(b"KLD 0.01 vs BF16")  # the one-time pattern analysis of kldcard.lint.scan, not per MB
        return 0 if per_mb(args.mb, args.only) else 1
    sources = sorted(CORPUS.glob("*.md"))
    cards = [(p.name, p.read_bytes()) for p in islice(cycle(sources), args.cards)]
    n_bytes = sum(len(b) for _, b in cards)
    print(f"{len(cards)} cards ({len(sources)} distinct, {n_bytes / 1e6:.2f} MB) on {platform.processor() or platform.machine()}, "
          f"Python {platform.python_version()}")  # fmt: skip

    t0 = time.perf_counter()
    n_findings = sum(len(check_prose(parse_card(b, name))) for name, b in cards)
    prose_s = time.perf_counter() - t0

    t0 = time.perf_counter()
    for name, b in cards:
        parse_card(b, name)
    parse_s = time.perf_counter() - t0

    with tempfile.TemporaryDirectory() as tmp:
        paths = []
        for i, (name, b) in enumerate(cards):
            p = Path(tmp) / f"{i:04d}-{name}"
            p.write_bytes(b)
            paths.append(p)
        t0 = time.perf_counter()
        result = lint_paths(paths)
        runner_s = time.perf_counter() - t0

    print(f"prose   {prose_s:6.2f} s  ({prose_s / len(cards) * 1e3:.2f} ms/card, {n_findings} findings)")
    print(f"runner  {runner_s:6.2f} s  ({runner_s / len(cards) * 1e3:.2f} ms/card, {len(result.findings)} findings)")
    print(f"parse   {parse_s:6.2f} s  ({parse_s / prose_s:.0%} of the prose time is parse_card)")
    target = 10.0 * len(cards) / 1000
    ok = runner_s < target
    print(f"target  < {target:.1f} s for {len(cards)} cards: {'met' if ok else 'MISSED'}")
    ok &= per_mb(args.mb)  # after 1,000 cards: the one-time pattern analysis is done
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
