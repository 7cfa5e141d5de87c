"""``kldcard compare REF CAND -o result.json``: float64 divergences between two captures.

Prints a short labelled summary (nats, direction KL(P_ref || P_cand), positions, vocabulary) and
writes the result JSON atomically. Exit 0 on success, 2 when the captures cannot be compared.
"""

from __future__ import annotations

import argparse
import sys
from contextlib import nullcontext

from ..errors import UsageError


def _percentiles(text: str) -> list[float]:
    try:
        vals = [float(x) for x in text.split(",") if x.strip()]
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected comma-separated numbers, got {text!r}") from None
    if not vals or any(not 0 <= v <= 100 for v in vals):
        raise argparse.ArgumentTypeError("percentiles must lie in [0, 100]")
    return vals


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "compare",
        help="compare a reference capture with a candidate capture (float64, nats)",
        description="Compute per-token forward KL(P_ref || P_cand), reverse KL, Jensen-Shannon (all in nats), "
        "top-1 agreement and Δp between two captures, in float64, and summarise them overall and per "
        "position range. Refuses captures whose token ids, positions or vocabulary differ (exit 2).",
    )
    p.add_argument("reference", metavar="REF", nargs="?",
                   help="reference capture directory (e.g. the BF16 model); omit with --reference-llama-base")
    p.add_argument("candidate", metavar="CAND", help="candidate capture directory (e.g. the quantized model)")
    p.add_argument("-o", "--output", metavar="RESULT.json", help="result JSON (written atomically; required with REF)")
    p.add_argument(
        "--reference-llama-base", metavar="FILE",
        help="use a llama-perplexity --kl-divergence-base file as the reference instead of REF; prints "
        "llama-perplexity's statistics (its float32 formulas) for the candidate capture",
    )
    p.add_argument("--tail", choices=("lumped", "union-renormalised"), default="lumped",
                   help="when a capture is top-k (sparse, e.g. from an OpenAI-compatible server): how the "
                   "unreported tail enters the sum (default lumped: one tail bucket each side, a lower bound)")
    p.add_argument("--report", choices=("llama-perplexity", "json"), default="llama-perplexity",
                   help="with --reference-llama-base: the block llama-perplexity prints (default) or JSON")
    p.add_argument("--per-token", metavar="FILE", help="also write per-token values (.npz or .csv)")
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
    p.add_argument("--level", type=float, default=0.95, help="bootstrap confidence level (default 0.95)")
    p.add_argument("--seed", type=int, default=0, help="bootstrap seed (default 0)")
    p.add_argument("--threads", type=int, default=None, metavar="N", help="worker threads (default: all usable cores)")
    p.add_argument("--no-verify", action="store_true", help="check shard sizes only, skip sha256 verification")
    p.add_argument("--no-progress", action="store_true", help="no progress bar (it is also off when stderr is not a terminal)")
    from ..distributed.cluster import add_scheduler_arguments

    add_scheduler_arguments(p)
    return p


def _progress_bar(total: int, enabled: bool):
    if not enabled or not sys.stderr.isatty():
        return nullcontext(None)
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    return Progress(
        TextColumn("comparing"), BarColumn(), MofNCompleteColumn(), TextColumn("positions"), TimeRemainingColumn(),
        console=Console(stderr=True), transient=True,
    )


def run(args: argparse.Namespace) -> int:
    from ..capture.store import open_capture
    from ..compare import compare, write_per_token, write_result
    from ..summary import DEFAULT_PERCENTILES

    if args.reference_llama_base:
        if args.reference:
            raise UsageError("give either REF or --reference-llama-base, not both")
        from .llama import _compare as compare_with_base

        args.no_chunks = False
        return compare_with_base(args)
    if not args.reference or not args.output:
        raise UsageError("kldcard compare needs REF, CAND and -o RESULT.json (or --reference-llama-base FILE CAND)")
    if args.bootstrap < 0:
        raise UsageError("--bootstrap must be >= 0")
    if not 0 < args.level < 1:
        raise UsageError("--level must lie strictly between 0 and 1")
    if args.threads is not None and args.threads < 1:
        raise UsageError("--threads must be >= 1")
    if args.per_token and not args.per_token.endswith((".npz", ".csv")):
        raise UsageError(f"--per-token file must end in .npz or .csv, not {args.per_token!r}")
    from ..capture.sparse import is_sparse_capture, open_any_capture

    if is_sparse_capture(args.reference) or is_sparse_capture(args.candidate):
        verify = not args.no_verify
        return _run_truncated(args, open_any_capture(args.reference, verify), open_any_capture(args.candidate, verify))
    if args.scheduler:
        from ..distributed.cli import compare_from_args

        result, per_token = compare_from_args(args, percentiles=args.percentiles or DEFAULT_PERCENTILES,
                                              show_progress=not args.no_progress)
    else:
        ref = open_capture(args.reference, verify=not args.no_verify)
        cand = open_capture(args.candidate, verify=not args.no_verify)
        with _progress_bar(ref.n_positions, not args.no_progress) as bar:
            callback = None
            if bar is not None:
                task = bar.add_task("compare", total=ref.n_positions)
                callback = lambda n: bar.advance(task, n)  # noqa: E731
            result, per_token = compare(
                ref, cand, align_vocab=args.align_vocab, buckets=args.buckets,
                percentiles=args.percentiles or DEFAULT_PERCENTILES, bootstrap=args.bootstrap, level=args.level,
                seed=args.seed, threads=args.threads, progress=callback, return_per_token=True,
            )
    if args.per_token:
        write_per_token(per_token, args.per_token)
        result.per_token_file = args.per_token
    write_result(result, args.output)
    for line in result.summary_lines():
        print(line)
    print(f"wrote {args.output}" + (f" and {args.per_token}" if args.per_token else ""))
    return 0


def _run_truncated(args: argparse.Namespace, ref, cand) -> int:
    """A top-k (sparse) capture on either side: the truncated comparison, with its tail treatment named."""
    from ..atomic import write_atomic
    from ..truncated import compare_truncated, render_note

    res = compare_truncated(ref, cand, treatment=args.tail, verify=not args.no_verify)
    write_atomic(args.output, res.model_dump_json(indent=2) + "\n")
    print(f"forward KL(P_ref || P_cand) over a top-k vocabulary (tail: {res.treatment}), nats, "
          f"{res.n_positions} positions: mean {res.mean:.6g}, median {res.median:.6g}, p99 {res.p99:.6g}, "
          f"max {res.max:.6g}")
    print(render_note(res))
    print(f"wrote {args.output}")
    return 0
