"""``kldcard llama``: speak llama.cpp's KLD (base files, llama-perplexity statistics and logs).

Subcommands: ``base-info``, ``base-to-capture``, ``capture-to-base``, ``import-log``, ``compare``.
All KLD numbers are KL(P_base ‖ Q_candidate) (forward) in nats, at positions n_ctx//2 … n_ctx−2 of
every non-overlapping n_ctx chunk, with the base stored at a 16-nat floor (24: ik_llama.cpp).
"""

from __future__ import annotations

import argparse
import json
import sys

from kldcard import files
from kldcard.errors import UsageError
from kldcard.progress import counted_progress


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "llama",
        help="read/write llama.cpp --kl-divergence-base files, reproduce llama-perplexity statistics",
        description="llama.cpp's KLD protocol: base files (_logits_), llama-perplexity's statistics "
        "(KL(P_base || Q_candidate), nats) and its printed logs.",
    )
    sub = p.add_subparsers(dest="llama_command", metavar="SUBCOMMAND")
    sub.required = True

    s = sub.add_parser("base-info", help="validate a base file and describe it")
    s.add_argument("file", metavar="FILE")
    s.add_argument("-o", "--output-format", choices=("text", "json"), default="text")
    s.set_defaults(_llama=_base_info)

    s = sub.add_parser("base-to-capture", help="decode a base file into a kldcard capture (f32 log-probs)")
    s.add_argument("file", metavar="FILE")
    s.add_argument("--out", required=True, metavar="DIR")
    s.add_argument("--bos-id", type=int, default=None,
                   help="BOS id if the base model's vocabulary adds BOS (token 0 of each chunk is fed as BOS)")
    s.add_argument("--floor", type=float, choices=(16.0, 24.0), default=None,
                   help="storage floor in nats (default: detected; 24 = ik_llama.cpp)")
    s.add_argument("--model-name", default=None, help="name of the base model (recorded in the manifest)")
    s.add_argument("--floor-decode", choices=("masked", "value"), default="masked",
                   help="entries at or below the floor (code 0): masked = -inf, probability 0 (default; right for "
                   "kldcard's float64 forward KL); value = min_log_prob as llama.cpp reads it (byte-exact round trip)")
    s.add_argument("--force", action="store_true", help="replace DIR if it exists")
    s.set_defaults(_llama=_base_to_capture)

    s = sub.add_parser("capture-to-base", help="encode a llama-perplexity-protocol f32 capture as a base file")
    s.add_argument("capture", metavar="CAPTURE")
    s.add_argument("--out", required=True, metavar="FILE")
    s.add_argument("--floor", type=float, choices=(16.0, 24.0), default=16.0,
                   help="storage floor in nats: 16 mainline llama.cpp (default), 24 ik_llama.cpp")
    s.add_argument("--force", action="store_true", help="replace FILE if it exists")
    s.set_defaults(_llama=_capture_to_base)

    s = sub.add_parser("import-log", help="parse pasted llama-perplexity --kl-divergence output")
    add_import_log_arguments(s)
    s.set_defaults(_llama=import_log)

    s = sub.add_parser("compare", help="llama-perplexity statistics of a candidate capture against a base file")
    s.add_argument("--reference-llama-base", required=True, metavar="FILE", help="the --kl-divergence-base file")
    s.add_argument("candidate", metavar="CANDIDATE_CAPTURE",
                   help="kldcard capture of the candidate at llama-perplexity's positions (f32 logits for exact numbers)")
    s.add_argument("--report", choices=("llama-perplexity", "json"), default="llama-perplexity",
                   help="llama-perplexity: the block llama-perplexity prints, after a '# kldcard:' line saying what "
                   "the numbers are (default); json: the same numbers with stable keys")
    s.add_argument("--no-chunks", action="store_true", help="omit the per-chunk lines")
    s.set_defaults(_llama=compare_with_base)
    return p


def add_import_log_arguments(s: argparse.ArgumentParser) -> None:
    """The options of ``llama import-log`` (also ``kldcard import-llama-log``)."""
    s.add_argument("logfile", metavar="LOGFILE", help="text file with the output, or - for stdin")
    s.add_argument("-o", "--output-format", choices=("text", "json"), default="text")
    s.add_argument("--n-ctx", type=int, default=None, help="the -c of the base pass (fills positions.n_scored)")
    s.add_argument("--floor", type=float, choices=(16.0, 24.0), default=16.0,
                   help="storage floor of the base file: 16 mainline (default), 24 ik_llama.cpp ≥ PR #325")


def run(args: argparse.Namespace) -> int:
    return int(args._llama(args) or 0)


def _protocol_line(n_ctx: int, n_chunk: int, n_vocab: int, floor: float) -> str:
    s = n_ctx - 1 - n_ctx // 2
    return (
        f"KLD = KL(P_base || Q_candidate) (forward), nats; positions {n_ctx // 2}..{n_ctx - 2} of each of "
        f"{n_chunk} non-overlapping {n_ctx}-token chunks ({n_chunk * s} tokens); full vocabulary of {n_vocab}, "
        f"base stored at a {floor:g}-nat floor and terms with log p_base <= -16 skipped; "
        "token mean, i.i.d. SE"
    )


