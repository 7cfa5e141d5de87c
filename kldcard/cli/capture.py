"""``kldcard capture``: full-vocabulary logits from a real engine into a capture store.

Exit codes: 0 written (and, with ``--repeat``, bit-identical), 1 written but the repeated runs
differed, 2 usage or input error (including a missing engine, with the install command).
"""

from __future__ import annotations

import argparse
import json
import sys

from kldcard.engines import ENGINES
from kldcard.cli.capture_openai import add_openai_arguments, run_openai


def _flash(value: str) -> bool:
    v = value.lower()
    if v in ("on", "1", "true", "yes", "enabled"):
        return True
    if v in ("off", "0", "false", "no", "disabled"):
        return False
    raise argparse.ArgumentTypeError("use on or off")


def positions_scheme(value: str) -> str:
    """``--positions`` checked when the command line is parsed (``every:0`` and ``every:abc`` are
    usage errors, exit 2, before any model loads); the spelling itself is passed on."""
    from kldcard.capture.positions import parse_positions
    from kldcard.errors import UsageError

    try:
        parse_positions(value)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None
    return value


def _positive(value: str) -> int:
    try:
        n = int(value)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{value!r} is not an integer") from None
    if n < 1:
        raise argparse.ArgumentTypeError("must be >= 1")
    return n


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "capture",
        help="capture full-vocabulary logits from transformers, llama.cpp or MLX",
        description="Run a model on a text with a real engine and store its raw full-vocabulary "
        "logits at the sampled positions (BF16 by default) with the exact stack fingerprint, the "
        "model files' and text's sha256 and the token ids. Position i holds the distribution after "
        "tokens 0..i of its context window (it predicts token i+1). Long texts are processed in "
        "prefill chunks; an interrupted capture leaves nothing that looks valid.",
    )
    p.add_argument("--engine", required=True, choices=[*ENGINES, "openai"],
                   help="inference engine; openai = top-k prompt log-probabilities from an OpenAI-compatible server")
    p.add_argument("--model", required=True, metavar="PATH",
                   help="model directory (transformers, mlx) or GGUF file (llama.cpp); the served model name (openai)")
    p.add_argument("--text", required=True, metavar="FILE", help="UTF-8 evaluation text")
    p.add_argument("--out", required=True, metavar="DIR", help="capture directory to create")
    p.add_argument("--positions", default="every:32", type=positions_scheme, metavar="SCHEME",
                   help="all | every:N[@OFFSET] | list:I,J,... | second-half (default every:32)")
    p.add_argument("--n-ctx", type=_positive, default=None, metavar="N",
                   help="context window: split the text into non-overlapping windows of N tokens "
                   "(default: one window over the whole text)")
    p.add_argument("--prefill-chunk", type=_positive, default=None, metavar="N",
                   help="tokens per forward pass (default 512; for llama.cpp this is n_batch)")
    p.add_argument("--dtype", default=None, help="transformers/mlx compute dtype: bf16, f16, f32 (default: as stored)")
    p.add_argument("--threads", type=_positive, default=None, help="CPU threads")
    p.add_argument("--device", default=None, help="transformers device: cpu, cuda, cuda:1, mps")
    p.add_argument("--attn-implementation", default=None, metavar="NAME",
                   help="transformers attention: sdpa (default), eager, flash_attention_2")
    g = p.add_argument_group("llama.cpp")
    g.add_argument("--n-batch", type=_positive, default=None,
                   help="logical batch (default: --prefill-chunk or 512; 2048 with --protocol llama-perplexity)")
    g.add_argument("--n-ubatch", type=_positive, default=None, help="physical batch (default min(512, n_batch))")
    g.add_argument("--flash-attn", type=_flash, default=None, metavar="on|off", help="flash attention (default off; auto with --protocol llama-perplexity)")
    g.add_argument("--kv-type", default=None, help="KV-cache type: f16 (default), f32, bf16, q8_0, q4_0, ...")
    g.add_argument("--n-gpu-layers", type=int, default=None, help="layers to offload (default: all on GPU builds, 0 on CPU)")
    add_openai_arguments(p)  # --engine openai (kldcard/cli/capture_openai.py)
    p.add_argument("--store-dtype", choices=["bf16", "f32"], default=None,
                   help="storage dtype of the logits (default bf16; f32 with --protocol llama-perplexity)")
    p.add_argument("--repeat", type=_positive, default=1, metavar="N",
                   help="capture N times and report whether the runs are bit-identical (exit 1 if not)")
    p.add_argument("--protocol", choices=["llama-perplexity"], default=None,
                   help="llama-perplexity: its non-overlapping n_ctx chunks (default 512), BOS overwriting token 0 "
                   "of each chunk when the vocabulary adds BOS, positions n_ctx/2..n_ctx-2 (overrides --positions); "
                   "with llama.cpp also its batches (n_batch/n_ctx chunks per decode, -b 2048 -ub 512 defaults), "
                   "flash attention auto, physical-core threads, its tokenization, F32 storage")
    p.add_argument("--parity-with", action="append", default=[], metavar="ENGINE_SPEC",
                   help="refuse to capture unless this engine tokenizes the text to the same ids (hf:DIR, "
                   "llama.cpp:FILE.gguf, mlx:DIR; repeatable); the result is stored in the manifest")
    p.add_argument("--allow-token-mismatch", action="store_true",
                   help="capture despite a --parity-with mismatch (recorded as 'overridden' in the manifest)")
    p.add_argument("--text-name", default=None, help="name recorded for the text (default: file name)")
    p.add_argument("--force", action="store_true", help="replace --out if it exists")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    p.add_argument("--json", action="store_true", help="print a JSON summary instead of text")
    return p


