"""Consistency rules inside the block (KLD2xx); the checks against the rest of the card are in
:mod:`kldcard.lint.card_consistency`.

Everything here works on the *raw* YAML data, defensively: the block may be incomplete or of the
wrong shape, and each check simply skips what it cannot read. Each check yields
``(code, message, pointer)``; the structured checker turns those into located findings.
All divergences are in nats.
"""


from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from collections.abc import Iterator
from typing import Any

from kldcard.card.document import Card
from kldcard.lint.block_values import (
    BLOCK_KEY,
    Check,
    as_dict,
    as_int,
    as_list,
    as_number,
    candidate_name,
    is_impossible_divergence,
    ptr,
)
from kldcard.lint.card_consistency import (
    check_model_index,
    check_section_markers,
    check_sidecar,
    check_stated_quantization,
)
from kldcard.schema_rules import is_quantized_dtype


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


def check_cross_stack_runtime(raw: dict[Any, Any]) -> Check:
    """KLD207: a candidate measured on a stack whose arithmetic differs from the reference's."""
    from kldcard.stack.portability import check_cross_stack

    for pointer, message in check_cross_stack(raw, prefix=ptr(BLOCK_KEY)):
        yield ("KLD207", message, pointer)


def check_reference(raw: dict[Any, Any]) -> Check:
    dtype = as_dict(raw.get("reference")).get("dtype")
    if isinstance(dtype, str) and dtype and is_quantized_dtype(dtype):
        yield (
            "KLD202",
            f"reference dtype is {dtype!r}: a quantized reference; KLD against it does not measure the distance "
            "to the original weights (use bf16, f16 or f32)",
            ptr(BLOCK_KEY, "reference", "dtype"),
        )


_IMPOSSIBLE = "divergences are never negative and never NaN"


def check_negative_means(raw: dict[Any, Any]) -> Check:
    labels = {
        "kld": "forward mean KLD, KL(P_ref || P_cand),",
        "reverse_kld": "reverse mean KLD, KL(P_cand || P_ref),",
        "js": "mean Jensen-Shannon divergence",
    }
    for i, cand in enumerate(as_list(raw.get("candidates"))):
        results = as_dict(as_dict(cand).get("results"))
        for key, label in labels.items():
            mean = as_number(as_dict(results.get(key)).get("mean"))
            if mean is not None and is_impossible_divergence(mean):
                yield (
                    "KLD201",
                    f"{candidate_name(cand, i)}: {label} is {mean!r} nats; {_IMPOSSIBLE}",
                    ptr(BLOCK_KEY, "candidates", i, "results", key, "mean"),
                )
        for j, rng in enumerate(as_list(results.get("ranges"))):
            mean = as_number(as_dict(rng).get("kld_mean"))
            if mean is not None and is_impossible_divergence(mean):
                yield (
                    "KLD201",
                    f"{candidate_name(cand, i)}: forward mean KLD over range #{j} is {mean!r} nats; {_IMPOSSIBLE}",
                    ptr(BLOCK_KEY, "candidates", i, "results", "ranges", j, "kld_mean"),
                )


def check_positions(raw: dict[Any, Any]) -> Check:
    """KLD203. Positions count from 0 within a chunk of ``n_ctx`` tokens."""
    context = as_dict(raw.get("context"))
    n_ctx, n_chunks = as_int(context.get("n_ctx")), as_int(context.get("n_chunks"))
    if n_ctx is None or n_ctx < 1:
        return
    positions = as_dict(raw.get("positions"))
    for k, pos in enumerate(as_list(positions.get("explicit"))):
        if as_int(pos) is not None and pos >= n_ctx:
            yield (
                "KLD203",
                f"explicit position {pos} is beyond the context (n_ctx {n_ctx}: positions 0..{n_ctx - 1})",
                ptr(BLOCK_KEY, "positions", "explicit", k),
            )
            break
    offset = as_int(positions.get("offset"))
    if offset is not None and offset >= n_ctx:
        yield "KLD203", f"positions offset {offset} is beyond the context (n_ctx {n_ctx})", ptr(
            BLOCK_KEY, "positions", "offset"
        )
    if n_chunks is not None and n_chunks >= 1:
        total = n_ctx * n_chunks
        n_scored = as_int(positions.get("n_scored"))
        if n_scored is not None and n_scored > total:
            yield (
                "KLD203",
                f"{n_scored} scored positions exceed the {total} positions that exist "
                f"(n_ctx {n_ctx} x n_chunks {n_chunks})",
                ptr(BLOCK_KEY, "positions", "n_scored"),
            )
        for i, cand in enumerate(as_list(raw.get("candidates"))):
            n_pos = as_int(as_dict(as_dict(cand).get("results")).get("n_positions"))
            if n_pos is not None and n_pos > total:
                yield (
                    "KLD203",
                    f"{candidate_name(cand, i)}: results over {n_pos} positions exceed the {total} that exist "
                    f"(n_ctx {n_ctx} x n_chunks {n_chunks})",
                    ptr(BLOCK_KEY, "candidates", i, "results", "n_positions"),
                )
    for k, rng in enumerate(as_list(as_dict(raw.get("aggregation")).get("output_ranges"))):
        end = as_int(rng[1]) if isinstance(rng, list) and len(rng) == 2 else None
        if end is not None and end > n_ctx:
            yield (
                "KLD203",
                f"output range {rng} ends beyond the context (n_ctx {n_ctx})",
                ptr(BLOCK_KEY, "aggregation", "output_ranges", k),
            )
    for i, cand in enumerate(as_list(raw.get("candidates"))):
        for j, rng in enumerate(as_list(as_dict(as_dict(cand).get("results")).get("ranges"))):
            end = as_int(as_dict(rng).get("end"))
            if end is not None and end > n_ctx:
                yield (
                    "KLD203",
                    f"{candidate_name(cand, i)}: result range #{j} ends at {end}, beyond the context (n_ctx {n_ctx})",
                    ptr(BLOCK_KEY, "candidates", i, "results", "ranges", j, "end"),
                )


