"""The nine disclosures as the rows of the card section's first table (number, name, value; values
Markdown-escaped), and the one-line text of a runtime stack that the table and the section share."""

from __future__ import annotations

from kldcard.card.model_index import percentile_label
from kldcard.card.numbers import fmt_int, fmt_plain, md_cell
from kldcard.render.caveats import own_vocabulary_text
from kldcard.render.uncertainty import uncertainty_text
from kldcard.schema import KldEvaluation, StackFingerprint

DIRECTION_TEXT = {
    "forward": "forward KL(P_ref ‖ P_cand)",
    "reverse": "reverse KL(P_cand ‖ P_ref)",
    "js": "Jensen-Shannon divergence",
}


def stack_text(s: StackFingerprint) -> str:
    """One line naming every arithmetic-relevant coordinate of a runtime stack."""
    parts = [f"{s.engine} {s.engine_version}" + (f" (build {s.engine_build})" if s.engine_build else "")]
    device = f"{s.backend}, {s.device}" + (f" ×{s.device_count}" if s.device_count > 1 else "")
    gpu = [
        f"{label} {value}"
        for label, value in (
            ("SMs", s.sm_count),
            ("compute capability", s.compute_capability),
            ("driver", s.driver_version),
            ("CUDA", s.cuda_version),
            ("chip family", s.chip_family),
        )
        if value is not None
    ]
    parts.append(device + (f" ({', '.join(gpu)})" if gpu else ""))
    parts.append(f"attention {s.attention_backend}")
    if s.tensor_parallel > 1:
        parts.append(f"tensor parallel {s.tensor_parallel}")
    dtypes = f"weights {s.weights_dtype}"
    if s.compute_dtype:
        dtypes += f", compute {s.compute_dtype}"
    parts.append(dtypes + f", KV cache {s.kv_cache_dtype}")
    batch = f"prefill chunk {s.prefill_chunk}" + (f", n_ubatch {s.n_ubatch}" if s.n_ubatch else "")
    parts.append(batch)
    parts.append(f"threads {s.threads}" if s.threads is not None else "threads n/a (GPU)")
    parts.append(s.os)
    return "; ".join(parts)


def _candidate_stack_text(s: StackFingerprint, ref: StackFingerprint) -> str:
    """A candidate's stack, shortened to its weights when everything else equals the reference's
    (the full fingerprint is in the ``kld_evaluation`` block either way)."""
    if same_stack(s, ref):
        return f"the reference's stack, with weights {s.weights_dtype}"
    return stack_text(s)


def same_stack(s: StackFingerprint, ref: StackFingerprint) -> bool:
    """Same stack apart from the weights (what a quantization changes)."""
    ignore = {"weights_dtype"}
    return s.model_dump(exclude=ignore) == ref.model_dump(exclude=ignore)


def _engines_text(engines: list[str]) -> str:
    """Engine labels in order, repeats counted: ``llama.cpp ×3, transformers 5.0``."""
    counts: dict[str, int] = {}
    for e in engines:
        counts[e] = counts.get(e, 0) + 1
    return ", ".join(e if n == 1 else f"{e} ×{n}" for e, n in counts.items())


def _level(level: float | None) -> str:
    """A confidence level as a percentage without a trailing ``.0``: 0.95 -> ``95``."""
    return fmt_plain(round(100 * (level or 0.0), 6)).removesuffix(".0")


def pin_text(model: str, revision: str | None, sha256: str | None) -> str:
    pins = ([f"revision {revision}"] if revision else []) + ([f"sha256 {sha256}"] if sha256 else [])
    return f"{model} ({', '.join(pins)})" if pins else f"{model} (unpinned)"


