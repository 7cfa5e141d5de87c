"""Consistency checks between the block and the rest of the card: section markers (KLD005), model-index
metrics (KLD004/008/201/204/206), the sidecar next to the card (KLD011/012) and the stated quantization
against the tensor table or the GGUF beside the card (KLD211). The block-internal KLD2xx checks are in
:mod:`kldcard.lint.consistency`. All divergences are in nats.
"""

from __future__ import annotations

import math
import re
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from kldcard.card.document import Card
from kldcard.card.regions import (
    END_MARKER,
    KLD_METRIC,
    START_MARKER,
    find_markers,
    marker_problem,
    near_miss_markers,
)
from kldcard.files import is_file
from kldcard.lint.block_values import (
    BLOCK_KEY,
    Check,
    as_dict,
    as_list,
    as_number,
    is_impossible_divergence,
    ptr,
)


def check_section_markers(card: Card) -> Check:
    """KLD005: at most one start/end pair, start first, each on its own line (markers inside code
    fences don't count); the grammar is :mod:`kldcard.card.regions`, the one render splices with."""
    lines = re.split(r"\r\n|\r|\n", card.body)
    markers = find_markers(lines)
    problem = marker_problem(markers, card.body_line) if markers else None
    near = near_miss_markers(lines)
    if near and (problem or not markers):
        i, kind = near[0]
        problem = f"line {card.body_line + i} looks like a misspelled kldcard:{kind} marker; write it as " + (
            START_MARKER if kind == "start" else END_MARKER
        )
        markers = [m for m in markers if m.index < i] or markers
        yield "KLD005", problem, f"#L{card.body_line + min([i] + [m.index for m in markers])}"
        return
    if problem:
        # Body findings carry no JSON pointer; the line is encoded in the pointer slot as a
        # "#Lnn" fragment and resolved by the structured checker.
        yield "KLD005", problem, f"#L{card.body_line + markers[0].index}"


def check_model_index(metadata: dict[str, Any], raw: Any) -> Check:
    """KLD004, KLD008, KLD201, KLD204 and KLD206 for model-index ``kl_divergence*`` metrics."""
    means = _candidate_means(raw)
    flagged_no_block = False
    for e, entry in enumerate(as_list(metadata.get("model-index"))):
        for r, result in enumerate(as_list(as_dict(entry).get("results"))):
            metrics = [(k, m) for k, m in enumerate(as_list(as_dict(result).get("metrics"))) if _is_kld_metric(m)]
            headline_direction = any(
                m.get("type") == KLD_METRIC and "direction" in as_dict(m.get("args")) for _, m in metrics
            )
            for k, metric in metrics:
                base = ("model-index", e, "results", r, "metrics", k)
                mtype, value = metric["type"], metric.get("value")
                if BLOCK_KEY not in metadata and not flagged_no_block:
                    flagged_no_block = True
                    yield (
                        "KLD008",
                        f"model-index reports `{mtype}` but the card has no kld_evaluation block disclosing "
                        "how it was measured",
                        ptr(*base, "type"),
                    )
                number = as_number(value)
                if number is None:
                    hint = " (YAML 1.1 reads `1e-3` as text; write 0.001 or 1.0e-03)" if isinstance(value, str) else ""
                    yield "KLD004", f"model-index `{mtype}` value {value!r} is not a number{hint}", ptr(*base, "value")
                    continue
                if is_impossible_divergence(number):
                    yield (
                        "KLD201",
                        f"model-index `{mtype}` is {number!r} nats; KL divergence is never negative and never NaN",
                        ptr(*base, "value"),
                    )
                if "direction" not in as_dict(metric.get("args")) and not headline_direction:
                    yield (
                        "KLD204",
                        f"model-index `{mtype}` ({number!r} nats) has no `direction` arg; state "
                        '"KL(P_ref || P_cand)" (forward) or the reverse',
                        ptr(*base),
                    )
                if mtype == KLD_METRIC and means and not any(_matches(value, mean) for mean in means):
                    shown = ", ".join(f"{m!r}" for m in means)
                    yield (
                        "KLD206",
                        f"model-index kl_divergence {value!r} nats matches no candidate's forward mean KLD "
                        f"in kld_evaluation ({shown} nats)",
                        ptr(*base, "value"),
                    )