def check_directions(raw: dict[Any, Any]) -> Check:
    reported = as_dict(raw.get("direction")).get("reported")
    if not isinstance(reported, list):
        return  # a missing direction disclosure is KLD107's finding, not this rule's
    needs = {"kld": ("forward", "KL(P_ref || P_cand)"), "reverse_kld": ("reverse", "KL(P_cand || P_ref)"), "js": ("js", "Jensen-Shannon")}
    for i, cand in enumerate(as_list(raw.get("candidates"))):
        results = as_dict(as_dict(cand).get("results"))
        for key, (direction, formula) in needs.items():
            if key in results and results[key] is not None and direction not in reported:
                yield (
                    "KLD204",
                    f"{candidate_name(cand, i)} reports results.{key} ({formula}) but direction.reported "
                    f"{reported} does not list {direction!r}",
                    ptr(BLOCK_KEY, "candidates", i, "results", key),
                )


def check_calibration(raw: dict[Any, Any]) -> Check:
    text_sha = as_dict(raw.get("evaluation_text")).get("sha256")
    for i, cand in enumerate(as_list(raw.get("candidates"))):
        calib = as_dict(as_dict(cand).get("calibration"))
        base = (BLOCK_KEY, "candidates", i, "calibration")
        if isinstance(text_sha, str) and text_sha and calib.get("sha256") == text_sha:
            yield (
                "KLD205",
                f"{candidate_name(cand, i)} was calibrated on the evaluation text itself (same sha256)",
                ptr(*base, "sha256"),
            )
        elif calib.get("overlaps_evaluation_text") is True:
            yield (
                "KLD205",
                f"calibration data of {candidate_name(cand, i)} overlaps the evaluation text; its KLD is optimistic",
                ptr(*base, "overlaps_evaluation_text"),
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
    vocab = as_dict(raw.get("vocabulary"))
    if vocab.get("truncation") != "full":
        return
    evidence = None
    # a served candidate that discloses its own top-k vocabulary is not evidence against the block's
    own = {i for i, c in enumerate(as_list(raw.get("candidates")))
           if as_dict(as_dict(c).get("vocabulary")).get("truncation") == "top-k"}
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
            ptr(BLOCK_KEY, "vocabulary", "truncation"),
        )


def check_uncertainty(raw: dict[Any, Any]) -> Check:
    """KLD209: an i.i.d. interval over several context windows; KLD210: an excess over a control
    that ran on another stack."""
    agg = as_dict(raw.get("aggregation"))
    method = as_dict(agg.get("uncertainty")).get("method")
    n_chunks = as_int(as_dict(raw.get("context")).get("n_chunks"))
    if method in ("bootstrap", "se-iid") and n_chunks is not None and n_chunks > 1:
        yield ("KLD209", f"uncertainty method {method} treats tokens as independent, but the text was scored in "
               f"{n_chunks} context windows; use a block bootstrap (window-bootstrap)",
               ptr(BLOCK_KEY, "aggregation", "uncertainty", "method"))
    cmp = as_dict(raw.get("comparison"))
    control = cmp.get("control")
    if not isinstance(control, str):
        return
    from kldcard.stack.portability import QUANTIZATION_UNDER_TEST, stack_differences

    runtimes = {c.get("name"): c.get("runtime") for c in as_list(raw.get("candidates")) if isinstance(c, dict)}
    control_rt = runtimes.get(control)
    if not isinstance(control_rt, dict):
        return
    for i, e in enumerate(as_list(cmp.get("excess_over_control"))):
        name = as_dict(e).get("candidate")
        rt = runtimes.get(name)
        if not isinstance(rt, dict):
            continue
        diffs = stack_differences(control_rt, rt, ignore=QUANTIZATION_UNDER_TEST)
        if diffs:
            d = diffs[0]
            yield ("KLD210", f"the excess of {name!r} over control {control!r} subtracts a floor measured on another "
                   f"stack: {d.coordinate} is {d.reference} for the control, {d.candidate} for {name!r}",
                   ptr(BLOCK_KEY, "comparison", "excess_over_control", i))
