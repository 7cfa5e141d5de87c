"""``kldcard comparable A B [C ...]``: can these published KLD numbers be put side by side?

Exit codes: 0 comparable, 1 not comparable or cannot tell, 2 unusable input (one line on stderr).
``--rank FILE`` hands comparable kldcard results with per-token files over to ``kldcard rank``.
"""

from __future__ import annotations

import argparse
import sys

from kldcard.card.document import CARD_BYTES_CEILING, MAX_CARD_BYTES
from kldcard.errors import UsageError


EPILOG = (
    "Rows: D1 reference checkpoint, D3 evaluation text, D5 context length, D6 sampled positions, D7 KL direction, "
    "D8 vocabulary truncation, D9 statistic must be equal; D2 runtime and the D9 uncertainty method may differ "
    "with a caveat (a cross-stack difference is part of the number); D4 calibration does not matter, but "
    "calibration that overlaps the evaluation text is flagged. Row verdicts: same, compatible (two spellings of "
    "one thing: BF16/bfloat16, wikitext-2 test/wiki.test.raw, bits/nats), differs (both values shown), unknown "
    "(a side does not say). Overall: comparable (with caveats), not comparable: different ... (A vs B), cannot "
    "tell: B does not say ... . Numbers that read the same on every disclosure share one column (A, or A1, A2 "
    "when one input gives several). Every number is printed with what it is, as read: its unit, statistic, "
    "direction (KL(P_ref ‖ P_cand) is forward), positions and vocabulary. A value that cannot be a mean KL "
    "divergence (negative, not finite, above 100 nats) is named on a 'value:' line and nothing is ranked. A "
    "card whose kld_evaluation block kldcard lint rejects (a value it refuses: KLD0xx/KLD1xx) is not read: "
    "each candidate left out is named on a 'not read:' line with the rule; an input with no usable number "
    "left is exit 2. JSON keys: verdict, sentence, reasons, caveats, flags, implausible_values, unreadable "
    "[{input, source, label, line, rule, message, more}], columns [{name, source, numbers [{source, kind, "
    "label, value, unit, unit_as_read, what, line, claim_line, span, interval, per_token, implausible}]}], rows "
    "[{row, disclosure, label, rule, verdict, detail, flag, cells {COLUMN: {status, value (as read), compared "
    "(what names one quantity), evidence [{text, line, column, key, tool}]}}}], ranking {kind, message, lines, "
    "results}."
)


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "comparable",
        help="can these published KLD numbers be compared? (a row per disclosure, a verdict per row)",
        description="Read the nine disclosures of each KLD number (from a card's kld_evaluation block, its "
        "prose, or a kldcard results JSON) and say whether the numbers are the same quantity: a row per "
        "disclosure, a column per number, a verdict per row (same, compatible, differs, unknown) and an "
        "overall verdict with its reasons. One card: its own numbers against each other; numbers of one card "
        "(also given twice, or two of its claims) share what it leaves unsaid (a caveat), while two cards that "
        "both leave a must-equal disclosure unsaid are 'cannot tell'. The rules are in docs/comparable.md. Exit 0 comparable, 1 not comparable or cannot tell, 2 unusable input.",
        epilog=EPILOG,
    )
    p.add_argument("inputs", nargs="+", metavar="INPUT",
                   help="a card file or hf://OWNER/NAME[@REV]; CARD#LINE (the claim or candidate at any of its lines) or CARD::NAME "
                   "(one candidate); or a results JSON written by kldcard compare/evaluate")
    p.add_argument("-o", "--output-format", choices=("text", "json", "markdown"), default="text",
                   help="text (default): a table for the terminal; json: every row with its evidence; "
                   "markdown: a table to paste into a Hub discussion")
    p.add_argument("--offline", action="store_true", help="read hf:// cards only from the local Hugging Face cache")
    p.add_argument("--max-card-bytes", type=int, metavar="N",
                   help="refuse inputs (cards, results JSON) larger than N bytes (default 1 MiB)")
    p.add_argument("--rank", metavar="RANKING.json",
                   help="when every number is a comparable kldcard result with per-token values, run "
                   "kldcard rank on them and write the paired ranking here (needs the compare extra)")
    return p


def run(args: argparse.Namespace) -> int:
    from kldcard.comparable import comparable, render

    limit = MAX_CARD_BYTES
    if args.max_card_bytes is not None:
        if not 1 <= args.max_card_bytes <= CARD_BYTES_CEILING:
            raise UsageError(f"--max-card-bytes must be a whole number of bytes from 1 to {CARD_BYTES_CEILING}")
        limit = args.max_card_bytes
    result = comparable(args.inputs, local_files_only=args.offline, max_bytes=limit)
    if args.rank and result.advice.kind != "rank":
        raise UsageError(f"--rank: nothing to rank with paired intervals ({result.advice.message})")
    sys.stdout.write(render(result, args.output_format))
    if args.rank:
        from kldcard.cli.main import main

        return main(["rank", *result.advice.results, "-o", args.rank]) or result.exit_code
    return result.exit_code
