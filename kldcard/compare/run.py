"""Compare a reference capture with a candidate capture: guards, float64 divergences, summaries.

:func:`compare` refuses captures that are not comparable (different token ids, positions or
vocabulary size — unless a padded vocabulary is explicitly aligned to its common prefix), streams
both captures through :mod:`kldcard.compare.divergence` and returns a :class:`CompareResult` that carries
both manifests, so a card renderer can fill all nine disclosures from it.

Every divergence is in nats. "forward" is KL(P_ref ‖ P_cand), "reverse" KL(P_cand ‖ P_ref), "js"
the Jensen-Shannon divergence; summaries are over the scored positions, full vocabulary (or the
aligned common prefix).
"""

from __future__ import annotations

import math
import os
from collections.abc import Callable, Sequence
from datetime import datetime, timezone

import numpy as np

from kldcard.capture.store import Capture, open_capture
from kldcard.compare.confidence import confidence_stats, label_in_top_k
from kldcard.compare.depth import depth_profile
from kldcard.compare.divergence import TokenDivergence
from kldcard.compare.provenance import check_provenance, check_same_text
from kldcard.compare.io import write_per_token, write_result
from kldcard.compare.result import (
    UNCERTAINTY_METHODS,
    CompareResult,
    Numerics,
    Perplexity,
    ResultAggregation,
    ScoredPositions,
    VocabularyInfo,
)
from kldcard.compare.stream import default_threads, divergence_captures
from kldcard.compare.summary import (
    DEFAULT_PERCENTILES,
    BootstrapOptions,
    bucket_edges,
    disagreement_runs,
    proportion,
    range_stats,
    resolved_method,
    rms,
    summarize,
)
from kldcard.errors import CaptureMismatch, UsageError

__all__ = ["CompareResult", "build_result", "compare", "write_per_token", "write_result"]

def _portability(ref: Capture, cand: Capture) -> list[str]:
    """Arithmetic-changing stack differences; the candidate's weights dtype is the quantization under test."""
    from kldcard.stack.portability import QUANTIZATION_UNDER_TEST, capture_differences

    if ref.manifest.stack is None or cand.manifest.stack is None:
        return []
    return [d.message for d in capture_differences(ref, cand, ignore=QUANTIZATION_UNDER_TEST)]


# ----------------------------------------------------------------------------------------------
# Guards
# ----------------------------------------------------------------------------------------------


def _first_difference(a: np.ndarray, b: np.ndarray, what: str) -> None:
    n = min(len(a), len(b))
    diff = np.flatnonzero(a[:n] != b[:n])
    if len(diff):
        i = int(diff[0])
        raise CaptureMismatch(
            f"{what} differ at index {i}: reference {int(a[i])} vs candidate {int(b[i])} "
            f"({len(diff)} of {n} differ); the captures were not made from the same tokens"
        )
    if len(a) != len(b):
        i = n
        ra = int(a[i]) if i < len(a) else "(end)"
        cb = int(b[i]) if i < len(b) else "(end)"
        raise CaptureMismatch(
            f"{what} differ at index {i}: reference {ra} vs candidate {cb} "
            f"(reference has {len(a)}, candidate {len(b)}; identical before that)"
        )


def check_comparable(ref: Capture, cand: Capture, align_vocab: str | None) -> tuple[int, str]:
    """Raise CaptureMismatch unless the captures can be compared; return (n_vocab, alignment)."""
    _first_difference(ref.token_ids, cand.token_ids, "token ids")
    _first_difference(ref.positions, cand.positions, "positions")
    if ref.n_vocab == cand.n_vocab:
        return ref.n_vocab, "identical"
    if align_vocab == "common-prefix":
        return min(ref.n_vocab, cand.n_vocab), "common-prefix"
    if align_vocab not in (None, "none"):
        raise UsageError(f"unknown vocabulary alignment {align_vocab!r} (supported: common-prefix)")
    n = min(ref.n_vocab, cand.n_vocab)
    raise CaptureMismatch(
        f"vocabulary sizes differ: reference {ref.n_vocab} vs candidate {cand.n_vocab} (first differing index "
        f"{n}); if one is padded, pass --align-vocab common-prefix to compare the first {n} entries"
    )