def run(args: argparse.Namespace) -> int:
    if args.engine == "openai":  # sparse top-k capture over HTTP: kldcard/cli/capture_openai.py
        return run_openai(args)
    from kldcard.capture.run import run_capture
    from kldcard.files import check_output_dir

    parity_files = [spec.partition(":")[2] for spec in args.parity_with]  # ENGINE:PATH
    check_output_dir(args.out, "--out", [args.model, args.text, *parity_files])

    settings = {
        k: getattr(args, k)
        for k in ("dtype", "threads", "device", "attn_implementation", "n_batch", "n_ubatch", "flash_attn",
                  "kv_type", "n_gpu_layers")
        if getattr(args, k) is not None
    }
    res = run_capture(
        args.engine, args.model, args.text, args.out,
        positions=args.positions, n_ctx=args.n_ctx, prefill_chunk=args.prefill_chunk,
        store_dtype=args.store_dtype, repeat=args.repeat, text_name=args.text_name,
        overwrite=args.force, progress=False if args.no_progress else None, protocol=args.protocol,
        parity_with=args.parity_with, allow_token_mismatch=args.allow_token_mismatch, **settings,
    )
    m = res.capture.manifest
    summary = {
        "capture": str(res.capture.path),
        "engine": res.stack.engine,
        "n_tokens": res.n_tokens,
        "n_positions": res.n_positions,
        "n_vocab": m.n_vocab,
        "positions": m.positions.model_dump(exclude_none=True),
        "store_dtype": m.dtype,
        "seconds": [round(s, 3) for s in res.seconds],
        "load_seconds": round(res.load_seconds, 3),
        "runs": len(res.digests),
        "bit_identical": res.bit_identical,
        "logits_sha256": res.digests,
        "stack": res.stack.model_dump(mode="json"),
    }
    if m.tokenizer_parity is not None:
        summary["tokenizer_parity"] = m.tokenizer_parity.model_dump(mode="json")
    if args.json:
        json.dump(summary, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        s = res.stack
        print(f"wrote {res.capture.path}: {res.n_positions} positions x {m.n_vocab} vocab ({m.dtype}) "
              f"of {res.n_tokens} tokens, {m.positions.scheme}")
        print(f"stack: {s.engine} {s.engine_version} on {s.backend} ({s.device}), attention {s.attention_backend}, "
              f"weights {s.weights_dtype}, kv {s.kv_cache_dtype}, prefill chunk {s.prefill_chunk}, threads {s.threads}")
        layout = (s.model_extra or {}).get("batch_layout")
        if layout:
            print(f"batch: up to {layout['sequences_per_decode']} sequence(s) of {layout['tokens_per_sequence']} tokens per "
                  f"decode (n_batch {layout['n_batch']}, n_ubatch {layout['n_ubatch']}, n_seq_max {layout['n_seq_max']}), "
                  "as llama-perplexity")
        if m.tokenizer_parity is not None:
            tp = m.tokenizer_parity
            print(f"token parity: {tp.outcome} over {tp.tokens_checked} tokens ({', '.join(tp.engines)})")
        print(f"time: {sum(res.seconds):.2f} s over {len(res.seconds)} run(s), model load {res.load_seconds:.2f} s")
        if res.bit_identical is not None:
            verdict = "bit-identical" if res.bit_identical else "NOT bit-identical: this stack is not a fixed reference"
            print(f"repeat: {len(res.digests)} runs, float32 logits {verdict}")
    return 0 if res.bit_identical in (None, True) else 1