def _is_kld_metric(metric: Any) -> bool:
    return isinstance(metric, dict) and isinstance(metric.get("type"), str) and metric["type"].startswith(KLD_METRIC)


def _candidate_means(raw: Any) -> list[float]:
    means = []
    for cand in as_list(as_dict(raw).get("candidates")):
        mean = as_number(as_dict(as_dict(as_dict(cand).get("results")).get("kld")).get("mean"))
        if mean is not None:
            means.append(mean)
    return means


def _matches(value: float, mean: float) -> bool:
    """Equal to the digits written: 0.0213 matches 0.021349, not 0.0215."""
    try:
        quantum = Decimal(repr(float(value))).as_tuple().exponent
    except (InvalidOperation, ValueError):
        return False
    if not isinstance(quantum, int) or not math.isfinite(value) or not math.isfinite(mean):
        return value == mean
    return abs(value - mean) <= 0.5 * 10.0**quantum * (1 + 1e-9) + 1e-15


def _local_dir(card: Card) -> Path | None:
    if "://" in card.path or card.path.startswith("<"):
        return None
    return Path(card.path).resolve().parent


def check_sidecar(card: Card, raw: dict[Any, Any]) -> Check:
    """KLD011 / KLD012: the sidecar of a compact block is next to the card (a local file, or a Hub card's
    repo file fetched at the card's commit into ``card.repo_files``), with the recorded sha256."""
    from kldcard.card.hub import is_hub_spec

    side = as_dict(raw.get("sidecar"))
    name, sha = side.get("file"), side.get("sha256")
    if not isinstance(name, str) or not name:
        return
    where = _local_dir(card)
    pointer = ptr(BLOCK_KEY, "sidecar", "file")
    if where is not None:
        path: Path | None = where / name
        if not is_file(path):  # a name from the card: too long (ENAMETOOLONG) reads as "not there"
            path = None
    elif is_hub_spec(card.path):
        if name not in card.repo_files:  # not fetched: the runner fetches only paths inside the repo
            yield ("KLD011", f"the sidecar {name} named by kld_evaluation is not a path inside the card's repository",
                   pointer)
            return
        path = card.repo_files[name]
    else:
        return  # text without a place (stdin): nothing is next to it
    if path is None:
        yield ("KLD011", f"the sidecar {name} named by kld_evaluation is not next to the card", pointer)
        return
    from kldcard.files import sha256_file

    actual = sha256_file(path)
    if isinstance(sha, str) and actual != sha:
        yield ("KLD012", f"the sidecar {name} has sha256 {actual[:16]}..., the card records {sha[:16]}...; "
               "the card and its sidecar come from different runs", ptr(BLOCK_KEY, "sidecar", "sha256"))


def check_stated_quantization(card: Card, raw: dict[Any, Any]) -> Check:
    """KLD211: model.quantization against model.tensors.file_type and, at hand, the GGUF's own file type."""
    from kldcard.stack.quantization import (
        contradiction,
        file_type_label,
        gguf_file_type,
    )

    where = _local_dir(card)
    for i, cand in enumerate(as_list(raw.get("candidates"))):
        model = as_dict(as_dict(cand).get("model"))
        stated = model.get("quantization")
        if not isinstance(stated, str):
            continue
        recorded = as_dict(model.get("tensors")).get("file_type")
        label = file_type_label(recorded) if isinstance(recorded, str) else None
        if contradiction(stated, label):
            yield ("KLD211", f"candidate {i} states quantization {stated!r} but its tensor table says {recorded} "
                   f"({label})", ptr(BLOCK_KEY, "candidates", i, "model", "quantization"))
            continue
        name = model.get("model")
        if where is None or not isinstance(name, str):
            continue
        for file in (where / name, where / f"{name}.gguf"):
            if is_file(file) and file.suffix.lower() == ".gguf":
                actual = file_type_label(gguf_file_type(str(file)))
                if contradiction(stated, actual):
                    yield ("KLD211", f"candidate {i} states quantization {stated!r} but {file.name} is {actual}",
                           ptr(BLOCK_KEY, "candidates", i, "model", "quantization"))
                break