# ----------------------------------------------------------------------------------------------
# compare
# ----------------------------------------------------------------------------------------------


def compare(
    reference: str | os.PathLike | Capture,
    candidate: str | os.PathLike | Capture,
    *,
    align_vocab: str | None = None,
    buckets: str | Sequence[int] | None = None,
    percentiles: Sequence[float] = DEFAULT_PERCENTILES,
    bootstrap: int = 1000,
    level: float = 0.95,
    seed: int = 0,
    uncertainty: str = "auto",
    threads: int | None = None,
    verify: bool = True,
    progress: Callable[[int], None] | None = None,
    return_per_token: bool = False,
    text: str | os.PathLike | None = None,
) -> CompareResult | tuple[CompareResult, TokenDivergence]:
    """Compare two captures in float64. Divergences in nats; forward = KL(P_ref ‖ P_cand).

    ``align_vocab="common-prefix"`` compares padded vocabularies over their common prefix (and says
    so in the result). ``buckets``: see :func:`kldcard.compare.summary.bucket_edges`. ``bootstrap`` resamples
    (0 = SE only) at confidence ``level`` with ``seed``; ``uncertainty``: ``auto`` (whole context windows
    when the capture has >= 20, else circular moving blocks of a Politis–White length), ``cluster``,
    ``circular-block`` or ``iid`` (per-token, tokens assumed independent). ``progress(n_rows)`` is called as rows finish.
    Each manifest's provenance is checked against what its data pin down first
    (:mod:`kldcard.compare.provenance`; ``text``: the evaluation text, when at hand).
    """
    ref = reference if isinstance(reference, Capture) else open_capture(reference, verify=verify)
    cand = candidate if isinstance(candidate, Capture) else open_capture(candidate, verify=verify)
    n_vocab, alignment = check_comparable(ref, cand, align_vocab)
    check_same_text(ref, cand)
    check_provenance(ref, "reference", text=text)
    check_provenance(cand, "candidate", text=text)
    threads = threads or default_threads()
    if threads < 1:
        raise UsageError("threads must be >= 1")
    boot = BootstrapOptions(resamples=bootstrap, level=level, seed=seed, method=uncertainty)
    td = divergence_captures(ref, cand, n_vocab=n_vocab, threads=threads, progress=progress)
    result = build_result(ref, cand, td, n_vocab, alignment, buckets, list(percentiles), boot, threads)
    return (result, td) if return_per_token else result


