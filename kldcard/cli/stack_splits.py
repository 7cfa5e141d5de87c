"""``kldcard stack splits`` and ``kldcard stack simulate``: handlers wired into ``kldcard stack``.

``kldcard/cli/stack.py`` (bare ``kldcard stack`` prints the machine fingerprint) calls
:func:`add_subcommands` with its subparsers. Each subparser sets ``_run`` (what ``kldcard.cli.main``
calls) and ``stack_run`` (for a ``stack.run`` that dispatches itself).
"""

from __future__ import annotations

import argparse
import json
import sys


def add_subcommands(stack_subparsers: argparse._SubParsersAction) -> None:
    p = stack_subparsers.add_parser(
        "splits",
        help="predict FlashAttention 2's split count and group size on a GPU",
        description="Predict how many groups (splits) FlashAttention 2's split-KV heuristic cuts a KV "
        "sequence into, from the GPU's SM count. Without --gpu/--sms, prints every GPU in the table.",
    )
    p.add_argument("--seqlen", type=int, required=True, help="KV length in tokens")
    p.add_argument("--kv-heads", type=int, required=True, help="KV heads (decode with GQA: FA2 works per KV head)")
    gpu = p.add_mutually_exclusive_group()
    gpu.add_argument("--gpu", help="GPU name, e.g. H200, 'NVIDIA H100 80GB HBM3', 'RTX PRO 6000 Blackwell'")
    gpu.add_argument("--sms", type=int, help="SM count (streaming multiprocessors)")
    size = p.add_mutually_exclusive_group()
    size.add_argument("--block-n", type=int, default=None, help="KV block size in tokens (default 64)")
    size.add_argument("--head-dim", type=int, help="derive the block size from the head dimension as FA2 does")
    p.add_argument("--batch", type=int, default=1, help="sequences in the batch (default 1)")
    p.add_argument("--m-blocks", type=int, default=1, help="query blocks of 64 rows (decode: 1)")
    p.add_argument("--json", action="store_true", help="print JSON")
    p.set_defaults(_run=run_splits, stack_run=run_splits)

    s = stack_subparsers.add_parser(
        "simulate",
        help="show bf16 attention outputs changing with the group count",
        description="Simulate split-softmax attention for one query in bf16 (as kernels round) and in "
        "float64, for several group counts or for the split counts predicted on several GPUs.",
    )
    s.add_argument("--seqlen", type=int, default=4096, help="KV length in tokens (default 4096)")
    s.add_argument("--head-dim", type=int, default=128, help="head dimension (default 128)")
    which = s.add_mutually_exclusive_group(required=True)
    which.add_argument("--groups", type=int, nargs="+", metavar="G", help="group counts; the first is the baseline")
    which.add_argument("--gpus", nargs="+", metavar="NAME", help="GPUs whose predicted split counts to compare")
    s.add_argument("--kv-heads", type=int, default=8, help="KV heads for --gpus predictions (default 8)")
    s.add_argument("--block-n", type=int, default=64, help="KV block size in tokens (default 64)")
    s.add_argument("--partial-dtype", choices=["bf16", "f32"], default="bf16",
                   help="dtype of per-group partial outputs (FA2 keeps f32; default bf16)")
    s.add_argument("--seed", type=int, default=0, help="first random seed for the inputs (default 0)")
    s.add_argument("--tries", type=int, default=16, help="seeds to search for a bf16 difference (default 16)")
    s.add_argument("--json", action="store_true", help="print JSON")
    s.set_defaults(_run=run_simulate, stack_run=run_simulate)


def run_splits(args: argparse.Namespace) -> int:
    from kldcard.stack.splits import block_n_for_head_dim, gpu_table, predict_splits

    # ``is not None``, not truthiness: an explicit 0 must reach the library's "at least 1" check.
    if args.head_dim is not None:
        block_n = block_n_for_head_dim(args.head_dim)
    else:
        block_n = 64 if args.block_n is None else args.block_n
    if args.gpu is None and args.sms is None:
        targets = [(g.name, None) for g in gpu_table()]
    else:
        targets = [(args.gpu, args.sms)]
    preds = [
        predict_splits(
            args.seqlen, args.kv_heads, gpu=g, sm_count=n, block_n=block_n, batch=args.batch, m_blocks=args.m_blocks
        )
        for g, n in targets
    ]
    if args.json:
        print(json.dumps([p.to_dict() for p in preds], indent=2))
        return 0
    first = preds[0]
    print(
        f"FlashAttention 2 split-KV prediction: {first.seqlen_k:,} KV tokens, {first.kv_heads} KV heads, "
        f"batch {first.batch}, {first.m_blocks} query block(s), KV blocks of {first.block_n} tokens "
        f"({first.n_blocks} blocks)"
    )
    for p in preds:
        name = p.gpu or "GPU"
        why = " (80% occupancy rule: no split)" if p.shortcut else ""
        last = p.boundaries()[-1]
        print(
            f"  {name:<24} {p.sm_count:>4} SMs: {p.splits:>3} groups of up to {p.tokens_per_split:,} tokens "
            f"({p.blocks_per_split} blocks; last group {last[1] - last[0]:,}){why}"
        )
    return 0


def run_simulate(args: argparse.Namespace) -> int:
    from kldcard.stack.simulate import simulate_groupings
    from kldcard.stack.splits import predict_splits, resolve_sm_count

    if args.gpus:
        counts, names = [], []
        for g in args.gpus:
            sms, name = resolve_sm_count(g, None)
            pred = predict_splits(args.seqlen, args.kv_heads, sm_count=sms, block_n=args.block_n)
            counts.append(pred.splits)
            names.append(f"{name} ({sms} SMs)")
    else:
        counts, names = list(args.groups), [f"{g} groups" for g in args.groups]
    result = simulate_groupings(
        args.seqlen, args.head_dim, counts, block_n=args.block_n, seed=args.seed, tries=args.tries,
        partial_dtype=args.partial_dtype,
    )
    result["labels"] = names
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    base = result["baseline"]
    print(
        f"Split-softmax attention, one query over {args.seqlen:,} keys, head dim {args.head_dim}, same random "
        f"inputs (seed {result['seed']}); partial outputs {args.partial_dtype}, final output bf16."
    )
    print(f"  baseline {names[0]}: {base['actual_groups']} groups of {base['group_tokens']:,} tokens")
    for name, row in zip(names[1:], result["compared"]):
        print(
            f"  {name}: {row['actual_groups']} groups of {row['group_tokens']:,} tokens -> bf16 output differs in "
            f"{row['bf16_n_different']} of {args.head_dim} elements (max |Δ| {row['bf16_max_abs_diff']:.3g}); "
            f"float64 outputs agree to {row['f64_max_abs_diff']:.1e}"
        )
    if not any(r["bf16_n_different"] for r in result["compared"]):
        print(f"  no bf16 difference in {result['tries']} seeds (same group layout, or try --tries)", file=sys.stderr)
    return 0
