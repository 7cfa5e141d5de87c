"""``kldcard lint PATH...``: lint model cards for KLD disclosures.

Exit codes: 0 clean (or nothing at/above ``--fail-on``, or ``--exit-zero``), 1 findings (or, with
``--diff``, fixes to apply), 2 usage or input error (a card that cannot be read or fetched is
reported and the run goes on; the exit code is 2 at the end).
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path

from kldcard.card import hub
from kldcard.card.document import CARD_BYTES_CEILING, read_bytes
from kldcard.errors import InputError, UsageError, printable
from kldcard.files import check_output_file, write_atomic
from kldcard.lint.baseline import apply_baseline, baseline_text, load_baseline
from kldcard.lint.config import FAIL_LEVELS, OUTPUT_FORMAT_ENV, OUTPUT_FORMATS, LintConfig, find_pyproject, load_config
from kldcard.lint.findings import LintResult
from kldcard.lint.registry import GROUPS, all_rules
from kldcard.lint.report_formats import render_statistics
from kldcard.lint.reporters import failing, render, use_color
from kldcard.lint.runner import enabled_codes, fix_text, lint_card


def _codes(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


class _Formatter(argparse.HelpFormatter):
    """Paragraphs are filled as usual; a paragraph whose lines are indented is kept as written."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        out = []
        for para in text.split("\n\n"):
            if para.startswith("  "):
                out.append("\n".join(indent + line for line in para.splitlines()))
            else:
                out.append(super()._fill_text(para, width, indent))
        return "\n\n".join(out)


def _reading_epilog() -> str:
    from kldcard.lint.read.complete import REQUIRED

    complete = "; ".join(f"D{n} " + " or ".join("+".join(a) for a in alts) for n, alts in REQUIRED.items())
    return (
        "The reading (--explain, and 'reading' in -o json / json-lines). A card without a kld_evaluation block is "
        "read claim by claim (a table's KLD column or row, pasted tool output, a sentence); for each claim one "
        "row per disclosure D1-D9:\n\n"
        "  status    stated (complete) | incomplete (found in part: KLD33x, a warning) |\n"
        "            inferred (a named tool's documented default: KLD313) | missing (nothing found: KLD30x)\n"
        "  value     what was read: D1 repo, revision, dtype, quantized; D2 engine, version, backend, device;\n"
        "            D3 name, source, sha256, tokens; D4 none, dataset, size; D5 n_ctx, chunks, stride;\n"
        "            D6 scheme, count; D7 direction (forward|reverse|js|both|as-written), unit (nats|bits);\n"
        "            D8 scheme (full|top-k|floor|sampled-token), k, floor; D9 statistic (mean|median|max|min|cvar|pNN), uncertainty\n"
        "  evidence  LINE:COL 'quoted text' in the card file, 'front matter /base_model' (the Hub's keys),\n"
        "            or the tool default an inferred value comes from\n"
        "  needs     what complete still lacks (never what the named tool fixes: llama-perplexity's chunks never\n"
        "            overlap and score their second half, so '-c 512' has its stride and '8 chunks' its\n"
        "            positions; model_diff's rows never overlap; JSON inferred_keys lists the keys of value a\n"
        "            tool default gives)\n\n"
        f"Complete, in prose: {complete}. The nearest statement wins (the claim's own section), a statement in a "
        "section without claims applies to every claim, and the front matter's base_model (unless "
        "base_model_relation says finetune, adapter or merge) and calibration datasets fill what the text leaves. "
        "JSON: \"reading\": {FILE: [{kind, line, column, text, tool, numbers: [{text, value, line, column, unit, "
        "statistic, candidate}] (value in the unit: \"35 mbits\" reads 0.035, unit bits), disclosures: [{disclosure, name, status, value, evidence: [{text, line, column, key, "
        "tool}], needs, inferred_keys (when a tool default gives any)}]}]} (schemas/lint-report.schema.json); json-lines: each KLD30x/KLD33x finding's \"reading\" is "
        "the disclosure reading it was reached from.\n\n"
        "--fix --scaffold writes a kld_evaluation block with every field the schema requires: the card's stated "
        "values, TODO placeholders elsewhere (a printed number whose statistic the card leaves open is quoted in "
        "its TODO); lint then reports each placeholder (KLD013) and nothing else about the block until all are filled."
    )


