"""Compare a reference capture with a candidate capture: guards, float64 divergences, summaries.

:func:`compare` refuses captures that are not comparable (different token ids, positions or
vocabulary size — unless a padded vocabulary is explicitly aligned to its common prefix), streams
both captures through :mod:`kldcard.divergence` and returns a :class:`CompareResult` that carries
both manifests, so a card renderer can fill all nine disclosures from it.

Every divergence is in nats. "forward" is KL(P_ref ‖ P_cand), "reverse" KL(P_cand ‖ P_ref), "js"
the Jensen-Shannon divergence; summaries are over the scored positions, full vocabulary (or the
aligned common prefix).
"""

from __future__ import annotations

import math
import sys
import types
import os
from collections.abc import Callable, Sequence
from datetime import datetime, timezone
from typing import Any, Literal

import numpy as np
from pydantic import BaseModel, ConfigDict, Field

from . import __version__
from .capture.manifest import CaptureManifest
from .capture.store import Capture, open_capture
from .compare_io import write_per_token, write_result
from .divergence import TokenDivergence
from .errors import CaptureMismatch, InputError, UsageError
from .schema import RangeResult, Results, Summary
from .stream import default_threads, divergence_captures
from .summary import (
    DEFAULT_PERCENTILES,
    BootstrapOptions,
    RangeStats,
    Runs,
    Stats,
    bucket_edges,
    disagreement_runs,
    proportion,
    range_stats,
    rms,
    summarize,
)

__all__ = ["CompareResult", "build_result", "compare", "write_per_token", "write_result"]

RESULT_FORMAT = "kldcard-compare-result"
FORWARD = "KL(P_ref || P_cand)"


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", ser_json_inf_nan="constants")


class Direction(_Model):
    """Disclosure 7: what each number is."""

    forward: str = FORWARD
    reverse: str = "KL(P_cand || P_ref)"
    js: str = "Jensen-Shannon divergence, mixture M = (P_ref + P_cand)/2"
    reported: list[Literal["forward", "reverse", "js"]] = ["forward", "reverse", "js"]
    log_base: Literal["e"] = "e"
    units: Literal["nats"] = "nats"


class VocabularyInfo(_Model):
    """Disclosure 8: how much of the vocabulary entered the sums."""

    reference_vocab_size: int
    candidate_vocab_size: int
    compared_vocab_size: int
    alignment: Literal["identical", "common-prefix"]
    truncation: Literal["full", "top-k", "floor"] = "full"


class PositionsInfo(_Model):
    """Disclosure 6 (the counts; the scheme is in the manifests)."""

    scheme: str
    n_scored: int
    first: int
    last: int
    n_without_next_token: int = Field(description="positions at the end of the text (no Δp/NLL)")


class Aggregation(_Model):
    """Disclosure 9."""

    statistic: Literal["token-mean"] = "token-mean"
    percentiles: list[float]
    output_ranges: list[list[int]] = Field(
        description="buckets [start, end) of position within the context window (tokens of left context)"
    )
    uncertainty_method: Literal["bootstrap", "se-iid"]
    bootstrap: BootstrapOptions


class Perplexity(_Model):
    """Per-token NLL (nats) of the actual next token under each model."""

    mean_nll_ref: float
    mean_nll_cand: float
    ppl_ref: float
    ppl_cand: float
    ln_ppl_ratio: float = Field(description="mean(nll_cand − nll_ref) = ln(PPL_cand/PPL_ref)")
    ln_ppl_ratio_se: float | None
    nll_correlation: float | None = Field(description="Pearson r of the per-token NLLs")


class Numerics(_Model):
    dtype: Literal["float64"] = "float64"
    method: str = "shifted expm1/log1p formulation with Taylor moments for |log(p/q)| < 0.01"
    robust_rows: int = Field(description="rows with -inf (masked) logits or extreme gaps (robust path)")
    threads: int