def _base_info(args: argparse.Namespace) -> int:
    from kldcard.llamacpp.basefile import open_base_file
    from kldcard.llamacpp.convert import detect_floor

    with open_base_file(args.file) as bf:
        h = bf.header
        floor = detect_floor(bf)
        info = {
            "file": str(bf.path),
            "format": "_logits_ (llama.cpp --kl-divergence-base)",
            "bytes": h.size,
            "n_ctx": h.n_ctx,
            "n_vocab": h.n_vocab,
            "n_chunk": h.n_chunk,
            "n_tokens": h.n_chunk * h.n_ctx,
            "records_per_chunk": h.records_per_chunk,
            "n_scored": h.n_records,
            "scored_positions": f"{h.n_ctx // 2}..{h.n_ctx - 2} of each chunk",
            "floor_nats_detected": floor,
            "first_tokens": [int(t) for t in bf.tokens[:8]],
        }
    if args.output_format == "json":
        print(json.dumps(info, indent=2))
        return 0
    for k, v in info.items():
        print(f"{k:<20} {v}")
    print(f"{'note':<20} floor 24 means ik_llama.cpp (rows spanning > 16 nats); 16 is mainline or an ik file "
          "whose rows all span <= 16 nats")
    return 0


def _base_to_capture(args: argparse.Namespace) -> int:
    from kldcard.llamacpp.basefile import open_base_file
    from kldcard.files import check_output_dir
    from kldcard.llamacpp.convert import base_to_capture

    check_output_dir(args.out, "--out", [args.file])

    with open_base_file(args.file) as bf, counted_progress("decoding") as progress:
        cap = base_to_capture(
            bf, args.out, bos_id=args.bos_id, floor_nats=args.floor, model_name=args.model_name,
            floor_decode=args.floor_decode, overwrite=args.force, progress=progress,
        )
    t = cap.manifest.truncation
    print(f"wrote capture {cap.path}: {cap.n_positions} positions × {cap.n_vocab} vocab, f32 decoded log-probs "
          f"(nats); truncation: floor {t.floor_nats:g} nats (uint16 base encoding), floor entries {args.floor_decode}")
    return 0


def _capture_to_base(args: argparse.Namespace) -> int:
    from kldcard.capture.store import open_capture
    from kldcard.files import check_output_file
    from kldcard.llamacpp.convert import capture_to_base

    check_output_file(args.out, "--out", [args.capture])
    cap = open_capture(args.capture, verify=True)
    with counted_progress("encoding") as progress:
        out = capture_to_base(cap, args.out, floor_nats=args.floor, overwrite=args.force, progress=progress)
    print(f"wrote llama.cpp base file {out} (n_ctx={cap.manifest.context.n_ctx}, n_vocab={cap.n_vocab}, "
          f"{args.floor:g}-nat floor)")
    return 0


def _read_text(path: str) -> str:
    if path == "-":
        return sys.stdin.read()
    return files.read_bytes(path, "log").decode("utf-8", errors="replace")  # pasted logs carry odd bytes


def import_log(args: argparse.Namespace) -> int:
    """``llama import-log``: print (or JSON) a pasted llama-perplexity block's statistics."""
    from kldcard.llamacpp.log import parse_llama_log
    from kldcard.llamacpp.report import log_document, log_lines

    if args.n_ctx is not None and args.n_ctx < 4:
        raise UsageError("--n-ctx must be at least 4")
    log = parse_llama_log(_read_text(args.logfile), n_ctx=args.n_ctx)
    if args.output_format == "json":
        print(json.dumps(log_document(log, floor_nats=args.floor), indent=2, ensure_ascii=False))
    else:
        print("\n".join(log_lines(log, floor_nats=args.floor)))
    return 0


def compare_with_base(args: argparse.Namespace) -> int:
    """``llama compare``: llama-perplexity's statistics of a candidate capture against a base file."""
    from kldcard.capture.store import open_capture
    from kldcard.llamacpp.basefile import open_base_file
    from kldcard.llamacpp.convert import compare_base_with_capture, detect_floor
    from kldcard.llamacpp.stats import format_report

    cand = open_capture(args.candidate, verify=True)
    with open_base_file(args.reference_llama_base) as bf, counted_progress("scoring") as progress:
        h = bf.header
        floor = detect_floor(bf)
        stats = compare_base_with_capture(bf, cand, progress=progress)
    notes = []
    if cand.dtype == "bf16":
        notes.append("candidate logits were stored in BF16; llama-perplexity uses float32 logits, so these numbers "
                     "include BF16 rounding of the candidate")
    stack = cand.manifest.stack
    layout = (getattr(stack, "model_extra", None) or {}).get("batch_layout") if stack is not None else None
    if stack is not None and stack.engine == "llama.cpp" and not layout:
        notes.append("the candidate was not captured in llama-perplexity's batch layout (capture --protocol "
                     "llama-perplexity): its logits, hence the last digits, can differ from llama-perplexity's")
    if args.report == "json":
        doc = stats.to_dict()
        doc.update(protocol=_protocol_line(h.n_ctx, h.n_chunk, h.n_vocab, floor), floor_nats=floor, notes=notes)
        print(json.dumps(doc, indent=2, ensure_ascii=False))
        return 0
    print(f"# kldcard: {_protocol_line(h.n_ctx, h.n_chunk, h.n_vocab, floor)}")
    for n in notes:
        print(f"# kldcard: note: {n}")
    if not stats.has_final_blocks:
        print(f"# kldcard: only {stats.n_tokens} scored tokens; llama-perplexity prints no final statistics below 100")
    sys.stdout.write(format_report(stats, chunks=not args.no_chunks))
    return 0
