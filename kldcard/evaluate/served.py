"""Served candidates of ``kldcard evaluate``: a model behind an OpenAI-compatible server.

A server reports per position only the top ``k`` log-probabilities of the prompt
(:mod:`kldcard.capture.openai_capture`), so the KLD is the truncated one of
:mod:`kldcard.compare.truncated` against the full reference capture, and the candidate's card
entry carries its own ``vocabulary`` (top-k, the tail treatment) next to the block's. With the tail
``lumped`` (the default) it is a lower bound on the full-vocabulary KL(P_ref ‖ P_cand), in nats.

What a served candidate cannot have, and does not get: a cache entry (the weights behind a URL are
not content-addressable, so it is asked again on every run), reverse KL and JS (the candidate's tail
is unknown), a place in the paired ranking (a lower bound is not comparable with full KLDs), and a
context other than the reference's: one request is one context window, so the reference must be
captured in one window too (``n_ctx`` unset or at least the text's tokens).
"""

from __future__ import annotations

from typing import Any

from kldcard.errors import InputError

__all__ = ["evaluate_served"]

BLOCK_ROWS = 256  # reference rows read at a time for the top-1 comparison


def _reference_top1(ref, rows) -> list[int]:
    import numpy as np

    out = np.empty(len(rows), np.int64)
    for s in range(0, len(rows), BLOCK_ROWS):
        chunk = rows[s : s + BLOCK_ROWS]
        lo, hi = int(chunk.min()), int(chunk.max()) + 1
        out[s : s + len(chunk)] = ref.logits_f32(lo, hi).argmax(axis=1)[chunk - lo]
    return out.tolist()


def evaluate_served(c, p, ref, scratch) -> dict[str, Any]:
    """Capture candidate ``c`` (a :class:`~kldcard.evaluate.project.CandidateSpec` with ``server``) from
    its server into ``scratch`` (a small top-k capture, replaced each run) and return its card entry
    (a :class:`~kldcard.schema.Candidate` as plain data) against the opened reference capture ``ref``."""
    import numpy as np

    from kldcard.capture.openai_capture import capture_openai
    from kldcard.capture.quantization import model_quantization, quantization_label
    from kldcard.compare.summary import DEFAULT_PERCENTILES, BootstrapOptions, summarize
    from kldcard.compare.truncated import compare_truncated
    from kldcard.schema import Summary

    own = ((p.disclosures.get("candidates") or {}).get(c.name) or {}).get("calibration")
    calibration = c.calibration or own or p.disclosures.get("calibration")
    ctx = ref.manifest.context
    if p.protocol or (getattr(ctx, "n_chunks", 1) or 1) > 1:
        raise InputError(f"{c.name}: a served candidate is asked in one request, one context window; capture the "
                         "reference in one window too (no n_ctx below the text's tokens, no protocol)")
    vocab_gguf = p.path(c.vocab_gguf)
    stated = c.quantization or (quantization_label(model_quantization(vocab_gguf)) if vocab_gguf else None)
    if not stated:
        raise InputError(f"{c.name}: state the served model's quantization (quantization: q4_k_m, ...) or give "
                         "vocab_gguf: the served GGUF, whose tensor table says it")
    run = capture_openai(c.server, c.model, p.path(p.text.path), scratch, top_k=c.top_k, positions=p.positions,
                         n_vocab=ref.n_vocab, vocab_gguf=vocab_gguf, text_name=p.text.name,
                         piece_tokens=max(2, len(ref.token_ids)), overwrite=True, progress=False)
    cand = run.capture
    res = compare_truncated(ref, cand, treatment=c.tail, verify=False)
    per = np.asarray(res.per_position, dtype=np.float64)
    stats = summarize(per, percentiles=list(DEFAULT_PERCENTILES),
                      bootstrap=BootstrapOptions(resamples=p.bootstrap, seed=p.seed))
    positions = np.asarray(res.positions, dtype=np.int64)
    ref_rows = np.searchsorted(ref.positions, positions)
    cand_rows = np.searchsorted(cand.positions, positions)
    # the server's entries come in its own order: the candidate's top 1 is its largest log-probability
    best = np.take_along_axis(cand.topk_ids[cand_rows], cand.topk_logprobs[cand_rows].argmax(axis=1)[:, None], 1)[:, 0]
    top1 = np.asarray(_reference_top1(ref, ref_rows)) == best
    voc = res.vocabulary
    return {
        "name": c.name,
        "model": {"model": c.model, "quantization": stated},
        "runtime": cand.manifest.stack.model_dump(mode="json"),
        "calibration": calibration,
        "results": {"n_positions": len(positions), "kld": Summary.model_validate(
                        {k: getattr(stats, k) for k in Summary.model_fields}).model_dump(mode="json"),
                    "top1_agreement": float(top1.mean())},
        "vocabulary": {"truncation": "top-k", "top_k": voc["top_k"], "tail": voc["tail"],
                       "reference_vocab_size": ref.n_vocab, "candidate_vocab_size": cand.n_vocab,
                       "alignment": "identical"},
        **({"cross_stack": c.cross_stack.model_dump()} if c.cross_stack else {}),
    }
