"""Lint 1,000 free-form cards (the prose corpus, replicated) and print the time.

    python benchmarks/lint_corpus.py [--cards 1000]

Three timings over the same cards:
  prose    parse_card + check_prose, in memory (the prose linter's own cost, card parsing included)
  runner   kldcard.lint.runner.lint_paths on files (read, structured + prose checkers)
  parse    parse_card alone (front matter YAML + body split), the floor under both
There is no naive prose linter to compare with; the parse line shows how much of the time is card
reading rather than claim and disclosure detection.
Target (issue 7): under 10 s for 1,000 cards on the 2-core dev machine.
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from itertools import cycle, islice
from pathlib import Path

from kldcard.card.document import parse_card
from kldcard.lint.prose import check_prose
from kldcard.lint.runner import lint_paths

ROOT = Path(__file__).resolve().parent.parent
CORPUS = ROOT / "tests" / "data" / "prose_corpus"

def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cards", type=int, default=1000)
    args = ap.parse_args()
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
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
