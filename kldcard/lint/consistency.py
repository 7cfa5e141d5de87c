"""Consistency rules (KLD2xx) and front-matter structure checks outside the block (KLD004/5/8).

Everything here works on the *raw* YAML data, defensively: the block may be incomplete or of the
wrong shape, and each check simply skips what it cannot read. Each check yields
``(code, message, pointer)``; the structured checker turns those into located findings.
All divergences are in nats.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from decimal import Decimal, InvalidOperation
from pathlib import Path
from typing import Any

from kldcard.card.document import Card
from kldcard.card.regions import END_MARKER, KLD_METRIC, START_MARKER, find_markers, marker_problem, near_miss_markers
from kldcard.schema_rules import is_quantized_dtype

BLOCK_KEY = "kld_evaluation"
# float64 rounding on (near-)identical distributions can leave a mean a hair below zero; anything
# below this is a real sign error, not rounding.
NEGATIVE_TOLERANCE_NATS = 1e-12

Check = Iterator[tuple[str, str, str]]


def _ptr(*parts: object) -> str:
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


def _num(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value)


def _int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def _dict(value: Any) -> dict[Any, Any]:
    return value if isinstance(value, dict) else {}


def _list(value: Any) -> list[Any]:
    return value if isinstance(value, list) else []


def _cand_name(cand: dict[Any, Any], i: int) -> str:
    name = cand.get("name")
    return f"candidate {name!r}" if isinstance(name, str) else f"candidate #{i}"


def check_consistency(card: Card, raw: Any) -> Check:
    """All KLD2xx checks plus the model-index and section-marker checks."""
    yield from check_section_markers(card)
    yield from check_model_index(card.metadata, raw)
    if isinstance(raw, dict):
        yield from check_reference(raw)
        yield from check_negative_means(raw)
        yield from check_positions(raw)
        yield from check_directions(raw)
        yield from check_calibration(raw)
        yield from check_cross_stack_runtime(raw)
        yield from check_top_k_claimed_full(raw)
        yield from check_uncertainty(raw)
        yield from check_sidecar(card, raw)
        yield from check_stated_quantization(card, raw)


# --------------------------------------------------------------------------------------------


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
    for e, entry in enumerate(_list(metadata.get("model-index"))):
        for r, result in enumerate(_list(_dict(entry).get("results"))):
            metrics = [(k, m) for k, m in enumerate(_list(_dict(result).get("metrics"))) if _is_kld_metric(m)]
            headline_direction = any(
                m.get("type") == KLD_METRIC and "direction" in _dict(m.get("args")) for _, m in metrics
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
                        _ptr(*base, "type"),
                    )
                number = _num(value)
                if number is None:
                    hint = " (YAML 1.1 reads `1e-3` as text; write 0.001 or 1.0e-03)" if isinstance(value, str) else ""
                    yield "KLD004", f"model-index `{mtype}` value {value!r} is not a number{hint}", _ptr(*base, "value")
                    continue
                if number < -NEGATIVE_TOLERANCE_NATS:
                    yield (
                        "KLD201",
                        f"model-index `{mtype}` is {number!r} nats; KL divergence is never negative",
                        _ptr(*base, "value"),
                    )
                if "direction" not in _dict(metric.get("args")) and not headline_direction:
                    yield (
                        "KLD204",
                        f"model-index `{mtype}` ({number!r} nats) has no `direction` arg; state "
                        '"KL(P_ref || P_cand)" (forward) or the reverse',
                        _ptr(*base),
                    )
                if mtype == KLD_METRIC and means and not any(_matches(value, mean) for mean in means):
                    shown = ", ".join(f"{m!r}" for m in means)
                    yield (
                        "KLD206",
                        f"model-index kl_divergence {value!r} nats matches no candidate's forward mean KLD "
                        f"in kld_evaluation ({shown} nats)",
                        _ptr(*base, "value"),
                    )


def _is_kld_metric(metric: Any) -> bool:
    return isinstance(metric, dict) and isinstance(metric.get("type"), str) and metric["type"].startswith(KLD_METRIC)


def _candidate_means(raw: Any) -> list[float]:
    means = []
    for cand in _list(_dict(raw).get("candidates")):
        mean = _num(_dict(_dict(_dict(cand).get("results")).get("kld")).get("mean"))
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


def check_cross_stack_runtime(raw: dict[Any, Any]) -> Check:
    """KLD207: a candidate measured on a stack whose arithmetic differs from the reference's."""
    from kldcard.stack.portability import check_cross_stack

    for pointer, message in check_cross_stack(raw, prefix=_ptr(BLOCK_KEY)):
        yield ("KLD207", message, pointer)


