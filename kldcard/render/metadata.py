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
from kldcard.card.yaml import FlowMap, FlowSeq, Num, dump_yaml
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


# ----------------------------------------------------------------------------------------------
# Compact cards (kldcard evaluate): the shared stack once, per candidate what differs, the rest in
# a sidecar file whose sha256 the block records.
# ----------------------------------------------------------------------------------------------

SIDECAR_FILE = "kld_evaluation.json"


def sidecar_bytes(evaluation: KldEvaluation) -> bytes:
    """The full block as the sidecar holds it (canonical JSON: sorted keys, LF, so its sha256 is stable)."""
    import json

    return (json.dumps({KLD_KEY: evaluation.model_dump(mode="json")}, indent=1, sort_keys=True,
                       allow_nan=True) + "\n").encode("utf-8")


def compact_evaluation(evaluation: KldEvaluation, *, sidecar_file: str = SIDECAR_FILE) -> KldEvaluation:
    """The front-matter form of ``evaluation``: each candidate's runtime as ``runtime_changes`` against
    the reference's (the stack written once), and ``sidecar`` naming the file (see
    :func:`sidecar_bytes`) that holds the full block with every candidate's full fingerprint."""
    import hashlib

    data = evaluation.model_dump(mode="json")
    ref_rt = data["reference"]["runtime"]
    for c in data["candidates"]:
        rt = c.pop("runtime")
        c["runtime_changes"] = {k: v for k, v in rt.items() if ref_rt.get(k) != v}
    data["sidecar"] = {"file": sidecar_file, "sha256": hashlib.sha256(sidecar_bytes(evaluation)).hexdigest()}
    return KldEvaluation.model_validate(data)


def _depth(data: Any) -> int:
    if isinstance(data, dict):
        return 1 + max((_depth(v) for v in data.values()), default=0)
    if isinstance(data, list):
        return 1 + max((_depth(v) for v in data), default=0)
    return 0


def _flow_leaves(data: Any, limit: int = 2) -> Any:
    """Mark containers at most ``limit`` levels deep for YAML flow style (one line each); inside a
    ``runtime`` only scalar-only containers, so the shared stack stays readable line by line."""
    if isinstance(data, dict):
        if data and _depth(data) <= limit:
            return FlowMap({k: _flow_leaves(v, limit) for k, v in data.items()})
        return {k: _flow_leaves(v, 1 if k == "runtime" else limit) for k, v in data.items()}
    if isinstance(data, list):
        if data and _depth(data) <= limit:
            return FlowSeq(_flow_leaves(v, limit) for v in data)
        return [_flow_leaves(v, limit) for v in data]
    return data


def compact_yaml(data: dict[str, Any]) -> str:
    """``dump_yaml`` with shallow containers in flow style (see :func:`_flow_leaves`)."""
    return dump_yaml(_flow_leaves(data))


def compact_kld_evaluation_yaml(evaluation: KldEvaluation) -> str:
    """The compact block (from :func:`compact_evaluation`) as YAML, round-trip checked."""
    data = evaluation.model_dump(mode="json")
    for c in data["candidates"]:
        if c.get("runtime_changes") is not None:
            c.pop("runtime", None)
    data = _prune_nulls(data)
    for c, full in zip(data["candidates"], evaluation.candidates):
        if full.runtime_changes is not None:
            c["runtime_changes"] = dict(full.runtime_changes)  # a change to null is a change
    text = compact_yaml({KLD_KEY: data})
    if KldEvaluation.model_validate(yaml.safe_load(text)[KLD_KEY]) != evaluation:  # pragma: no cover
        raise AssertionError("compact kld_evaluation did not survive a YAML round trip")
    return text


def compact_model_index_results(ev: KldEvaluation, *, source_url: str | None = None) -> list[dict[str, Any]]:
    """One result per candidate, each a distinct Hub result: huggingface_hub merges results on task
    type and dataset type/config/split/revision, so the candidate, context and positions go in
    ``dataset.config`` and the text's sha256 in ``dataset.revision`` (no two candidates, contexts or
    texts merge); direction is the metric type. Only the headline metrics, with short args."""
    out = []
    for c in ev.candidates:
        full = candidate_result(ev, c, source_url=source_url)
        ds = dict(full["dataset"])
        ds.pop("args", None)
        ds["config"] = (f"{c.name}, n_ctx {ev.context.n_ctx}, positions {ev.positions.scheme}"
                        + (f", {ds['config']}" if ds.get("config") else ""))
        ds["revision"] = ds.get("revision") or ev.evaluation_text.sha256
        keep = {HEADLINE_TYPE, REVERSE_KL_METRIC, JS_METRIC, TOP1_METRIC}
        metrics = []
        for m in full["metrics"]:
            if m["type"] not in keep:
                continue
            args = {k: v for k, v in m["args"].items()
                    if k in ("candidate", "direction", "units", "statistic", "stderr", "ci_low", "ci_high", "ci_level",
                             "reference_sha256", "reference_revision", "tool")}
            metrics.append({**m, "args": args})
        out.append(_flow_leaves({**full, "dataset": ds, "metrics": metrics}))
    return out
