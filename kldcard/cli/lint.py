"""``kldcard lint PATH...``: lint model cards for KLD disclosures.

Exit codes: 0 clean (or nothing at/above ``--fail-on``), 1 findings, 2 usage or input error.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from kldcard.errors import InputError, UsageError
from kldcard.files import write_atomic
from kldcard.lint.config import FAIL_LEVELS, OUTPUT_FORMATS, LintConfig, load_config
from kldcard.lint.findings import LintResult
from kldcard.lint.registry import GROUPS, all_rules
from kldcard.lint.reporters import failing, render, use_color
from kldcard.lint.runner import enabled_codes, lint_card


def _codes(text: str) -> list[str]:
    return [c.strip() for c in text.split(",") if c.strip()]


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    groups = ", ".join(f"{g}xx {desc}" for g, desc in GROUPS.items())
    p = subparsers.add_parser(
        "lint",
        help="lint model cards for missing KLD disclosures",
        description="Lint model cards (README.md with a kld_evaluation block, or hf://OWNER/NAME[@REV]) "
        f"for missing or inconsistent KL-divergence disclosures. Rule groups: {groups}. "
        "Exit 0 clean, 1 findings, 2 usage or input error.",
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="card files or hf://OWNER/NAME[@REVISION]")
    p.add_argument("-o", "--output-format", choices=OUTPUT_FORMATS, default=None, help="report format (default: text)")
    p.add_argument(
        "--select", type=_codes, action="extend", default=None, metavar="CODES",
        help="comma-separated rule codes or prefixes to enable (e.g. KLD1,KLD201); replaces the config's select",
    )
    p.add_argument(
        "--ignore", type=_codes, action="extend", default=None, metavar="CODES",
        help="comma-separated rule codes or prefixes to disable; added to the config's ignore",
    )
    p.add_argument(
        "--fail-on", choices=FAIL_LEVELS, default=None,
        help="lowest severity that makes the run fail with exit 1 (default: info, i.e. any finding)",
    )
    p.add_argument("--config", metavar="PYPROJECT", help="read [tool.kldcard] from this file instead of the nearest pyproject.toml")
    p.add_argument("--offline", action="store_true", help="hf:// cards from the local Hugging Face cache only")
    p.add_argument("--output-file", metavar="FILE", help="write the report to FILE (atomically) instead of stdout")
    p.add_argument("--list-rules", action="store_true", help="list all rules and exit")
    p.add_argument("--show-rule", metavar="CODE", help="show one rule's documentation and exit")
    return p


def run(args: argparse.Namespace) -> int:
    if args.list_rules:
        for r in all_rules().values():
            print(f"{r.code}  {r.severity:<7}  {r.name:<34}  {r.summary}")
        return 0
    if args.show_rule:
        from kldcard.lint.docs import rule_doc

        rules = all_rules()
        code = args.show_rule.upper()
        if code not in rules:
            raise UsageError(f"unknown rule {args.show_rule!r}; see `kldcard lint --list-rules`")
        print(rule_doc(rules[code]), end="")
        return 0
    if not args.paths:
        raise UsageError("no PATH given; pass one or more card files (e.g. README.md) or hf://OWNER/NAME")

    config: LintConfig = load_config(args.config)
    fmt = args.output_format or config.output_format
    fail_on = args.fail_on or config.fail_on
    enabled_codes(args.select, args.ignore, config)  # unknown codes: exit 2 before reading any card

    result, bad_input = LintResult(), 0
    for path in args.paths:
        try:
            one = lint_card(path, select=args.select, ignore=args.ignore, config=config, local_files_only=args.offline)
        except InputError as exc:
            print(f"kldcard: error: {exc}", file=sys.stderr)
            bad_input += 1
            continue
        result.findings.extend(one.findings)
        result.files.extend(one.files)

    if args.output_file:
        write_atomic(Path(args.output_file), render(result, fmt, fail_on=fail_on))
    else:
        sys.stdout.write(render(result, fmt, fail_on=fail_on, color=fmt == "text" and use_color(sys.stdout)))
    if bad_input:
        return InputError.exit_code
    return 1 if failing(result, fail_on) else 0