def build_result(
    ref: Capture,
    cand: Capture,
    td: TokenDivergence,
    n_vocab: int,
    alignment: str,
    buckets: str | Sequence[int] | None,
    percentiles: list[float],
    boot: BootstrapOptions,
    threads: int,
) -> CompareResult:
    """The :class:`CompareResult` of per-token values ``td`` (nats; forward = KL(P_ref ‖ P_cand)) of two
    checked captures; shared by the local stream and the distributed run so both summarise identically."""
    pos = td.positions
    agree, dp = td.top1_agree, td.delta_p
    # Output ranges are positions *within the context window* (how much left context a token had),
    # which is what long-context divergence depends on and what the card's context disclosure bounds;
    # for one long prompt that is the absolute position, for non-overlapping chunks it is pos mod n_ctx.
    win = window_positions(pos, ref.manifest.context)
    blocks = window_ids(pos, ref.manifest.context)
    method = resolved_method(boot, blocks)
    edges = bucket_edges(win, buckets)
    p_agree, p_se = proportion(agree)
    r, r_se = rms(dp)
    has_next = td.next_token >= 0
    truncs = {ref.manifest.truncation.kind, cand.manifest.truncation.kind}
    return CompareResult(
        created_utc=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        reference_path=str(ref.path),
        candidate_path=str(cand.path),
        reference=ref.manifest,
        candidate=cand.manifest,
        vocabulary=VocabularyInfo(
            reference_vocab_size=ref.n_vocab,
            candidate_vocab_size=cand.n_vocab,
            compared_vocab_size=n_vocab,
            alignment=alignment,
            truncation="full" if truncs == {"full"} else sorted(truncs - {"full"})[0],
        ),
        positions=ScoredPositions(
            scheme=ref.manifest.positions.scheme,
            n_scored=len(pos),
            first=int(pos[0]),
            last=int(pos[-1]),
            n_without_next_token=int((~has_next).sum()),
        ),
        aggregation=ResultAggregation(
            percentiles=percentiles,
            output_ranges=[[a, b] for a, b in zip(edges, edges[1:])],
            uncertainty_method=UNCERTAINTY_METHODS.get(method, "se-iid"),
            bootstrap=boot,
            n_windows=1 if blocks is None else len(np.unique(blocks)),
        ),
        forward_kl=summarize(td.forward_kl, percentiles=percentiles, bootstrap=boot, blocks=blocks),
        reverse_kl=summarize(td.reverse_kl, percentiles=percentiles, bootstrap=boot, blocks=blocks),
        js=summarize(td.js, percentiles=percentiles, bootstrap=boot, blocks=blocks),
        top1_agreement=p_agree,
        top1_agreement_se=p_se,
        delta_p=summarize(dp, percentiles=percentiles, bootstrap=BootstrapOptions(resamples=0)),
        rms_delta_p=None if math.isnan(r) else r,
        rms_delta_p_se=r_se,
        perplexity=_perplexity(td.nll_ref[has_next], td.nll_cand[has_next]),
        ranges=range_stats(win, td.forward_kl, td.reverse_kl, td.js, agree, dp, edges, percentiles=percentiles,
                           bootstrap=boot, blocks=blocks),
        confidence=[] if td.p_top_ref is None else confidence_stats(td.p_top_ref, td.forward_kl, agree),
        label_in_top_k=[] if td.rank_ref is None else label_in_top_k(td.rank_ref, td.rank_cand),
        disagreement_runs=disagreement_runs(pos, agree),
        depth=depth_profile(win, blocks, td.forward_kl, agree, edges, level=boot.level,
                            resamples=boot.resamples, seed=boot.seed),
        numerics=Numerics(robust_rows=int(td.robust.sum()), threads=threads),
        portability=_portability(ref, cand),
    )


def window_positions(positions: np.ndarray, context) -> np.ndarray:
    """Each position's offset inside its context window (chunks of ``context.stride`` tokens)."""
    stride = getattr(context, "stride", None) or getattr(context, "n_ctx", None)
    n_chunks = getattr(context, "n_chunks", None) or 1
    if not stride or n_chunks <= 1:
        return positions
    return positions % stride


def window_ids(positions: np.ndarray, context) -> np.ndarray | None:
    """The context window of each scored position (``position // stride``), or None for a capture
    of one window. These are the blocks the cluster bootstrap resamples: tokens of one window share
    their left context, windows do not."""
    stride = getattr(context, "stride", None) or getattr(context, "n_ctx", None)
    n_chunks = getattr(context, "n_chunks", None) or 1
    if not stride or n_chunks <= 1:
        return None
    return positions // stride


def _perplexity(nll_ref: np.ndarray, nll_cand: np.ndarray) -> Perplexity | None:
    n = len(nll_ref)
    if n == 0 or not (np.all(np.isfinite(nll_ref)) and np.all(np.isfinite(nll_cand))):
        return None
    mr, mc = float(nll_ref.mean()), float(nll_cand.mean())
    diff = nll_cand - nll_ref
    se = math.sqrt(float(np.mean((diff - diff.mean()) ** 2)) / (n - 1)) if n > 1 else None
    sr, sc = float(nll_ref.std()), float(nll_cand.std())
    corr = float(np.mean((nll_ref - mr) * (nll_cand - mc)) / (sr * sc)) if n > 1 and sr > 0 and sc > 0 else None
    return Perplexity(
        mean_nll_ref=mr, mean_nll_cand=mc, ppl_ref=math.exp(mr), ppl_cand=math.exp(mc),
        ln_ppl_ratio=float(diff.mean()), ln_ppl_ratio_se=se, nll_correlation=corr,
    )