class CompareResult(_Model):
    """Result of ``kldcard compare``. Divergences in nats; forward = KL(P_ref ‖ P_cand)."""

    format: Literal["kldcard-compare-result"] = RESULT_FORMAT
    format_version: Literal[1] = 1
    kldcard_version: str = __version__
    created_utc: str
    reference_path: str
    candidate_path: str
    reference: CaptureManifest = Field(description="the reference capture's manifest (provenance)")
    candidate: CaptureManifest = Field(description="the candidate capture's manifest (provenance)")
    direction: Direction = Field(default_factory=Direction)
    vocabulary: VocabularyInfo
    positions: PositionsInfo
    aggregation: Aggregation
    forward_kl: Stats
    reverse_kl: Stats
    js: Stats
    top1_agreement: float
    top1_agreement_se: float | None
    delta_p: Stats = Field(description="p_cand − p_ref of the actual next token")
    rms_delta_p: float | None
    rms_delta_p_se: float | None
    perplexity: Perplexity | None
    ranges: list[RangeStats]
    disagreement_runs: Runs
    numerics: Numerics
    portability: list[str] = Field(default_factory=list, description="stack coordinates that differ between "
                                   "the two captures and change arithmetic (the reference is not a fixed target)")
    per_token_file: str | None = None

    def to_card_results(self) -> Results:
        """The card's ``results`` block (kldcard.schema.Results)."""
        for name, st in (("forward", self.forward_kl), ("reverse", self.reverse_kl), ("JS", self.js)):
            if not math.isfinite(st.mean):
                raise InputError(
                    f"{name} KL is infinite at {st.n_infinite} position(s) (a side gives probability 0 to a "
                    "token the other can emit); a card cannot quote a finite mean"
                )
        return Results(
            n_positions=self.positions.n_scored,
            kld=_card_summary(self.forward_kl),
            reverse_kld=_card_summary(self.reverse_kl),
            js=_card_summary(self.js),
            top1_agreement=self.top1_agreement,
            top1_agreement_se=self.top1_agreement_se,
            rms_delta_p=self.rms_delta_p,
            ranges=[
                RangeResult(
                    start=r.start,
                    end=r.end,
                    n=r.n,
                    kld_mean=r.forward_kl.mean,
                    kld_p99=r.forward_kl.percentiles.get("99"),
                    top1_agreement=r.top1_agreement,
                )
                for r in self.ranges
            ],
        )

    def summary_lines(self) -> list[str]:
        """A short labelled text summary (every number says what it is)."""
        v, p, f = self.vocabulary, self.positions, self.forward_kl
        vocab = f"{v.compared_vocab_size:,} entries" + (" (common prefix)" if v.alignment == "common-prefix" else "")
        ci = ""
        if f.ci_low is not None:
            lvl = self.aggregation.bootstrap.level
            ci = f", {lvl:.0%} bootstrap CI [{f.ci_low:.6g}, {f.ci_high:.6g}]"
        se = f" ± {f.se:.3g} (SE)" if f.se is not None else ""
        lines = [
            f"scored {p.n_scored:,} positions ({p.first}..{p.last}), vocabulary {vocab}, float64, nats",
            f"forward KL(P_ref || P_cand): mean {f.mean:.6g}{se}{ci}",
            f"  median {f.median:.6g}, 99% {f.percentiles.get('99', math.nan):.6g}, "
            f"99.9% {f.percentiles.get('99.9', math.nan):.6g}, max {f.max:.6g} nats",
            f"reverse KL(P_cand || P_ref): mean {self.reverse_kl.mean:.6g} nats",
            f"Jensen-Shannon: mean {self.js.mean:.6g} nats",
            f"top-1 agreement: {self.top1_agreement:.4%}"
            + (f" ± {self.top1_agreement_se:.2%}" if self.top1_agreement_se is not None else "")
            + f"; disagreement runs: {self.disagreement_runs.n_runs}, longest {self.disagreement_runs.longest}",
        ]
        if self.rms_delta_p is not None:
            lines.append(f"RMS Δp (p_cand − p_ref of the next token): {self.rms_delta_p:.4%}")
        lines += [f"warning: {m}" for m in self.portability]
        return lines


def _portability(ref: Capture, cand: Capture) -> list[str]:
    """Arithmetic-changing stack differences; the candidate's weights dtype is the quantization under test."""
    from .stack.portability import QUANTIZATION_UNDER_TEST, capture_differences

    if ref.manifest.stack is None or cand.manifest.stack is None:
        return []
    return [d.message for d in capture_differences(ref, cand, ignore=QUANTIZATION_UNDER_TEST)]


def _card_summary(st: Stats) -> Summary:
    return Summary(
        mean=st.mean,
        se=st.se,
        ci_low=st.ci_low,
        ci_high=st.ci_high,
        median=st.median,
        percentiles=dict(st.percentiles),
        min=st.min,
        max=st.max,
    )


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
    threads: int | None = None,
    verify: bool = True,
    progress: Callable[[int], None] | None = None,
    return_per_token: bool = False,
) -> CompareResult | tuple[CompareResult, TokenDivergence]:
    """Compare two captures in float64. Divergences in nats; forward = KL(P_ref ‖ P_cand).

    ``align_vocab="common-prefix"`` compares padded vocabularies over their common prefix (and says
    so in the result). ``buckets``: see :func:`kldcard.summary.bucket_edges`. ``bootstrap`` resamples
    (0 = SE only) at confidence ``level`` with ``seed``. ``progress(n_rows)`` is called as rows finish.
    """
    ref = reference if isinstance(reference, Capture) else open_capture(reference, verify=verify)
    cand = candidate if isinstance(candidate, Capture) else open_capture(candidate, verify=verify)
    n_vocab, alignment = check_comparable(ref, cand, align_vocab)
    threads = threads or default_threads()
    if threads < 1:
        raise UsageError("threads must be >= 1")
    boot = BootstrapOptions(resamples=bootstrap, level=level, seed=seed)
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
        positions=PositionsInfo(
            scheme=ref.manifest.positions.scheme,
            n_scored=len(pos),
            first=int(pos[0]),
            last=int(pos[-1]),
            n_without_next_token=int((~has_next).sum()),
        ),
        aggregation=Aggregation(
            percentiles=percentiles,
            output_ranges=[[a, b] for a, b in zip(edges, edges[1:])],
            uncertainty_method="bootstrap" if boot.resamples else "se-iid",
            bootstrap=boot,
        ),
        forward_kl=summarize(td.forward_kl, percentiles=percentiles, bootstrap=boot),
        reverse_kl=summarize(td.reverse_kl, percentiles=percentiles, bootstrap=boot),
        js=summarize(td.js, percentiles=percentiles, bootstrap=boot),
        top1_agreement=p_agree,
        top1_agreement_se=p_se,
        delta_p=summarize(dp, percentiles=percentiles, bootstrap=BootstrapOptions(resamples=0)),
        rms_delta_p=None if math.isnan(r) else r,
        rms_delta_p_se=r_se,
        perplexity=_perplexity(td.nll_ref[has_next], td.nll_cand[has_next]),
        ranges=range_stats(win, td.forward_kl, td.reverse_kl, td.js, agree, dp, edges, percentiles=percentiles),
        disagreement_runs=disagreement_runs(pos, agree),
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


class _CallableModule(types.ModuleType):
    """``kldcard.compare(...)`` is the public function; importing this module binds the module to
    that name on ``kldcard``, so the module itself is made callable (same as ``kldcard.capture``)."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return compare(*args, **kwargs)


sys.modules[__name__].__class__ = _CallableModule
