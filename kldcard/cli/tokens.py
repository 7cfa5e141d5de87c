"""``kldcard tokens``: token parity across engines (BOS, special tokens, chat templates).

Parses options, runs :func:`kldcard.tokens.check_parity` (or :func:`check_chat_parity` with
``--chat``) and prints the report. Exit codes: 0 identical ids, 1 a mismatch, 2 unusable input.
"""

from __future__ import annotations

import argparse
import json

from kldcard.errors import UsageError


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "tokens",
        help="check that engines tokenize a text (or chat prompt) to the same ids",
        description=(
            "Tokenize a text with each engine (tokenizer files only, no weights), compare the id arrays "
            "and report the first difference with the surrounding text, each engine's ids and pieces, "
            "and its kind: missing BOS, double BOS, EOS, special-token parsing, chat template, "
            "pre-tokenizer. Also reports what BOS each engine adds by default and what was used. "
            "Exit 0 identical, 1 mismatch, 2 unusable input."
        ),
    )
    p.add_argument(
        "engines",
        nargs="+",
        metavar="ENGINE_SPEC",
        help="hf:DIR (transformers), llama.cpp:FILE.gguf (llama-cpp-python), mlx:DIR (mlx-lm); "
        "the first is the reference the others are compared to",
    )
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--text", metavar="FILE", help="UTF-8 text to tokenize")
    src.add_argument(
        "--chat",
        metavar="CONV.json",
        help='a conversation (JSON list of {"role", "content"}) rendered by each engine\'s own chat '
        "template; compares the rendered prompts and their ids",
    )
    p.add_argument(
        "--add-bos",
        choices=["auto", "yes", "no"],
        default="auto",
        help="auto: each engine's default (chat: each chat path's default); yes: exactly one BOS "
        "(on a chat prompt whose template has BOS this reproduces the double-BOS trap); no: none",
    )
    p.add_argument(
        "--special",
        choices=["auto", "parse", "text"],
        default="auto",
        help="special-token strings in the text (e.g. <|im_start|>): auto = each engine's default "
        "(transformers and mlx-lm parse them, llama-cpp-python keeps them as text), parse, or text",
    )
    p.add_argument("--n-ctx", type=int, metavar="N", help="refuse a text longer than N tokens")
    p.add_argument("-o", "--output", choices=["text", "json"], default="text", help="report format")
    p.add_argument("--ids", action="store_true", help="include every engine's full id array in JSON output")
    return p


def run(args: argparse.Namespace) -> int:
    from kldcard.tokens import (
        check_chat_parity,
        check_parity,
        read_conversation,
        read_text,
    )

    if args.n_ctx is not None and args.n_ctx < 1:
        raise UsageError("--n-ctx must be at least 1")
    if args.chat:
        if args.special != "auto":
            raise UsageError("--special does not apply to --chat (chat prompts always parse special tokens)")
        report = check_chat_parity(read_conversation(args.chat), args.engines, add_bos=args.add_bos, n_ctx=args.n_ctx)
    else:
        report = check_parity(
            read_text(args.text), args.engines, add_bos=args.add_bos, special=args.special, n_ctx=args.n_ctx
        )
    if args.output == "json":
        print(json.dumps(report.to_dict(include_ids=args.ids), indent=2, ensure_ascii=False))
    else:
        print(report.to_text())
    return 0 if report.outcome == "identical" else 1