def disclosure_rows(ev: KldEvaluation) -> list[dict[str, str]]:
    ref, text, ctx, pos, voc, agg = (
        ev.reference,
        ev.evaluation_text,
        ev.context,
        ev.positions,
        ev.vocabulary,
        ev.aggregation,
    )
    src = text.source
    if hasattr(src, "dataset"):
        source = f"{src.dataset}" + (f", config {src.config}" if src.config else "")
        source += f", split {src.split}, revision {src.revision}"
    elif hasattr(src, "repo_file"):
        source = f"{src.repo + ':' if src.repo else 'this repo: '}{src.repo_file} (sha256 {src.sha256})"
    else:
        source = src.url
    parity = text.tokenizer_parity
    runtime = [f"reference: {stack_text(ref.runtime)}"] + [
        f"{c.name}: {_candidate_stack_text(c.runtime, ref.runtime)}"
        + (f"; measured across stacks on purpose ({', '.join(c.cross_stack.coordinates)}): {c.cross_stack.reason}"
           if c.cross_stack else "")
        for c in ev.candidates
    ]
    calibration = []
    for c in ev.candidates:
        cal = c.calibration
        if cal.none:
            calibration.append(f"{c.name}: none")
        else:
            overlap = "overlaps the evaluation text" if cal.overlaps_evaluation_text else "no overlap with the evaluation text"
            calibration.append(f"{c.name}: {cal.dataset} (sha256 {cal.sha256}, {fmt_int(cal.n_tokens or 0)} tokens; {overlap})")
    scheme = {
        "all": "all positions",
        "every-n": f"every {pos.every_n}th position from offset {pos.offset}",
        "second-half": "the second half of each chunk",
        "explicit": f"an explicit list of {len(pos.explicit or [])} positions",
        "llama-perplexity": "the llama-perplexity protocol (second half of each chunk)",
    }[pos.scheme]
    if voc.truncation == "full":
        vocab = "full vocabulary"
    elif voc.truncation == "top-k":
        vocab = f"top-{voc.top_k} (tail {voc.tail})"
    else:
        vocab = f"terms below a floor of {fmt_plain(voc.floor_nats or 0.0)} nats under the maximum dropped"
    sizes = (
        f"{fmt_int(voc.reference_vocab_size)} tokens on both sides"
        if voc.reference_vocab_size == voc.candidate_vocab_size
        else f"reference {fmt_int(voc.reference_vocab_size)}, candidate {fmt_int(voc.candidate_vocab_size)} tokens"
    )
    align = "identical vocabularies" if voc.alignment == "identical" else "cut to their common prefix"
    uncertainty = uncertainty_text(agg.uncertainty, ctx.n_chunks)
    ranges = ", ".join(f"[{a}, {b})" for a, b in agg.output_ranges) or "none"
    pcts = ", ".join(percentile_label(p) for p in sorted(agg.percentiles)) or "none"
    rows = [
        ("Reference checkpoint", f"{pin_text(ref.model, ref.revision, ref.sha256)}, dtype {ref.dtype}"),
        ("Runtime environment", "\n".join(runtime)),
        (
            "Evaluation text",
            f"{text.name}; source {source}; sha256 {text.sha256}; {fmt_int(text.n_tokens)} tokens; "
            f"chat template {'applied' if text.chat_template else 'not applied'}; BOS {text.bos}; "
            f"tokenizer parity {parity.outcome} over {fmt_int(parity.tokens_checked)} tokens "
            f"({_engines_text(parity.engines)})",
        ),
        ("Calibration data", "\n".join(calibration)),
        (
            "Context lengths",
            f"n_ctx {fmt_int(ctx.n_ctx)}; {fmt_int(ctx.n_chunks)} chunk{'s' if ctx.n_chunks != 1 else ''}; stride {fmt_int(ctx.stride)}; "
            f"prefill chunk {fmt_int(ctx.prefill_chunk)}",
        ),
        ("Sampled positions", f"{scheme}; {fmt_int(pos.n_scored)} positions scored"),
        (
            "KL direction",
            "; ".join(DIRECTION_TEXT[d] for d in ev.direction.reported) + "; natural log (nats)",
        ),
        ("Vocabulary truncation", f"{vocab}; {sizes}; {align}"
         + "".join(f"\n{c.name}: {own_vocabulary_text(c)}" for c in ev.candidates if c.vocabulary)),
        (
            "Aggregation",
            f"{agg.statistic} over scored positions; median; percentiles {pcts}; uncertainty: {uncertainty}; "
            f"output ranges {ranges}",
        ),
    ]
    return [{"number": str(i), "name": name, "value": md_cell(value)} for i, (name, value) in enumerate(rows, 1)]
