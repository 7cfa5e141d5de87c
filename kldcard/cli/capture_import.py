"""``kldcard capture-import``: make a capture from logits computed elsewhere (numpy / safetensors)."""

from __future__ import annotations

import argparse


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "capture-import",
        help="create a capture from .npy/.safetensors logits computed by any engine",
        description="Store raw full-vocabulary logits [n_positions, n_vocab] from any engine as a kldcard "
        "capture (BF16 by default, round-to-nearest-even) with the token ids that were fed in. Row k of the "
        "logits is the distribution after tokens 0..positions[k] (it predicts token positions[k]+1).",
    )
    p.add_argument("--logits", required=True, metavar="FILE", help=".npy or .safetensors logits [n_positions, n_vocab]")
    p.add_argument("--tensor", default=None, metavar="NAME", help="tensor name inside a .safetensors file with several")
    p.add_argument("--tokens", required=True, metavar="FILE",
                   help="token ids fed to the engine: .npy, .safetensors (token_ids), .json list or whitespace-separated text")
    p.add_argument("--positions", default="all", metavar="SPEC",
                   help="positions of the rows: all (row k = position k, default), every:N[@OFFSET], list:I,J,... or a file of integers")
    p.add_argument("--out", required=True, metavar="DIR", help="capture directory to create")
    p.add_argument("--dtype", choices=["bf16", "f32"], default="bf16", help="storage dtype (default bf16)")
    p.add_argument("--model-name", default=None, help="model name recorded in the manifest (default: the file's stem)")
    p.add_argument("--text", default=None, metavar="FILE", help="the evaluation text (its sha256 is recorded)")
    p.add_argument("--force", action="store_true", help="replace an existing capture at --out")
    return p


def run(args: argparse.Namespace) -> int:
    from kldcard.capture.import_arrays import import_capture
    from kldcard.files import check_output_dir

    check_output_dir(args.out, "--out", [args.logits, args.tokens, args.text])

    cap = import_capture(
        args.out, args.logits, args.tokens, positions=args.positions, tensor=args.tensor, dtype=args.dtype,
        model_name=args.model_name, text_path=args.text, overwrite=args.force,
    )
    print(f"wrote {cap.path}: {cap.n_positions} positions x {cap.n_vocab} vocabulary ({cap.dtype}) "
          f"of {cap.n_tokens} tokens")
    return 0
