"""``kldcard evaluate``: from model files to a linted card in one command.

Parses options into a :class:`~kldcard.evaluate.project.Project` (a project file, or flags for
the common case), runs :func:`kldcard.evaluate.evaluate` and, with ``--push``, publishes the card
(:mod:`kldcard.evaluate.publish`). Exit codes: 0 card written and lint-clean, 1 lint findings,
2 unusable input.
"""

from __future__ import annotations

import argparse
import sys

from kldcard.cli.capture import positions_scheme
from kldcard.errors import UsageError


def _model(spec: str) -> dict:
    engine, sep, model = spec.partition(":")
    if not sep or not model:
        raise UsageError(f"{spec!r}: give ENGINE:PATH, e.g. llama.cpp:model-Q4_K_M.gguf or mlx:mlx-4bit/")
    return {"engine": engine, "model": model}


def add_parser(subparsers: argparse._SubParsersAction) -> argparse.ArgumentParser:
    p = subparsers.add_parser(
        "evaluate",
        help="token parity, the reference once, every candidate in one pass, card, lint",
        description=(
            "Evaluate quantized candidates against one reference and write the card: token parity across "
            "every engine, the reference captured once (cached), each candidate compared with it as its "
            "logits leave the engine (forward KL(P_ref || P_cand) in nats, reverse KL, JS, top-1 agreement; "
            "no logit files), results cached by content so a rerun evaluates only what changed, then the "
            "card rendered and linted. Give a project file, or --reference/--candidate/--text flags."
        ),
    )
    p.add_argument("project", nargs="?", metavar="PROJECT.yaml", help="project file (see kldcard.evaluate.project)")
    p.add_argument("--reference", metavar="ENGINE:PATH", help="the reference model, e.g. llama.cpp:model-bf16.gguf")
    p.add_argument("--reference-capture", metavar="DIR", help="an existing reference capture instead of --reference")
    p.add_argument("--candidate", metavar="[NAME=]ENGINE:PATH", action="append", default=[],
                   help="a candidate (repeat); NAME defaults to the file or directory name and must be usable "
                   "as a file name (no '/')")
    p.add_argument("--cross-stack", metavar="NAME=COORD[,COORD...]:REASON", action="append", default=[],
                   help="candidate NAME is measured on another stack than the reference on purpose, differing in "
                   "these coordinates (as KLD207 names them) for REASON; the card says so (repeat per candidate)")
    p.add_argument("--text", metavar="FILE", help="the evaluation text")
    p.add_argument("--text-name", metavar="NAME", help="the text's name in the card")
    p.add_argument("--text-url", metavar="URL", help="where the text comes from")
    p.add_argument("--positions", metavar="SCHEME", type=positions_scheme, help="all | every:N[@OFFSET] | second-half | list:... (default all)")
    p.add_argument("-c", "--n-ctx", type=int, metavar="N", help="context window length")
    p.add_argument("--protocol", choices=["llama-perplexity"], help="llama-perplexity's chunks, BOS and positions")
    p.add_argument("--reference-model", metavar="OWNER/NAME", help="the reference's repo id (disclosure 1)")
    p.add_argument("--reference-revision", metavar="COMMIT", help="the reference repo's pinned commit")
    p.add_argument("--no-calibration", action="store_true",
                   help="disclose that no candidate used calibration data (no importance matrix)")
    p.add_argument("--card", metavar="README.md", help="the card to update (created when missing)")
    p.add_argument("--plot", metavar="PNG", help="also draw per-position KLD (over depth, windows overlaid, onset "
                   "and clusters marked, when windows reach 2,048 tokens) and, when sizes are known, KLD against "
                   "bits per weight")
    p.add_argument("--cache", metavar="DIR", help="result cache (default .kldcard-cache next to the project); every "
                   "entry is verified before it is used (sha256 of its files and inputs, the reference capture's "
                   "shards), and one that fails is discarded with one line and computed again")
    p.add_argument("--push", metavar="REPO", help="upload card, plot and sidecar files in one Hub commit (REPO: a Hub "
                   "repo id, OWNER/NAME, checked before anything runs)")
    p.add_argument("--create-pr", action="store_true", help="with --push: open a pull request")
    p.add_argument("--dry-run", action="store_true", help="with --push: print the commit's operations, send nothing")
    p.add_argument("--hub-files", metavar="DATASET_ID:TASK_ID",
                   help="also write .eval_results/kld-<candidate>.yaml for a registered benchmark dataset and task "
                   "(the evaluation text must be that dataset; no verify token is ever written)")
    p.add_argument("--no-progress", action="store_true", help="no progress bar")
    return p


def _cross_stack(project, specs: list[str]):
    """``project`` with each ``--cross-stack NAME=COORD[,COORD...]:REASON`` set on its candidate."""
    from kldcard.schema import CrossStack

    named = {}
    for spec in specs:
        name, eq, rest = spec.partition("=")
        coords, colon, reason = rest.partition(":")
        coordinates = [c.strip() for c in coords.split(",") if c.strip()]
        if not (eq and colon and name and coordinates and reason.strip()):
            raise UsageError(f"--cross-stack {spec!r}: give NAME=COORD[,COORD...]:REASON, e.g. "
                             "mlx-4bit=engine,attention_backend:the MLX build is what Mac users run")
        named[name] = CrossStack(coordinates=coordinates, reason=reason.strip())
    unknown = sorted(set(named) - {c.name for c in project.candidates})
    if unknown:
        raise UsageError(f"--cross-stack names no candidate: {', '.join(unknown)} "
                         f"(candidates: {', '.join(c.name for c in project.candidates)})")
    if not named:
        return project
    cands = [c.model_copy(update={"cross_stack": named[c.name]}) if c.name in named else c for c in project.candidates]
    return project.model_copy(update={"candidates": cands})


