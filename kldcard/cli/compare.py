"""``kldcard compare REF CAND -o result.json``: float64 divergences between two captures.

Prints a short labelled summary (nats, direction KL(P_ref || P_cand), positions, vocabulary) and
writes the result JSON atomically. Exit 0 on success, 2 when the captures cannot be compared.
"""

from __future__ import annotations

import argparse

from kldcard.cli.summary_options import UNCERTAINTY_CHOICES, add_summary_arguments, check_summary_arguments
from kldcard.errors import UsageError
from kldcard.progress import position_progress


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "compare",
        help="compare a reference capture with a candidate capture (float64, nats)",
        description="Compute per-token forward KL(P_ref || P_cand), reverse KL, Jensen-Shannon (all in nats), "
        "top-1 agreement and Δp between two captures, in float64, and summarise them overall and per "
        "position range. Refuses captures whose token ids, positions or vocabulary differ, and a manifest whose "
        "provenance its data contradict (positions and context windows recomputed from the stored positions, "
        "text sha256, quantization from the GGUF header when the model file is at hand) (exit 2).",
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
    p.add_argument("--text", metavar="FILE", help="the evaluation text: its sha256 must be the one the manifests state")
    add_summary_arguments(p)
    from kldcard.cli.cluster import add_scheduler_arguments

    add_scheduler_arguments(p)
    return p


def run(args: argparse.Namespace) -> int:
    from kldcard.capture.store import open_capture
    from kldcard.compare.run import compare, write_per_token, write_result
    from kldcard.compare.summary import DEFAULT_PERCENTILES
    from kldcard.files import check_output_file

    if args.reference_llama_base:
        if args.reference:
            raise UsageError("give either REF or --reference-llama-base, not both")
        if args.output or args.per_token:
            # the base-file comparison prints llama-perplexity's block; nothing would be written
            raise UsageError("-o and --per-token are not used with --reference-llama-base; "
                             "use --report json and redirect stdout to keep the numbers")
        from kldcard.cli.llama import compare_with_base

        args.no_chunks = False
        return compare_with_base(args)
    if not args.reference or not args.output:
        raise UsageError("kldcard compare needs REF, CAND and -o RESULT.json (or --reference-llama-base FILE CAND)")
    check_summary_arguments(args)
    if args.per_token and not args.per_token.endswith((".npz", ".csv")):
        raise UsageError(f"--per-token file must end in .npz or .csv, not {args.per_token!r}")
    inputs = [args.reference, args.candidate]  # capture directories: each stands for its files
    check_output_file(args.output, "-o", inputs)
    if args.per_token:
        check_output_file(args.per_token, "--per-token", [*inputs, args.output])
    from kldcard.capture.sparse import open_any_capture
    from kldcard.compare.truncated import needs_truncated

    if needs_truncated(args.reference, args.candidate, scheduler=bool(args.scheduler),
                       align_vocab=bool(args.align_vocab), per_token=bool(args.per_token)):
        verify = not args.no_verify
        return _run_truncated(args, open_any_capture(args.reference, verify), open_any_capture(args.candidate, verify))
    if args.scheduler:
        from kldcard.cli.cluster import compare_from_args

        if args.uncertainty != "auto":
            raise UsageError("--uncertainty other than auto is not available with --scheduler yet")

        result, per_token = compare_from_args(args, percentiles=args.percentiles or DEFAULT_PERCENTILES,
                                              show_progress=not args.no_progress)
    else:
        ref = open_capture(args.reference, verify=not args.no_verify)
        cand = open_capture(args.candidate, verify=not args.no_verify)
        with position_progress(ref.n_positions, "comparing", not args.no_progress) as callback:
            result, per_token = compare(
                ref, cand, align_vocab=args.align_vocab, buckets=args.buckets,
                percentiles=args.percentiles or DEFAULT_PERCENTILES, bootstrap=args.bootstrap, level=args.level,
                seed=args.seed, uncertainty=UNCERTAINTY_CHOICES[args.uncertainty], threads=args.threads, progress=callback, return_per_token=True,
                text=args.text,
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
    from kldcard.compare.truncated import compare_truncated, render_note
    from kldcard.files import output_errors, write_atomic

    res = compare_truncated(ref, cand, treatment=args.tail, verify=not args.no_verify)
    with output_errors(args.output):
        write_atomic(args.output, res.model_dump_json(indent=2) + "\n")
    print(f"forward KL(P_ref || P_cand) over a top-k vocabulary (tail: {res.treatment}), nats, "
          f"{res.n_positions} positions: mean {res.mean:.6g}, median {res.median:.6g}, p99 {res.p99:.6g}, "
          f"max {res.max:.6g}")
    print(render_note(res))
    print(f"wrote {args.output}")
    return 0