# the formats that carry --explain's reading: text and full print its table, json and json-lines hold it
EXPLAIN_FORMATS = ("text", "full", "json", "json-lines")


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    groups = ", ".join(f"{g}xx {desc}" for g, desc in GROUPS.items())
    p = subparsers.add_parser(
        "lint",
        help="lint model cards for missing KLD disclosures",
        description="Lint model cards (README.md with a kld_evaluation block, or hf://OWNER/NAME[@REV]) "
        f"for missing or inconsistent KL-divergence disclosures. Rule groups: {groups}. "
        "Exit 0 clean, 1 findings, 2 usage or input error.",
        epilog=_reading_epilog(),
        formatter_class=_Formatter,
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="card files or hf://OWNER/NAME[@REVISION]")
    p.add_argument(
        "-o", "--output-format", choices=OUTPUT_FORMATS, default=None,
        help=f"report format (default: ${OUTPUT_FORMAT_ENV}, else the config's output-format, else text)",
    )
    p.add_argument(
        "--select", type=_codes, action="extend", default=None, metavar="CODES",
        help="comma-separated rule codes or prefixes to enable (e.g. KLD1,KLD201); replaces the config's select",
    )
    p.add_argument(
        "--extend-select", type=_codes, action="extend", default=None, metavar="CODES",
        help="comma-separated rule codes or prefixes to enable in addition to the selected ones",
    )
    p.add_argument(
        "--ignore", type=_codes, action="extend", default=None, metavar="CODES",
        help="comma-separated rule codes or prefixes to disable; added to the config's ignore",
    )
    p.add_argument(
        "--fail-on", choices=FAIL_LEVELS, default=None,
        help="lowest severity that makes the run fail with exit 1 (default: info, i.e. any finding)",
    )
    p.add_argument("--exit-zero", action="store_true", help="exit 0 even when there are findings (2 still means unusable input)")
    p.add_argument(
        "--explain", action="store_true",
        help="before the findings, print the reading of each KLD claim of a free-form card: per disclosure its status "
        "(stated/incomplete/inferred/missing), the value read and the evidence (line:col and quoted text, or front-matter key); "
        "text and full formats (json and json-lines carry it as 'reading'; other formats, --statistics, --diff and "
        "--write-baseline refuse it, exit 2)",
    )
    p.add_argument("--statistics", action="store_true", help="print the number of findings per rule instead of the findings")
    p.add_argument("--fix", action="store_true", help="apply the safe fixes (YAML 1.1 exponents, model-index from the block, section markers), then report what is left")
    p.add_argument(
        "--scaffold", action="store_true",
        help="with --fix (or --diff): give each free-form card (KLD claims, no kld_evaluation block) a kld_evaluation "
        "block pre-filled from its reading: the card's own values where it states them, TODO placeholders elsewhere "
        "(never a guessed value); lint then reports each TODO (KLD013) until it is filled",
    )
    p.add_argument("--diff", action="store_true", help="print the safe fixes as a unified diff instead of writing them (exit 1 when there is one)")
    p.add_argument("--baseline", metavar="FILE", help="report only findings not recorded in this baseline, and baseline entries that no longer occur")
    p.add_argument("--write-baseline", metavar="FILE", help="record today's findings in FILE (by file, rule and a hash of the claim's text) and exit 0")
    p.add_argument("--repos", metavar="FILE", help="also lint the Hub cards listed in FILE (one OWNER/NAME[@REV] per line, # comments)")
    p.add_argument("--config", metavar="PYPROJECT", help="read [tool.kldcard] from this file instead of the nearest pyproject.toml")
    p.add_argument("--max-card-bytes", type=int, metavar="N",
                   help="refuse cards larger than N bytes (default 1 MiB, or the config's max-card-bytes)")
    p.add_argument("--offline", action="store_true", help="hf:// cards from the local Hugging Face cache only")
    p.add_argument("--output-file", metavar="FILE", help="write the report to FILE (atomically) instead of stdout; "
                   "- is stdout; never one of the run's inputs")
    p.add_argument("--list-rules", action="store_true", help="list all rules and exit")
    p.add_argument("--show-rule", metavar="CODE", help="show one rule's documentation and exit (also: kldcard rule CODE)")
    return p


