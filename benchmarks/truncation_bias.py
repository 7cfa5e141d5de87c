"""How much top-k truncation changes a KLD: full-vocabulary KL against top-k KL, per position.

Run: ``python benchmarks/truncation_bias.py [--text FILE] [--out benchmarks/results/truncation_bias.md]``.
Builds (or reuses) the tiny Qwen3 test models, captures the F32 GGUF (reference) and the Q8_0 and
Q4_K_M GGUFs (candidates) with llama.cpp over the whole text (every position, f32 storage), then
for k = 1, 5, 20, 100 and each tail treatment computes the per-position forward KL(P_ref ‖ P_cand)
in nats when

- *cand top-k*: the candidate is top-k (served through an OpenAI-compatible API), the reference full;
- *both top-k*: both sides are top-k (both served).

and compares it with the exact full-vocabulary KL at the same position. Printed as a Markdown table:
mean KL (nats), mean of top-k over mean of full, median per-position relative error, and the share
of positions where the top-k KL is below the full KL (an underestimate). The tiny models have
random seeded weights (peaked but not trained distributions over 151,936 ids), so the numbers show
the mechanism, not the size of the bias on a real model.
"""

from __future__ import annotations

import argparse
import platform
import sys
import tempfile
from pathlib import Path

import numpy as np

REPO = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(REPO))

from kldcard.capture.run import run_capture  # noqa: E402
from kldcard.compare.truncated import TREATMENTS, kl_truncated_rows, sparse_rows  # noqa: E402
from kldcard.demo.tiny_models import LM_PARAMS, build_tiny_models, params_key  # noqa: E402

KS = (1, 5, 20, 100)


def _row(label: str, k: int | str, treatment: str, kl: np.ndarray, full: np.ndarray) -> str:
    rel = np.abs(kl - full) / np.maximum(full, 1e-12)
    return (f"| {label} | {k} | {treatment} | {kl.mean():.5f} | {kl.mean() / full.mean():.3f} | "
            f"{np.median(rel):.3f} | {np.mean(kl < full):.2f} |")


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--text", default=str(REPO / "tests" / "data" / "engines" / "lighthouse.txt"))
    ap.add_argument("--out", default=None, help="also write the table to this Markdown file")
    ap.add_argument("--cache", default=str(REPO / ".cache" / "test-models"))
    args = ap.parse_args()

    p = LM_PARAMS  # the tiny model that predicts its text: a language model's distributions
    cache = Path(args.cache)
    models = build_tiny_models(cache / f"qwen3-bigram-{params_key('qwen3', p)}", "qwen3", params=p, cache_dir=cache)
    lines = []
    with tempfile.TemporaryDirectory() as tmp:
        def cap(key: str):
            return run_capture("llama.cpp", models[key], args.text, Path(tmp) / key, positions="all",
                               store_dtype="f32", progress=False).capture

        ref = cap("gguf_f32")
        full_ref = sparse_rows(ref)
        lines += [f"Truncation bias on the tiny Qwen3 test models (vocabulary {ref.n_vocab:,}), text "
                  f"`{Path(args.text).name}`, {ref.n_positions} positions, forward KL(P_ref ‖ P_cand) in nats; "
                  f"reference F32 GGUF, llama.cpp on {platform.machine()} CPU.", ""]
        lines += ["| candidate | k | tail treatment | mean KL (nats) | top-k / full | median per-position rel. error "
                  "| share of positions underestimated |", "|---|---|---|---|---|---|---|"]
        for key, name in (("gguf_q8_0", "Q8_0"), ("gguf_q4", "Q4_K_M")):
            cand = cap(key)
            full = kl_truncated_rows(full_ref, sparse_rows(cand), "lumped")  # both full: exact KL
            lines.append(f"| {name} | full | (none) | {full.mean():.5f} | 1.000 | 0.000 | 0.00 |")
            for k in KS:
                ref_k, cand_k = sparse_rows(ref, k), sparse_rows(cand, k)
                for t in TREATMENTS:
                    kl = kl_truncated_rows(full_ref, cand_k, t)
                    lines.append(_row(f"{name} (cand top-k)", k, t, kl, full))
                    kl2 = kl_truncated_rows(ref_k, cand_k, t)
                    lines.append(_row(f"{name} (both top-k)", k, t, kl2, full))
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out:
        Path(args.out).write_text(text, encoding="utf-8")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
