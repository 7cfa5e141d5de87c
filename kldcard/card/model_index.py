"""model-index KLD results built from a validated ``kld_evaluation`` block (reference/model-cards.md §4).

Pure data and number formatting (no jinja2, no numpy), so that both ``kldcard render`` and
``kldcard lint --fix`` build the same entries: provenance lives in ``metrics[].args`` (sibling keys
are dropped by huggingface_hub), each metric ``type`` is unique within a result, values are floats
written in the same digits as the body section (``fmt_nats``), and ``verified``/``verifyToken`` are
never emitted. Divergences are in nats, forward = KL(P_ref ‖ P_cand).
"""

from __future__ import annotations

from typing import Any

from kldcard import __version__
from kldcard.card.numbers import fmt_nats, fmt_percent, fmt_plain
from kldcard.card.regions import (
    HEADLINE_TYPE,
    JS_METRIC,
    REVERSE_KL_METRIC,
    TASK_TYPE,
    TOP1_METRIC,
    kld_statistic_metric,
)
from kldcard.card.yaml import Num
from kldcard.schema import Candidate, KldEvaluation, Summary

__all__ = ["candidate_result", "default_model_name", "model_index_results", "percentile_label", "percentile_value"]


def percentile_value(summary: Summary, p: float) -> float | None:
    """The ``p``-th percentile of ``summary`` whatever spelling its key uses ('99', '99.0', 'p99')."""
    for key, value in summary.percentiles.items():
        try:
            if float(key.lstrip("p")) == float(p):
                return value
        except ValueError:
            continue
    return None


def percentile_label(p: float) -> str:
    return "p" + fmt_plain(p).removesuffix(".0")



def _dataset(ev: KldEvaluation) -> dict[str, Any]:
    text = ev.evaluation_text
    src = text.source
    if hasattr(src, "dataset"):
        out: dict[str, Any] = {"type": src.dataset, "name": text.name}
        if src.config:
            out["config"] = src.config
        out["split"] = src.split
        out["revision"] = src.revision
        return out
    if hasattr(src, "repo_file"):
        return {"type": text.name, "name": text.name, "split": "full",
                "args": {"repo_file": src.repo_file, "sha256": src.sha256}}
    # A URL source has no dataset id or split; the text's name and "full" (the whole file) say so.
    return {"type": text.name, "name": text.name, "split": "full", "args": {"url": src.url, "sha256": text.sha256}}


def _provenance(ev: KldEvaluation, c: Candidate) -> dict[str, Any]:
    ref = ev.reference
    args: dict[str, Any] = {
        "candidate": c.name,
        "candidate_engine": f"{c.runtime.engine} {c.runtime.engine_version}",
        "candidate_model": c.model.model,
        "quantization": c.model.quantization,
        "ctx": ev.context.n_ctx,
        "direction": "KL(P_ref || P_cand)",
        "log_base": "e",
        "n_chunks": ev.context.n_chunks,
        "positions": ev.positions.scheme,
        "positions_scored": c.results.n_positions,
        "reference_dtype": ref.dtype,
        "reference_engine": f"{ref.runtime.engine} {ref.runtime.engine_version}",
        "reference_model": ref.model,
        "statistic": "mean",
        "text_sha256": ev.evaluation_text.sha256,
        "tokens": ev.evaluation_text.n_tokens,
        "tool": f"kldcard {__version__}",
        "units": "nats",
        "vocabulary": (c.vocabulary or ev.vocabulary).truncation,
    }
    if c.vocabulary and c.vocabulary.top_k:  # a served candidate: the truncated KLD, and how
        args["vocabulary"] = f"top-{c.vocabulary.top_k}, tail {c.vocabulary.tail}"
    if c.cross_stack:  # measured across stacks on purpose: the Hub's reader sees it next to the number
        args["cross_stack"] = ", ".join(c.cross_stack.coordinates)
    if ref.revision:
        args["reference_revision"] = ref.revision
    if ref.sha256:
        args["reference_sha256"] = ref.sha256
    k = c.results.kld
    if k.se is not None:
        args["stderr"] = Num(fmt_nats(k.se, "stderr"))
    if k.ci_low is not None and k.ci_high is not None:
        args["ci_low"] = Num(fmt_nats(k.ci_low, "ci_low"))
        args["ci_high"] = Num(fmt_nats(k.ci_high, "ci_high"))
        if ev.aggregation.uncertainty.level is not None:
            args["ci_level"] = ev.aggregation.uncertainty.level
        args["ci_method"] = ev.aggregation.uncertainty.method
    return dict(sorted(args.items()))


