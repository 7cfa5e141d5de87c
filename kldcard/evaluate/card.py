"""The card step of ``kldcard evaluate``: disclosures from the project, render, plot, lint."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

from kldcard.capture.quantization import quantization_label

__all__ = ["disclosures_for", "render_card"]


def disclosures_for(p, outcomes, parity: dict | None):
    """The :class:`~kldcard.render.disclosures.Disclosures` of a project: its ``disclosures`` block,
    the text's name and source, and per candidate its calibration and what its file quantized."""
    from kldcard.render.disclosures import Disclosures

    d: dict[str, Any] = {k: (dict(v) if isinstance(v, dict) else v) for k, v in p.disclosures.items()}
    text = dict(d.get("evaluation_text") or {})
    if p.text.name:
        text.setdefault("name", p.text.name)
    if p.text.source is not None:
        text.setdefault("source", {"url": p.text.source} if isinstance(p.text.source, str) else p.text.source)
    if parity is not None:
        text.setdefault("tokenizer_parity", parity)
    d["evaluation_text"] = text
    cands = dict(d.get("candidates") or {})
    by_name = {o.name: o for o in outcomes}
    for c in p.candidates:
        cd = dict(cands.get(c.name) or {})
        if c.calibration is not None:
            cd.setdefault("calibration", c.calibration)
        if c.cross_stack is not None:
            cd.setdefault("cross_stack", c.cross_stack.model_dump())
        model = dict(cd.get("model") or {})
        info = by_name[c.name].quantization if c.name in by_name else None
        stated = c.quantization or quantization_label(info)
        if stated:
            model.setdefault("quantization", stated)
        tensors = _tensors(info)
        if tensors:
            model.setdefault("tensors", tensors)
        if model:
            cd["model"] = model
        cands[c.name] = cd
    d["candidates"] = cands
    return Disclosures.model_validate(d)


def _tensors(info: dict | None) -> dict | None:
    if not info:
        return None
    if info.get("format") == "gguf":
        return {k: info[k] for k in ("file_type", "token_embd", "output", "attention", "feed_forward", "experts")
                if info.get(k) is not None}
    if info.get("config"):
        return {"quantization_config": info["config"]}
    return None


def _relative(path: Path | None, card: Path) -> str | None:
    """``path`` as the card links it: relative to the card's folder when inside it."""
    if path is None:
        return None
    full, base = Path(path).resolve(), card.resolve().parent
    return str(full.relative_to(base)) if full.is_relative_to(base) else str(path)


def render_card(p, results: list, outcome, parity: dict | None, say: Callable[[str], None], *, lint: bool = True):
    """Write the card (and plots: per position, and KLD against bits per weight as PNG and SVG); returns
    (card, plot or None, number of lint findings or None)."""
    from kldcard.files import write_atomic
    from kldcard.lint.findings import LintResult
    from kldcard.lint.reporters import render_text
    from kldcard.lint.runner import lint_card
    from kldcard.render.evaluation import evaluation_from_results
    from kldcard.render.update import update_card

    overrides = disclosures_for(p, outcome.candidates, parity)
    served = getattr(outcome, "served", [])
    if served:  # their entries are built already (kldcard.evaluate.served); the results cover the rest
        if not results:
            from kldcard.errors import InputError

            raise InputError("a card needs at least one local candidate next to served ones")
        names = {e["name"] for e in served}
        overrides = overrides.model_copy(update={"candidates": {k: v for k, v in overrides.candidates.items()
                                                                if k not in names}})
    evaluation = evaluation_from_results(results, overrides=overrides, ranking=outcome.ranking)
    if served:
        from kldcard.schema import KldEvaluation

        data = evaluation.model_dump(mode="json")
        order = [c.name for c in p.candidates]
        data["candidates"] = sorted([*data["candidates"], *served], key=lambda e: order.index(e["name"]))
        evaluation = KldEvaluation.model_validate(data)
    card = p.path(p.card)
    plot = p.path(p.plot) if p.plot else None
    if plot is not None and importlib.util.find_spec("matplotlib") is None:
        say("plot: skipped (pip install 'kldcard[plot]')")
        plot = None
    if plot is not None:
        from kldcard.render.depth import is_long_context

        paths = [str(o.result_path) for o in outcome.candidates]
        per_token = [str(o.per_token_path) for o in outcome.candidates]
        names = [o.name for o in outcome.candidates]
        if is_long_context(evaluation):  # long windows: KLD over depth, windows overlaid, onset and clusters
            from kldcard.render.depth_plot import depth_series, plot_depth

            plot_depth(plot, depth_series(paths, per_token, names))
        else:
            from kldcard.render.evaluation import plot_series
            from kldcard.render.plot import plot_per_position

            plot_per_position(plot, plot_series(paths, per_token, names))
    from kldcard.render.size_plot import write_size_chart

    size_plot = write_size_chart(evaluation, plot) if plot is not None else None
    from kldcard.render.update import write_sidecar

    update = update_card(card, evaluation, plot=_relative(plot, card), model_name=p.model_name, set_base_model=False,
                         compact=p.compact, size_plot=_relative(size_plot, card))
    if p.compact:  # the sidecar first: a card never names a sidecar that is not there
        write_sidecar(card, evaluation)
    if update.changed:
        write_atomic(card, update.new)
    if p.badge:
        from kldcard.render.badge import badge_json

        write_atomic(p.path(p.badge), badge_json(evaluation))
    outcome.evaluation = evaluation
    if not lint:
        return card, plot, None
    report = lint_card(card)
    for f in report.findings:  # the text reporter's lines: no control character from the card passes
        say(render_text(LintResult(findings=[f])).splitlines()[0])
    say(f"card: {card} ({len(report.findings)} lint finding(s))")
    return card, plot, len(report.findings)