def _project(args: argparse.Namespace):
    return _cross_stack(_project_of(args), args.cross_stack)


def _project_of(args: argparse.Namespace):
    from kldcard.evaluate.project import Project, load_project

    if args.project:
        project = load_project(args.project)
        updates = {k: v for k, v in (("card", args.card), ("plot", args.plot), ("cache", args.cache),
                                     ("positions", args.positions), ("n_ctx", args.n_ctx)) if v is not None}
        return project.model_copy(update=updates) if updates else project
    if not (args.reference or args.reference_capture) or not args.candidate or not args.text:
        raise UsageError("give a PROJECT.yaml, or --reference (or --reference-capture), --candidate and --text")
    from pathlib import Path

    cands = []
    for spec in args.candidate:
        name, eq, rest = spec.partition("=")
        c = _model(rest if eq and ":" in rest else spec)
        c["name"] = name if eq and ":" in rest else Path(c["model"].rstrip("/")).name.removesuffix(".gguf")
        cands.append(c)
    ref = {"capture": args.reference_capture} if args.reference_capture else _model(args.reference)
    # the reference file's name (pinned by its sha256 from the capture) unless a repo id is given
    ref_name = args.reference_model or (Path(ref["model"]).name if "model" in ref else None)
    disclosures = {"reference": {k: v for k, v in (("model", ref_name),
                                                   ("revision", args.reference_revision)) if v},
                   "calibration": {"none": True} if args.no_calibration else None}
    disclosures = {k: v for k, v in disclosures.items() if v}
    data = {"reference": ref, "candidates": cands,
            "text": {"path": args.text, "name": args.text_name, "source": args.text_url},
            "positions": args.positions or "all", "n_ctx": args.n_ctx, "protocol": args.protocol,
            "disclosures": disclosures, "card": args.card, "plot": args.plot}
    if args.cache:
        data["cache"] = args.cache
    from pydantic import ValidationError

    from kldcard.errors import InputError
    from kldcard.render.disclosures import first_error

    try:
        return Project.model_validate(data)
    except ValidationError as exc:
        raise InputError(first_error(exc)) from None


def run(args: argparse.Namespace) -> int:
    from kldcard.evaluate import evaluate

    if (args.create_pr or args.dry_run) and not args.push:
        raise UsageError("--create-pr and --dry-run go with --push REPO")
    if args.push:  # before any engine runs or any file is written
        from kldcard.card.hub import check_repo_id

        check_repo_id(args.push, "--push")
    project = _project(args)
    if args.push and not project.card:
        raise UsageError("--push needs a card (--card or card: in the project file)")
    # every option is checked before the first write (the card is written before the hub files)
    hub_files = []
    if args.hub_files:
        from pathlib import Path

        from kldcard.evaluate.publish import hub_files_spec

        if not project.card:
            raise UsageError("--hub-files writes next to the card: give --card (or card: in the project file)")
        text_source = (project.disclosures.get("evaluation_text") or {}).get("source") or project.text.source
        dataset_id, task_id = hub_files_spec(args.hub_files, text_source)
        hub_files = [(f"--hub-files ({c.name})", Path(project.path(project.card)).parent / ".eval_results" / f"kld-{c.name}.yaml")
                     for c in project.candidates]
    project.check_outputs(hub_files)
    result = evaluate(project, say=lambda s: print(s, file=sys.stderr), progress=not args.no_progress)
    for c in result.candidates:
        print(f"{c.name}\t{'cached' if c.cached else 'evaluated'}\t{c.result_path}")
    for e in result.served:  # no result file: asked again every run, kept only on the card
        print(f"{e['name']}\tserved\t-")
    extra = [f for f in (result.plot,) if f is not None]
    if result.card is not None and result.evaluation is not None and result.evaluation.candidates:
        from kldcard.render.metadata import SIDECAR_FILE

        if project.compact:
            extra.append(result.card.parent / SIDECAR_FILE)
    if args.hub_files and result.evaluation is not None:
        from kldcard.evaluate.publish import eval_results_files
        from kldcard.files import write_atomic

        for rel, data in eval_results_files(result.evaluation, dataset_id, task_id).items():
            extra.append(write_atomic(result.card.parent / rel, data))
    if args.push and result.card is not None:
        from kldcard.evaluate import publish

        ops = publish.commit_operations(result.card, extra)
        if args.dry_run:
            print("\n".join(publish.describe(args.push, ops, create_pr=args.create_pr)))
        elif result.findings:
            raise UsageError(f"{result.card}: {result.findings} lint finding(s); fix them before --push")
        else:
            print(publish.push(args.push, ops, create_pr=args.create_pr))
    return 1 if result.findings else 0