def _metric(mtype: str, name: str, value: Num, args: dict[str, Any]) -> dict[str, Any]:
    return {"type": mtype, "name": name, "value": value, "args": dict(sorted(args.items()))}


def candidate_result(ev: KldEvaluation, c: Candidate, *, source_url: str | None = None) -> dict[str, Any]:
    """One model-index result (task, dataset, metrics[, source]) for candidate ``c``."""
    ref_label = f"{ev.reference.dtype.upper()} reference"
    if c.cross_stack:
        ref_label += f" on another stack ({ev.reference.runtime.engine} reference, {c.runtime.engine} candidate)"
    r = c.results
    fwd = {"direction": "KL(P_ref || P_cand)", "log_base": "e", "units": "nats", "candidate": c.name}
    metrics = [
        _metric(
            HEADLINE_TYPE,
            f"Mean KLD of {c.name} vs {ref_label} (nats, lower is closer)",
            Num(fmt_nats(r.kld.mean, "mean KLD")),
            _provenance(ev, c),
        )
    ]
    if r.kld.median is not None:
        metrics.append(
            _metric(kld_statistic_metric("median"), f"Median KLD of {c.name} (nats)", Num(fmt_nats(r.kld.median)), {**fwd, "statistic": "median"})
        )
    for p in ev.aggregation.percentiles:
        v = percentile_value(r.kld, p)
        if v is not None:
            label = percentile_label(p)  # p99, p99.9
            mtype = kld_statistic_metric(label)
            metrics.append(_metric(mtype, f"{label} KLD of {c.name} (nats)", Num(fmt_nats(v)), {**fwd, "statistic": label}))
    if r.kld.max is not None:
        metrics.append(_metric(kld_statistic_metric("max"), f"Max KLD of {c.name} (nats)", Num(fmt_nats(r.kld.max)), {**fwd, "statistic": "max"}))
    for stats, mtype, what, direction in ((r.reverse_kld, REVERSE_KL_METRIC, "reverse KL", "KL(P_cand || P_ref)"),
                                          (r.js, JS_METRIC, "Jensen-Shannon divergence", "JS(P_ref, P_cand)")):
        if stats is not None:
            metrics.append(_metric(mtype, f"Mean {what} of {c.name} (nats)", Num(fmt_nats(stats.mean)),
                                   {**fwd, "direction": direction, "statistic": "mean"}))
    metrics.append(
        _metric(
            TOP1_METRIC,
            f"Top-1 agreement of {c.name} with the reference (%)",
            Num(fmt_percent(r.top1_agreement)),
            {"candidate": c.name, "statistic": "mean", "units": "percent"},
        )
    )
    result: dict[str, Any] = {
        "task": {"type": TASK_TYPE, "name": "KL divergence against the reference"},
        "dataset": _dataset(ev),
        "metrics": metrics,
    }
    if source_url:
        result["source"] = {"name": "kldcard", "url": source_url}
    return result


def model_index_results(ev: KldEvaluation, *, source_url: str | None = None) -> list[dict[str, Any]]:
    """The KLD results for ``model-index`` (one per candidate, in the block's order)."""
    return [candidate_result(ev, c, source_url=source_url) for c in ev.candidates]


def default_model_name(ev: KldEvaluation) -> str:
    """A model-index entry name when the card has none: the single candidate, or the reference's."""
    if len(ev.candidates) == 1:
        return ev.candidates[0].name
    return ev.reference.model.rstrip("/").rsplit("/", 1)[-1] + "-quantized"
