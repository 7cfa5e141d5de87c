"""The machine-readable half of a rendered card: the ``kld_evaluation`` block and ``model-index`` KLD results.

Both are built from a validated :class:`~kldcard.schema.KldEvaluation` and written with a *safe* YAML
dumper, never by pasting strings into YAML. ``model-index`` follows reference/model-cards.md §4:
provenance lives in ``metrics[].args`` (sibling keys are dropped by huggingface_hub), each metric
``type`` is unique within a result, values are floats written in the same digits as the body
section (``fmt_nats``), and ``verified``/``verifyToken`` are never emitted. Divergences are in nats,
forward = KL(P_ref ‖ P_cand).
"""

from __future__ import annotations

from typing import Any

import yaml

from kldcard import __version__
from kldcard.card.regions import (
    HEADLINE_TYPE,
    JS_METRIC,
    KLD_KEY,
    REVERSE_KL_METRIC,
    TASK_TYPE,
    TOP1_METRIC,
    kld_statistic_metric,
)
from kldcard.card.yaml import Num, dump_yaml
from kldcard.render.numbers import fmt_nats, fmt_percent
from kldcard.render.section import percentile_label, percentile_value
from kldcard.schema import Candidate, KldEvaluation


def kld_evaluation_yaml(evaluation: KldEvaluation) -> str:
    """The ``kld_evaluation:`` top-level key as YAML text (LF, ends with a newline).

    The dump is loaded back and re-validated, so what lands in the card is exactly ``evaluation``.
    """
    data = _prune_nulls(evaluation.model_dump(mode="json"))
    text = dump_yaml({KLD_KEY: data})
    back = yaml.safe_load(text)[KLD_KEY]
    if KldEvaluation.model_validate(back) != evaluation:  # pragma: no cover - a dumper bug
        raise AssertionError("kld_evaluation did not survive a YAML round trip")
    return text


def _prune_nulls(data: Any, keep: bool = False) -> Any:
    """Drop ``null`` optional fields, except inside ``runtime`` (a stack fingerprint records fields
    that do not apply as null, so a reader sees they were considered, not forgotten)."""
    if isinstance(data, dict):
        return {
            k: _prune_nulls(v, keep or k == "runtime") for k, v in data.items() if keep or v is not None
        }
    if isinstance(data, list):
        return [_prune_nulls(v, keep) for v in data]
    return data


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
        "vocabulary": ev.vocabulary.truncation,
    }
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
    if r.reverse_kld is not None:
        metrics.append(
            _metric(
                REVERSE_KL_METRIC,
                f"Mean reverse KL of {c.name} (nats)",
                Num(fmt_nats(r.reverse_kld.mean)),
                {**fwd, "direction": "KL(P_cand || P_ref)", "statistic": "mean"},
            )
        )
    if r.js is not None:
        metrics.append(
            _metric(
                JS_METRIC,
                f"Mean Jensen-Shannon divergence of {c.name} (nats)",
                Num(fmt_nats(r.js.mean)),
                {**fwd, "direction": "JS(P_ref, P_cand)", "statistic": "mean"},
            )
        )
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