def show_rule(code: str) -> int:
    from kldcard.lint.docs import rule_doc

    rules = all_rules()
    if code.upper() not in rules:
        raise UsageError(f"unknown rule {code!r}; see `kldcard lint --list-rules`")
    print(rule_doc(rules[code.upper()]), end="")
    return 0


def _fix(paths: list[str], args: argparse.Namespace, config: LintConfig) -> tuple[int, int, int]:
    """Apply (or, with --diff, print) the fixes (and --scaffold blocks) of local cards; (cards changed,
    fixes, blocks scaffolded)."""
    changed = n_fixes = n_blocks = 0
    for path in paths:
        if hub.is_hub_spec(path):
            print(printable(f"kldcard: {path}: a Hub card is not fixed (edit it in its repository)"), file=sys.stderr)
            continue
        try:
            data = read_bytes(path, config.max_card_bytes)
            enabled = enabled_codes(args.select, args.ignore, config, extend_select=args.extend_select, file=path)
            new, fixes = fix_text(data, path, enabled)
            if args.scaffold:
                from kldcard.lint.scaffold import scaffold_bytes

                drafted = scaffold_bytes(new, path)
                if drafted is not None:
                    new, n_blocks = drafted, n_blocks + 1
        except InputError:
            continue  # reported by the lint pass that follows
        if new == data:
            continue
        changed, n_fixes = changed + 1, n_fixes + len(fixes)
        if args.diff:
            old_t, new_t = data.decode("utf-8-sig"), new.decode("utf-8-sig")
            sys.stdout.writelines(difflib.unified_diff(old_t.splitlines(True), new_t.splitlines(True), f"a/{printable(path)}", f"b/{printable(path)}"))
        else:
            write_atomic(Path(path), new)
    return changed, n_fixes, n_blocks


