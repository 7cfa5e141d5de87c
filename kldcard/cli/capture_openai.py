"""``kldcard capture --engine openai``: top-k prompt log-probabilities from an OpenAI-compatible server.

Not a subcommand of its own: :func:`add_openai_arguments` adds the options to the ``capture``
parser and :func:`run_openai` runs when ``--engine openai`` is chosen. Exit codes: 0 written,
2 usage/input error (server unreachable, no prompt log-probabilities, unknown model name, ...).
"""

from __future__ import annotations

import argparse
import json
import sys


def add_openai_arguments(parser: argparse.ArgumentParser) -> argparse._ArgumentGroup:
    """Options used only with ``--engine openai`` (``--model`` is the served model name there)."""
    g = parser.add_argument_group("OpenAI-compatible server (--engine openai)")
    g.add_argument("--base-url", default=None, metavar="URL", help="server root, e.g. http://127.0.0.1:8000")
    g.add_argument("--top-k", type=int, default=20, metavar="K",
                   help="log-probabilities per position (default 20; -1: the full vocabulary, vLLM only)")
    g.add_argument("--api", default="auto", choices=["auto", "llama-cpp-python", "vllm", "sglang"],
                   help="request variant (default: detect from the server; vllm and sglang are untested)")
    g.add_argument("--vocab-gguf", default=None, metavar="FILE",
                   help="the served model's GGUF: maps llama-cpp-python's token strings to ids exactly")
    g.add_argument("--n-vocab", type=int, default=None, metavar="N", help="vocabulary size to record")
    g.add_argument("--tokenizer", default=None, metavar="SPEC",
                   help="local tokenizer to check parity against (llama.cpp:FILE, transformers:DIR)")
    g.add_argument("--timeout", type=float, default=120.0, metavar="S",
                   help="seconds to wait for one request (default 120); a server computing log-probabilities "
                   "can need minutes")
    g.add_argument("--piece-tokens", type=int, default=256, metavar="N",
                   help="send long texts in pieces of at most N tokens, each its own context (default 256)")
    g.add_argument("--retries", type=int, default=3, metavar="N", help="retries with back-off (default 3)")
    return g


def run_openai(args: argparse.Namespace) -> int:
    from kldcard.capture.openai_capture import capture_openai
    from kldcard.errors import UsageError

    from kldcard.files import check_output_dir

    if not getattr(args, "base_url", None):
        raise UsageError("--engine openai needs --base-url URL")
    check_output_dir(args.out, "--out", [args.text, args.vocab_gguf, args.tokenizer])
    res = capture_openai(
        args.base_url, args.model, args.text, args.out, top_k=args.top_k,
        positions=getattr(args, "positions", None) or "all", api=args.api, n_vocab=args.n_vocab,
        tokenizer=args.tokenizer, vocab_gguf=args.vocab_gguf, text_name=getattr(args, "text_name", None),
        timeout=args.timeout, retries=args.retries, piece_tokens=args.piece_tokens,
        overwrite=getattr(args, "force", False), progress=False if getattr(args, "no_progress", False) else None,
    )
    m = res.capture.manifest
    summary = {
        "capture": str(res.capture.path), "api": res.api, "server_version": res.server_version,
        "n_tokens": res.n_tokens, "n_positions": res.n_positions, "top_k": m.top_k,
        "n_unresolved": res.n_unresolved, "truncation": m.truncation.model_dump(exclude_none=True),
        "pieces": [{"first_token": a, "n_tokens": n} for a, n in res.pieces],
    }
    if getattr(args, "json", False):
        json.dump(summary, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        print(f"wrote {res.capture.path}: {res.n_positions} positions of {res.n_tokens} tokens, top-{m.top_k} "
              f"log-probabilities (nats) from {res.api} {res.server_version}; the rest of the vocabulary is one "
              f"tail mass per position ({res.n_unresolved} reported entries could not be mapped to ids)"
              + (f"; sent in {len(res.pieces)} pieces, each its own context" if len(res.pieces) > 1 else ""))
    return 0