def check_reference(raw: dict[Any, Any]) -> Check:
    dtype = _dict(raw.get("reference")).get("dtype")
    if isinstance(dtype, str) and dtype and is_quantized_dtype(dtype):
        yield (
            "KLD202",
            f"reference dtype is {dtype!r}: a quantized reference; KLD against it does not measure the distance "
            "to the original weights (use bf16, f16 or f32)",
            _ptr(BLOCK_KEY, "reference", "dtype"),
        )


def check_negative_means(raw: dict[Any, Any]) -> Check:
    labels = {
        "kld": "forward mean KLD, KL(P_ref || P_cand),",
        "reverse_kld": "reverse mean KLD, KL(P_cand || P_ref),",
        "js": "mean Jensen-Shannon divergence",
    }
    for i, cand in enumerate(_list(raw.get("candidates"))):
        results = _dict(_dict(cand).get("results"))
        for key, label in labels.items():
            mean = _num(_dict(results.get(key)).get("mean"))
            if mean is not None and mean < -NEGATIVE_TOLERANCE_NATS:
                yield (
                    "KLD201",
                    f"{_cand_name(cand, i)}: {label} is {mean!r} nats; divergences are never negative",
                    _ptr(BLOCK_KEY, "candidates", i, "results", key, "mean"),
                )
        for j, rng in enumerate(_list(results.get("ranges"))):
            mean = _num(_dict(rng).get("kld_mean"))
            if mean is not None and mean < -NEGATIVE_TOLERANCE_NATS:
                yield (
                    "KLD201",
                    f"{_cand_name(cand, i)}: forward mean KLD over range #{j} is {mean!r} nats; "
                    "divergences are never negative",
                    _ptr(BLOCK_KEY, "candidates", i, "results", "ranges", j, "kld_mean"),
                )


def check_positions(raw: dict[Any, Any]) -> Check:
    """KLD203. Positions count from 0 within a chunk of ``n_ctx`` tokens."""
    context = _dict(raw.get("context"))
    n_ctx, n_chunks = _int(context.get("n_ctx")), _int(context.get("n_chunks"))
    if n_ctx is None or n_ctx < 1:
        return
    positions = _dict(raw.get("positions"))
    for k, pos in enumerate(_list(positions.get("explicit"))):
        if _int(pos) is not None and pos >= n_ctx:
            yield (
                "KLD203",
                f"explicit position {pos} is beyond the context (n_ctx {n_ctx}: positions 0..{n_ctx - 1})",
                _ptr(BLOCK_KEY, "positions", "explicit", k),
            )
            break
    offset = _int(positions.get("offset"))
    if offset is not None and offset >= n_ctx:
        yield "KLD203", f"positions offset {offset} is beyond the context (n_ctx {n_ctx})", _ptr(
            BLOCK_KEY, "positions", "offset"
        )
    if n_chunks is not None and n_chunks >= 1:
        total = n_ctx * n_chunks
        n_scored = _int(positions.get("n_scored"))
        if n_scored is not None and n_scored > total:
            yield (
                "KLD203",
                f"{n_scored} scored positions exceed the {total} positions that exist "
                f"(n_ctx {n_ctx} x n_chunks {n_chunks})",
                _ptr(BLOCK_KEY, "positions", "n_scored"),
            )
        for i, cand in enumerate(_list(raw.get("candidates"))):
            n_pos = _int(_dict(_dict(cand).get("results")).get("n_positions"))
            if n_pos is not None and n_pos > total:
                yield (
                    "KLD203",
                    f"{_cand_name(cand, i)}: results over {n_pos} positions exceed the {total} that exist "
                    f"(n_ctx {n_ctx} x n_chunks {n_chunks})",
                    _ptr(BLOCK_KEY, "candidates", i, "results", "n_positions"),
                )
    for k, rng in enumerate(_list(_dict(raw.get("aggregation")).get("output_ranges"))):
        end = _int(rng[1]) if isinstance(rng, list) and len(rng) == 2 else None
        if end is not None and end > n_ctx:
            yield (
                "KLD203",
                f"output range {rng} ends beyond the context (n_ctx {n_ctx})",
                _ptr(BLOCK_KEY, "aggregation", "output_ranges", k),
            )
    for i, cand in enumerate(_list(raw.get("candidates"))):
        for j, rng in enumerate(_list(_dict(_dict(cand).get("results")).get("ranges"))):
            end = _int(_dict(rng).get("end"))
            if end is not None and end > n_ctx:
                yield (
                    "KLD203",
                    f"{_cand_name(cand, i)}: result range #{j} ends at {end}, beyond the context (n_ctx {n_ctx})",
                    _ptr(BLOCK_KEY, "candidates", i, "results", "ranges", j, "end"),
                )