def run(args: argparse.Namespace) -> int:
    if args.list_rules:
        for r in all_rules().values():
            print(f"{r.code}  {r.severity:<7}  {r.name:<34}  {r.summary}")
        return 0
    if args.show_rule:
        return show_rule(args.show_rule)
    paths = list(args.paths)
    if args.repos:
        paths += hub.read_repo_list(args.repos)
    if not paths:
        raise UsageError("no PATH given; pass one or more card files (e.g. README.md) or hf://OWNER/NAME")
    if args.fix and args.diff:
        raise UsageError("--fix writes the fixes and --diff only shows them; pass one of them")
    if args.scaffold and not (args.fix or args.diff):
        raise UsageError("--scaffold writes a block: pass it with --fix (or --diff to see it first)")
    if args.baseline and args.write_baseline:
        raise UsageError("--baseline and --write-baseline exclude each other")

    # the output policy (kldcard.files) before anything is read or written: never over an input
    inputs = [p for p in paths if not hub.is_hub_spec(p)] + [args.baseline, args.repos, args.config or find_pyproject()]
    output_file = args.output_file and check_output_file(args.output_file, "--output-file", inputs, stdout=True)
    if args.write_baseline:
        check_output_file(args.write_baseline, "--write-baseline", inputs)

    config: LintConfig = load_config(args.config)
    if args.max_card_bytes is not None:
        if not 1 <= args.max_card_bytes <= CARD_BYTES_CEILING:
            raise UsageError(f"--max-card-bytes must be a whole number of bytes from 1 to {CARD_BYTES_CEILING}")
        config.max_card_bytes = args.max_card_bytes
    fmt = args.output_format or os.environ.get(OUTPUT_FORMAT_ENV) or config.output_format
    if fmt not in OUTPUT_FORMATS:
        raise UsageError(f"{OUTPUT_FORMAT_ENV}={fmt!r}: not an output format; use one of {', '.join(OUTPUT_FORMATS)}")
    if args.explain:  # never silently dropped: the reading goes where the format can carry it, or nowhere
        if args.statistics or args.diff or args.write_baseline:
            other = ("--statistics prints counts only" if args.statistics else "--diff prints only the diff"
                     if args.diff else "--write-baseline prints no report")
            raise UsageError(f"--explain prints the reading and {other}; pass one of them")
        if fmt not in EXPLAIN_FORMATS:
            raise UsageError(f"--explain: the {fmt} format cannot carry the reading; use -o text or full (the "
                             "reading table), or json / json-lines (the reading as 'reading')")
    fail_on = args.fail_on or config.fail_on
    enabled_codes(args.select, args.ignore, config, extend_select=args.extend_select)  # unknown codes: exit 2 first

    if args.fix or args.diff:
        changed, n_fixes, n_blocks = _fix(paths, args, config)
        if args.diff:
            return 1 if changed else 0
        if n_fixes:
            print(f"kldcard: fixed {n_fixes} finding{'s' * (n_fixes != 1)} in {changed} card{'s' * (changed != 1)}", file=sys.stderr)
        if n_blocks:
            print(f"kldcard: scaffolded a kld_evaluation block in {n_blocks} card{'s' * (n_blocks != 1)}: fill its TODOs (KLD013)",
                  file=sys.stderr)

    result, bad_input = LintResult(), 0
    cache = hub.CardCache(local_files_only=args.offline)
    for path in paths:
        try:
            one = lint_card(path, select=args.select, ignore=args.ignore, extend_select=args.extend_select, config=config, cache=cache)
        except InputError as exc:
            print(f"kldcard: error: {exc}", file=sys.stderr)
            result.unreadable[path] = str(exc)
            bad_input += 1
            continue
        if args.repos and hub.is_hub_spec(path):  # one summary line per repo
            _, rev = cache.fetch(path)
            n = len(one.findings)
            at = f" @ {rev[:12]}" if rev else ""
            print(printable(f"kldcard: {path}{at}: {n} finding{'s' * (n != 1)}"), file=sys.stderr)
        result.extend(one)

    if args.write_baseline:
        write_atomic(Path(args.write_baseline), baseline_text(result))
        print(f"kldcard: wrote {len(result.findings)} finding(s) of {len(result.files)} card(s) to {args.write_baseline}", file=sys.stderr)
        return InputError.exit_code if bad_input else 0
    if args.baseline:
        result, stale = apply_baseline(result, load_baseline(args.baseline))
        for e in stale:
            print(printable(
                f"kldcard: baseline {args.baseline}: {e.file} {e.rule_id} no longer occurs ({e.count}x: {e.message}); "
                "refresh it with --write-baseline"),
                file=sys.stderr,
            )

    if args.statistics:
        report = render_statistics(result, fmt)
    elif args.explain and fmt in ("text", "full"):
        from kldcard.lint.explain import render_explain

        report = render_explain(result) + render(result, fmt, fail_on=fail_on, color=fmt in ("text", "full") and not args.output_file and use_color(sys.stdout))
    else:
        report = render(result, fmt, fail_on=fail_on, color=fmt in ("text", "full") and not output_file and use_color(sys.stdout))
    if output_file:
        write_atomic(output_file, report)
    else:
        sys.stdout.write(report)
    if bad_input:
        return InputError.exit_code
    if args.exit_zero:
        return 0
    return 1 if failing(result, fail_on) else 0
