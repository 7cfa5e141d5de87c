"""The steps of ``kldcard demo`` (see :mod:`kldcard.demo.runner` for what they show and why)."""

from __future__ import annotations

import hashlib
import importlib.util
import os
from collections.abc import Callable
from pathlib import Path

import yaml

from kldcard import engines
from kldcard.demo.runner import (
    CARD_INTRO,
    DEMO_TEXT,
    DemoResult,
    StepRunner,
    engine_log,
)
from kldcard.errors import InputError

STEP_TITLES = (
    "Build the tiny models",
    "Write the evaluation text",
    "Check token parity across engines",
    "Write the project file for kldcard evaluate",
    "Evaluate: the reference captured once, each candidate compared as its logits leave the engine",
    "Render the card",
    "Lint the card",
)
TEXT_NAME = "kldcard demo text (DEMO_TEXT in kldcard/demo/text.py)"
TEXT_IN_REPO = "eval/demo-text.txt"  # the text ships with the model: a file of the card's repo


def _size(path: Path) -> str:
    total = sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size
    return f"{total / 2**20:.1f} MiB"


def run_steps(run: StepRunner, out: Path, models: dict | None = None) -> None:
    result = run.result
    logs = out / "logs"

    with run.step(STEP_TITLES[0]) as step:
        engines.require("llama.cpp")  # the GGUF files and their quantization need llama.cpp
        from kldcard.demo.tiny_models import LM_PARAMS, build_tiny_models

        if models is None:
            # the model that predicts the demo text (a bigram model of it in the embedding and head),
            # so the card shows the figures a real quantization produces
            with engine_log(logs / "build.log"):
                models = build_tiny_models(out / "models", "qwen3", params=LM_PARAMS)
        else:
            step.detail.append("reusing models built earlier")
        ref_gguf, q8, q4 = models["gguf_f32"], models["gguf_q8_0"], models["gguf_q4"]
        step.detail += [
            f"transformers checkpoint: {models['hf']}",
            f"reference F32 GGUF:      {ref_gguf} ({_size(ref_gguf)})",
            f"candidate Q8_0 GGUF:     {q8} ({_size(q8)})",
            f"candidate Q4_K_M GGUF:   {q4} ({_size(q4)})",
            f"engine log: {logs / 'build.log'}",
        ]

    with run.step(STEP_TITLES[1]) as step:
        text_path = out / "card" / TEXT_IN_REPO
        text_path.parent.mkdir(parents=True, exist_ok=True)
        text_path.write_text(DEMO_TEXT, encoding="utf-8")
        step.detail.append(f"{text_path}: {len(DEMO_TEXT.encode())} bytes of original prose, cited in the card as "
                           f"the repo file {TEXT_IN_REPO} (with its sha256)")

    with run.step(STEP_TITLES[2]) as step:
        from kldcard.tokens import parity_for_capture

        others = [f"llama.cpp:{q8}", f"llama.cpp:{q4}"]
        if engines.available("transformers"):
            others.append(f"hf:{models['hf']}")
        if engines.available("mlx"):
            others.append(f"mlx:{models['hf']}")
        with engine_log(logs / "tokens.log"):
            parity = parity_for_capture(f"llama.cpp:{ref_gguf}", others, DEMO_TEXT)
        step.detail.append(
            f"{parity['outcome']}: {parity['tokens_checked']} token ids compared across "
            f"{', '.join(parity['engines'])} (a mismatch would stop the demo here)"
        )

    with run.step(STEP_TITLES[3]) as step:
        # One context window over the whole text, every position scored: the output ranges then
        # lie inside the context. Reference and candidates all run on llama.cpp, so the numbers
        # measure quantization, not engine differences.
        project = {
            "reference": {"engine": "llama.cpp", "model": str(ref_gguf)},
            "candidates": [{"name": Path(m).stem, "engine": "llama.cpp", "model": str(m)} for m in (q8, q4)],
            "text": {"path": str(text_path.relative_to(out)), "name": TEXT_NAME,
                     "source": {"repo_file": TEXT_IN_REPO, "sha256": hashlib.sha256(DEMO_TEXT.encode()).hexdigest()}},
            "positions": "all",
            "disclosures": {
                "reference": {"model": Path(ref_gguf).name},  # pinned by the file's sha256 from the capture
                "calibration": {"none": True},  # llama_model_quantize without an importance matrix
            },
            "card": "card/README.md",
            "plot": "card/kld_per_position.png" if importlib.util.find_spec("matplotlib") else None,
            "badge": "card/kld_badge.json",  # opt-in: a shields.io endpoint file next to the card
            "model_name": "tiny-qwen3-GGUF",
        }
        project_path = out / "evaluate.yaml"
        project_path.write_text("# kldcard evaluate evaluate.yaml  (paths are relative to this file)\n"
                                + yaml.safe_dump(project, sort_keys=False), encoding="utf-8")
        step.detail.append(f"{project_path}: reference, {len(project['candidates'])} candidates, text, positions, card")

    with run.step(STEP_TITLES[4]) as step:
        from kldcard.evaluate import evaluate, load_project

        proj = load_project(project_path)
        with engine_log(logs / "evaluate.log"):
            ev = evaluate(proj, say=step.detail.append, progress=False, render=False)
        results = []
        (out / "results").mkdir(exist_ok=True)
        from kldcard.compare.run import CompareResult
        from kldcard.files import write_atomic

        for o in ev.candidates:
            label = "candidate-" + o.name.removeprefix("tiny-qwen3-")
            res = CompareResult.model_validate_json(o.result_path.read_text(encoding="utf-8"))
            path = write_atomic(out / "results" / f"{label}.json", o.result_path.read_bytes())
            results.append((path, res))
            step.detail += [f"  {line}" for line in res.summary_lines()[:3]]

        if ev.ranking is not None:  # the two candidates on the same positions: do they differ here?
            rank_path = write_atomic(out / "ranking.json", ev.ranking.model_dump_json(indent=2) + "\n")
            step.detail += [f"ranking -> {rank_path}", *(f"  {line}" for line in ev.ranking.summary_lines())]

    with run.step(STEP_TITLES[5]) as step:
        from kldcard.evaluate.card import disclosures_for, render_card

        disclosures = disclosures_for(proj, ev.candidates, parity)
        disc_path = out / "disclosures.yaml"
        disc_path.write_text(
            "# What the captures cannot know, supplied by the person rendering the card.\n"
            + yaml.safe_dump(disclosures.model_dump(exclude_none=True), sort_keys=False),
            encoding="utf-8",
        )
        card = out / "card" / "README.md"
        card.write_text(CARD_INTRO, encoding="utf-8")
        lines: list[str] = []
        result.card, result.plot, _ = render_card(proj, [r for _, r in results], ev, parity, lines.append,
                                                  lint=False)
        step.detail += [f"disclosures: {disc_path}", f"card: {card}"]
        step.detail.append(f"plot: {result.plot}" if result.plot else "plot: skipped (pip install 'kldcard[plot]')")

    with run.step(STEP_TITLES[6]) as step:
        from kldcard.lint.runner import lint_card

        lint = lint_card(card)
        result.findings = len(lint.findings)
        for f in lint.findings:
            step.detail.append(f"{f.file}:{f.line}:{f.column}: {f.severity} {f.rule_id} {f.message}")
        step.detail.append(f"{len(lint.findings)} finding(s)")
        if lint.findings:
            step.status = "failed"


def run_demo(
    out_dir: str | os.PathLike[str], *, say: Callable[[str], None] = print, models: dict | None = None
) -> DemoResult:
    """Run every step into ``out_dir``; returns what was done (the card path, the lint findings).

    ``models``: paths from :func:`kldcard.demo.tiny_models.build_tiny_models` to reuse instead of building.
    """
    out = Path(out_dir).resolve()
    try:
        out.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise InputError(f"{out}: cannot create the demo directory: {exc.strerror or exc}") from None
    result = DemoResult(out)
    runner = StepRunner(result, say, len(STEP_TITLES))
    say(f"kldcard demo: everything goes to {out}")
    run_steps(runner, out, models)
    if result.card is not None:
        say("")
        say(f"Your card: {result.card}")
        if result.plot is not None:
            say(f"Its plot:  {result.plot}")
        say(f"Lint findings: {result.findings}")
    return result