def check_directions(raw: dict[Any, Any]) -> Check:
    reported = _dict(raw.get("direction")).get("reported")
    if not isinstance(reported, list):
        return  # a missing direction disclosure is KLD107's finding, not this rule's
    needs = {"kld": ("forward", "KL(P_ref || P_cand)"), "reverse_kld": ("reverse", "KL(P_cand || P_ref)"), "js": ("js", "Jensen-Shannon")}
    for i, cand in enumerate(_list(raw.get("candidates"))):
        results = _dict(_dict(cand).get("results"))
        for key, (direction, formula) in needs.items():
            if key in results and results[key] is not None and direction not in reported:
                yield (
                    "KLD204",
                    f"{_cand_name(cand, i)} reports results.{key} ({formula}) but direction.reported "
                    f"{reported} does not list {direction!r}",
                    _ptr(BLOCK_KEY, "candidates", i, "results", key),
                )


def check_calibration(raw: dict[Any, Any]) -> Check:
    text_sha = _dict(raw.get("evaluation_text")).get("sha256")
    for i, cand in enumerate(_list(raw.get("candidates"))):
        calib = _dict(_dict(cand).get("calibration"))
        base = (BLOCK_KEY, "candidates", i, "calibration")
        if isinstance(text_sha, str) and text_sha and calib.get("sha256") == text_sha:
            yield (
                "KLD205",
                f"{_cand_name(cand, i)} was calibrated on the evaluation text itself (same sha256)",
                _ptr(*base, "sha256"),
            )
        elif calib.get("overlaps_evaluation_text") is True:
            yield (
                "KLD205",
                f"calibration data of {_cand_name(cand, i)} overlaps the evaluation text; its KLD is optimistic",
                _ptr(*base, "overlaps_evaluation_text"),
            )


_TOP_K_WORDS = re.compile(r"prompt[_ ]logprobs|top[_ ]logprobs|\blogprobs\b|\btop[-_ ]?k\b", re.IGNORECASE)


def _strings(value: Any, path: tuple[Any, ...] = ()) -> Iterator[tuple[tuple[Any, ...], str]]:
    if isinstance(value, dict):
        for k, v in value.items():
            yield from _strings(v, (*path, k))
    elif isinstance(value, list):
        for i, v in enumerate(value):
            yield from _strings(v, (*path, i))
    elif isinstance(value, str):
        yield path, value


def check_top_k_claimed_full(raw: dict[Any, Any]) -> Check:
    """KLD208: ``vocabulary.truncation: full`` while the block shows a top-k (serving API) capture."""
    vocab = _dict(raw.get("vocabulary"))
    if vocab.get("truncation") != "full":
        return
    evidence = None
    # a served candidate that discloses its own top-k vocabulary is not evidence against the block's
    own = {i for i, c in enumerate(_list(raw.get("candidates")))
           if _dict(_dict(c).get("vocabulary")).get("truncation") == "top-k"}
    if vocab.get("top_k") is not None:
        evidence = f"vocabulary.top_k is {vocab.get('top_k')!r}"
    else:
        for path, text in _strings(raw):
            if path == ("vocabulary", "truncation") or (len(path) > 1 and path[0] == "candidates" and path[1] in own):
                continue
            if path and path[-1] == "engine" and text.lower().startswith("openai-server"):
                evidence = f"{'.'.join(map(str, path))} is {text!r} (an OpenAI-compatible server returns only the top k)"
                break
            m = _TOP_K_WORDS.search(text)
            if m:
                evidence = f"{'.'.join(map(str, path))} mentions {m.group(0)!r}"
                break
    if evidence:
        yield (
            "KLD208",
            f"vocabulary.truncation is 'full' but {evidence}: the distributions were truncated to the top k; "
            "disclose truncation: top-k with top_k and the tail treatment",
            _ptr(BLOCK_KEY, "vocabulary", "truncation"),
        )


