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

from kldcard.card.model_index import (
    candidate_result,
    default_model_name,
    model_index_results,
)
from kldcard.card.regions import (
    HEADLINE_TYPE,
    JS_METRIC,
    KLD_KEY,
    REVERSE_KL_METRIC,
    TOP1_METRIC,
)
from kldcard.card.yaml import FlowMap, FlowSeq, dump_yaml, load
from kldcard.schema import KldEvaluation

# The model-index builder lives in kldcard.card.model_index (``kldcard lint --fix`` uses it too).
__all__ = ["SIDECAR_FILE", "candidate_result", "compact_evaluation", "compact_kld_evaluation_yaml",
           "compact_model_index_results", "default_model_name", "kld_evaluation_yaml", "model_index_results",
           "sidecar_bytes"]


def kld_evaluation_yaml(evaluation: KldEvaluation) -> str:
    """The ``kld_evaluation:`` top-level key as YAML text (LF, ends with a newline).

    The dump is loaded back and re-validated, so what lands in the card is exactly ``evaluation``.
    """
    data = _prune_nulls(evaluation.model_dump(mode="json"))
    text = dump_yaml({KLD_KEY: data})
    back = load(text)[KLD_KEY]
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
        depth = (c.get("results") or {}).get("depth")
        if depth:  # onset, shares and late-vs-early stay in the front matter (one line); the clusters in the sidecar
            depth["top_clusters"] = []
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
        # a candidate's depth profile on one line (its clusters are in the sidecar)
        return {k: _flow_leaves(v, 1 if k == "runtime" else 3 if k == "depth" else limit) for k, v in data.items()}
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
    if KldEvaluation.model_validate(load(text)[KLD_KEY]) != evaluation:  # pragma: no cover
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
                             "reference_sha256", "reference_revision", "tool", "cross_stack")}
            metrics.append({**m, "args": args})
        # each result in three lines (task, dataset, metrics): at most 20 front-matter lines a candidate
        out.append(_flow_leaves({**full, "dataset": ds, "metrics": metrics}, limit=3))
    return out
