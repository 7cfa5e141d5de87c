"""``kldcard render``: the KLD card section (and metadata) from compare results.

Parses options, builds a validated evaluation (:mod:`kldcard.render.disclosures`), renders it
(:func:`kldcard.render.section.render_section`) and, with ``--card``, splices it into the card
(:mod:`kldcard.render.update`). Exit codes: 0 done / up to date, 1 ``--check`` found the card stale,
2 unusable input.
"""

from __future__ import annotations

import argparse
import difflib
import os
import sys
from pathlib import Path

from kldcard.errors import UsageError


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "render",
        help="render the KLD card section and metadata from compare results",
        description=(
            "Render a card section disclosing all nine items and the numbers (forward KL(P_ref || P_cand) "
            "in nats, plus reverse KL, JS and top-1 agreement when measured). Without --card the section "
            "is printed. With --card it is spliced between <!-- kldcard:start/end --> markers and the "
            "kld_evaluation block and model-index KLD results are written into the front matter; "
            "nothing else in the card changes."
        ),
    )
    p.add_argument(
        "results",
        nargs="+",
        metavar="RESULT",
        help="compare result JSON files (one per candidate, same reference), or one kld_evaluation "
        "JSON/YAML file",
    )
    p.add_argument("--card", metavar="README.md", help="the model card to update (created when missing, with --write)")
    p.add_argument(
        "--disclosures",
        metavar="FILE",
        help="YAML/JSON with what captures cannot know: reference repo id + revision, evaluation text "
        "name + source, calibration per candidate",
    )
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--write", action="store_true", help="write the card (atomic; unchanged cards are not touched)")
    mode.add_argument("--check", action="store_true", help="exit 1 when the card is not up to date (for CI)")
    p.add_argument("--plot", metavar="PNG", help="also draw per-position KLD with top-1 disagreements and reference it "
                   "(over depth, windows overlaid, onset and clusters marked, when windows reach 2,048 tokens; and, when "
                   "the candidates' sizes are known, mean KLD against bits per weight as kld_vs_size.png and .svg next to it)")
    p.add_argument(
        "--per-token",
        metavar="FILE",
        action="append",
        default=[],
        help="per-token values from compare, one per RESULT in order (needed by --plot unless the "
        "results name their per-token files)",
    )
    p.add_argument("--template", metavar="FILE", help="a jinja2 template to use instead of the shipped one (sandboxed)")
    p.add_argument("--model-name", metavar="NAME", help="model-index entry name when the card has none")
    p.add_argument("--source-url", metavar="URL", help="link to the run (model-index results[].source.url)")
    p.add_argument("--compact", action="store_true",
                   help="compact front matter: the shared stack once, per candidate what differs, the full block "
                   "in kld_evaluation.json next to the card (its sha256 in the card)")
    p.add_argument(
        "--no-base-model",
        action="store_true",
        help="do not add base_model/base_model_relation when the card lacks them",
    )
    return p


def run(args: argparse.Namespace) -> int:
    from kldcard.card.splice import region_text
    from kldcard.files import check_output_file, write_atomic
    from kldcard.render.evaluation import load_evaluation, load_plot_series
    from kldcard.render.section import render_section
    from kldcard.render.update import update_card

    if (args.write or args.check) and not args.card:
        raise UsageError("--write and --check need --card README.md")
    # the output policy before the first write: the card and the plot are no input of this run
    inputs = [*args.results, *args.per_token, args.disclosures, args.template]
    if args.card:
        check_output_file(args.card, "--card", inputs)  # (the sidecar may be the input: it is rewritten from itself)
    if args.plot:
        check_output_file(args.plot, "--plot", [*inputs, args.card])
    evaluation = load_evaluation(args.results, disclosures=args.disclosures)

    plot_ref = series = size_ref = None
    if args.plot:
        from kldcard.render.size_plot import size_chart_for
        from kldcard.render.depth import is_long_context

        series = load_plot_series(args.results, args.per_token)
        if is_long_context(evaluation):  # long windows: the depth plot (the same per-token files)
            from kldcard.render.depth_plot import depth_series

            series = depth_series([r for r in args.results if r not in _rank_files(args.results)], args.per_token)
        base = Path(args.card).resolve().parent if args.card else Path.cwd()
        plot_ref = Path(os.path.relpath(Path(args.plot).resolve(), base)).as_posix()
        size_chart = size_chart_for(evaluation, args.plot)
        if size_chart is not None:
            size_ref = Path(os.path.relpath(size_chart.resolve(), base)).as_posix()

    if not args.card:
        section = region_text(render_section(evaluation, template=args.template, plot=plot_ref, size_plot=size_ref),
                              "\n")
        _draw_plot(args.plot, series, evaluation)
        sys.stdout.write(section + "\n")
        return 0

    update = update_card(
        args.card,
        evaluation,
        template=args.template,
        plot=plot_ref,
        model_name=args.model_name,
        source_url=args.source_url,
        set_base_model=not args.no_base_model,
        compact=args.compact,
        size_plot=size_ref,
    )
    # Only now, with the card known to splice cleanly, is the PNG written: an unusable card or
    # template must leave no new file behind.
    if not args.check:
        _draw_plot(args.plot, series, evaluation)
    if args.check:
        if update.changed:
            print(f"{args.card}: the KLD section or metadata is stale; run `kldcard render ... --card {args.card} --write`")
            return 1
        print(f"{args.card}: up to date")
        return 0
    if args.write:
        if args.compact:
            from kldcard.render.update import write_sidecar

            write_sidecar(args.card, evaluation)
        if update.changed:
            write_atomic(args.card, update.new, parents=False)
            print(f"{args.card}: written")
        else:
            print(f"{args.card}: up to date, not touched")
        return 0
    # Neither --write nor --check: show what --write would do.
    old = update.old.decode("utf-8-sig").splitlines(keepends=True)
    new = update.new.decode("utf-8-sig").splitlines(keepends=True)
    diff = list(difflib.unified_diff(old, new, fromfile=f"a/{args.card}", tofile=f"b/{args.card}"))
    sys.stdout.write("".join(diff) if diff else f"{args.card}: up to date\n")
    return 0


def _rank_files(paths: list[str]) -> set[str]:
    """The ``kldcard rank`` files among the RESULT arguments (they carry no per-token values)."""
    from kldcard.compare.rank import RANK_FORMAT
    from kldcard.render.disclosures import read_structured

    out = set()
    for p in paths:
        d = read_structured(p, "result")
        if isinstance(d, dict) and d.get("format") == RANK_FORMAT:
            out.add(p)
    return out


def _draw_plot(path: str | None, series: list | None, evaluation) -> None:
    if path is None or series is None:
        return
    from kldcard.render.depth_plot import DepthSeries, plot_depth
    from kldcard.render.plot import plot_per_position
    from kldcard.render.size_plot import write_size_chart

    if series and isinstance(series[0], DepthSeries):
        plot_depth(path, series)
    else:
        plot_per_position(path, series)
    write_size_chart(evaluation, path)