def check_uncertainty(raw: dict[Any, Any]) -> Check:
    """KLD209: an i.i.d. interval over several context windows; KLD210: an excess over a control
    that ran on another stack."""
    agg = _dict(raw.get("aggregation"))
    method = _dict(agg.get("uncertainty")).get("method")
    n_chunks = _int(_dict(raw.get("context")).get("n_chunks"))
    if method in ("bootstrap", "se-iid") and n_chunks is not None and n_chunks > 1:
        yield ("KLD209", f"uncertainty method {method} treats tokens as independent, but the text was scored in "
               f"{n_chunks} context windows; use a block bootstrap (window-bootstrap)",
               _ptr(BLOCK_KEY, "aggregation", "uncertainty", "method"))
    cmp = _dict(raw.get("comparison"))
    control = cmp.get("control")
    if not isinstance(control, str):
        return
    from kldcard.stack.portability import QUANTIZATION_UNDER_TEST, stack_differences

    runtimes = {c.get("name"): c.get("runtime") for c in _list(raw.get("candidates")) if isinstance(c, dict)}
    control_rt = runtimes.get(control)
    if not isinstance(control_rt, dict):
        return
    for i, e in enumerate(_list(cmp.get("excess_over_control"))):
        name = _dict(e).get("candidate")
        rt = runtimes.get(name)
        if not isinstance(rt, dict):
            continue
        diffs = stack_differences(control_rt, rt, ignore=QUANTIZATION_UNDER_TEST)
        if diffs:
            d = diffs[0]
            yield ("KLD210", f"the excess of {name!r} over control {control!r} subtracts a floor measured on another "
                   f"stack: {d.coordinate} is {d.reference} for the control, {d.candidate} for {name!r}",
                   _ptr(BLOCK_KEY, "comparison", "excess_over_control", i))

def _local_dir(card: Card) -> Path | None:
    if "://" in card.path or card.path.startswith("<"):
        return None
    return Path(card.path).resolve().parent


def check_sidecar(card: Card, raw: dict[Any, Any]) -> Check:
    """KLD011 / KLD012: the sidecar of a compact block is next to the card (a local file, or a Hub card's
    repo file fetched at the card's commit into ``card.repo_files``), with the recorded sha256."""
    from kldcard.card.hub import is_hub_spec

    side = _dict(raw.get("sidecar"))
    name, sha = side.get("file"), side.get("sha256")
    if not isinstance(name, str) or not name:
        return
    where = _local_dir(card)
    pointer = _ptr(BLOCK_KEY, "sidecar", "file")
    if where is not None:
        path: Path | None = where / name
        if not path.is_file():
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
               "the card and its sidecar come from different runs", _ptr(BLOCK_KEY, "sidecar", "sha256"))


def check_stated_quantization(card: Card, raw: dict[Any, Any]) -> Check:
    """KLD211: model.quantization against model.tensors.file_type and, at hand, the GGUF's own file type."""
    from kldcard.stack.quantization import contradiction, file_type_label, gguf_file_type

    where = _local_dir(card)
    for i, cand in enumerate(_list(raw.get("candidates"))):
        model = _dict(_dict(cand).get("model"))
        stated = model.get("quantization")
        if not isinstance(stated, str):
            continue
        recorded = _dict(model.get("tensors")).get("file_type")
        label = file_type_label(recorded) if isinstance(recorded, str) else None
        if contradiction(stated, label):
            yield ("KLD211", f"candidate {i} states quantization {stated!r} but its tensor table says {recorded} "
                   f"({label})", _ptr(BLOCK_KEY, "candidates", i, "model", "quantization"))
            continue
        name = model.get("model")
        if where is None or not isinstance(name, str):
            continue
        for file in (where / name, where / f"{name}.gguf"):
            if file.is_file() and file.suffix.lower() == ".gguf":
                actual = file_type_label(gguf_file_type(str(file)))
                if contradiction(stated, actual):
                    yield ("KLD211", f"candidate {i} states quantization {stated!r} but {file.name} is {actual}",
                           _ptr(BLOCK_KEY, "candidates", i, "model", "quantization"))
                break
