"""The steps of ``kldcard demo`` (see :mod:`kldcard.demo.runner` for what they show and why)."""

from __future__ import annotations

import importlib.util
import os
from collections.abc import Callable
from pathlib import Path
from typing import Any

import yaml

from kldcard import engines
from kldcard.demo.runner import (
    CARD_INTRO,
    DEMO_SOURCE_URL,
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
    "Capture full-vocabulary logits",
    "Compare each candidate with the reference (float64)",
    "Render the card",
    "Lint the card",
)
TEXT_NAME = "kldcard demo text (DEMO_TEXT in kldcard/demo/runner.py)"


def _size(path: Path) -> str:
    total = sum(p.stat().st_size for p in path.rglob("*") if p.is_file()) if path.is_dir() else path.stat().st_size
    return f"{total / 2**20:.1f} MiB"


def run_steps(run: StepRunner, out: Path, models: dict | None = None) -> None:
    result = run.result
    logs = out / "logs"

    with run.step(STEP_TITLES[0]) as step:
        engines.require("llama.cpp")  # the GGUF files and their quantization need llama.cpp
        from kldcard.demo.tiny_models import build_tiny_models

        if models is None:
            with engine_log(logs / "build.log"):
                models = build_tiny_models(out / "models", "qwen3")
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
        text_path = out / "text.txt"
        text_path.write_text(DEMO_TEXT, encoding="utf-8")
        step.detail.append(f"{text_path}: {len(DEMO_TEXT.encode())} bytes of original prose")

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

    captures: dict[str, Path] = {}
    with run.step(STEP_TITLES[3]) as step:
        from kldcard.capture.run import run_capture

        # One context window over the whole text, every position scored: the output ranges then
        # lie inside the context, and the text is short enough for the capture to stay small.
        for label, model in (("reference-f32", ref_gguf), ("candidate-q8_0", q8), ("candidate-q4_k_m", q4)):
            dest = out / "captures" / label
            with engine_log(logs / f"capture-{label}.log"):
                cap = run_capture("llama.cpp", model, text_path, dest, positions="all", text_name=TEXT_NAME,
                                  overwrite=True, progress=False)
            captures[label] = dest
            step.detail.append(
                f"{label}: llama.cpp, {cap.n_positions} positions of {cap.n_tokens} tokens, "
                f"{cap.capture.n_vocab:,}-entry logits -> {dest} ({_size(dest)})"
            )

    results = []
    with run.step(STEP_TITLES[4]) as step:
        from kldcard.compare.rank import rank_results
        from kldcard.compare.run import compare, write_per_token, write_result
        from kldcard.files import write_atomic

        columns = []
        for label in ("candidate-q8_0", "candidate-q4_k_m"):
            res, per_token = compare(captures["reference-f32"], captures[label], return_per_token=True)
            columns.append(per_token.columns())
            npz = out / "results" / f"{label}.per-token.npz"
            write_per_token(per_token, npz)
            res.per_token_file = str(npz)
            path = write_result(res, out / "results" / f"{label}.json")
            results.append((path, res))
            step.detail.append(f"{label} vs reference-f32 -> {path}")
            step.detail += [f"  {line}" for line in res.summary_lines()[:3]]
        # the two candidates on the same positions: paired intervals say whether they differ here
        ranking = rank_results([r for _, r in results], columns, paths=[str(p) for p, _ in results])
        rank_path = out / "ranking.json"
        write_atomic(rank_path, ranking.model_dump_json(indent=2) + "\n")
        step.detail += [f"ranking -> {rank_path}", *(f"  {line}" for line in ranking.summary_lines())]

    with run.step(STEP_TITLES[5]) as step:
        from kldcard.files import write_atomic
        from kldcard.render.disclosures import Disclosures
        from kldcard.render.evaluation import evaluation_from_results, plot_series
        from kldcard.render.update import update_card

        disclosures: dict[str, Any] = {
            "reference": {"model": Path(ref_gguf).name},  # pinned by the file's sha256 from the capture
            "evaluation_text": {"name": TEXT_NAME, "source": {"url": DEMO_SOURCE_URL}},
            "calibration": {"none": True},  # llama_model_quantize without an importance matrix
        }
        disclosures["evaluation_text"]["tokenizer_parity"] = parity
        disc_path = out / "disclosures.yaml"
        disc_path.write_text(
            "# What the captures cannot know, supplied by the person rendering the card.\n"
            + yaml.safe_dump(disclosures, sort_keys=False),
            encoding="utf-8",
        )
        evaluation = evaluation_from_results([r for _, r in results],
                                             overrides=Disclosures.model_validate(disclosures), ranking=ranking)
        card_dir = out / "card"
        card_dir.mkdir(parents=True, exist_ok=True)
        card = card_dir / "README.md"
        card.write_text(CARD_INTRO, encoding="utf-8")
        plot = card_dir / "kld_per_position.png"
        have_plot = importlib.util.find_spec("matplotlib") is not None
        if have_plot:
            from kldcard.render.plot import plot_per_position

            plot_per_position(plot, plot_series([str(p) for p, _ in results], []))
        update = update_card(card, evaluation, plot=plot.name if have_plot else None,
                             model_name="tiny-qwen3-GGUF", set_base_model=False)
        write_atomic(card, update.new)
        result.card = card
        result.plot = plot if have_plot else None
        step.detail += [f"disclosures: {disc_path}", f"card: {card}"]
        step.detail.append(f"plot: {plot}" if have_plot else "plot: skipped (pip install 'kldcard[plot]')")

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


