"""The compare result: what ``kldcard compare`` writes and render reads (pydantic models, JSON Schema
``schemas/compare-result.schema.json``). Divergences in nats; forward = KL(P_ref ‖ P_cand)."""

from __future__ import annotations

import math
from typing import Any, Literal

from pydantic import Field, model_validator

from kldcard import __version__
from kldcard.capture.manifest import CaptureManifest
from kldcard.card.numbers import fmt_n_eff
from kldcard.compare.confidence import ConfidenceStats, TopKStats
from kldcard.compare.summary import BootstrapOptions, RangeStats, Runs, Stats
from kldcard.errors import InputError
from kldcard.schema import ConfidenceBucket, DepthProfile, RangeResult, RecordModel, Results, Summary, TopK

RESULT_FORMAT = "kldcard-compare-result"
FORWARD = "KL(P_ref || P_cand)"


class Direction(RecordModel):
    """Disclosure 7: what each number is."""

    forward: str = FORWARD
    reverse: str = "KL(P_cand || P_ref)"
    js: str = "Jensen-Shannon divergence, mixture M = (P_ref + P_cand)/2"
    reported: list[Literal["forward", "reverse", "js"]] = ["forward", "reverse", "js"]
    log_base: Literal["e"] = "e"
    units: Literal["nats"] = "nats"


class VocabularyInfo(RecordModel):
    """Disclosure 8: how much of the vocabulary entered the sums."""

    reference_vocab_size: int
    candidate_vocab_size: int
    compared_vocab_size: int
    alignment: Literal["identical", "common-prefix"]
    truncation: Literal["full", "top-k", "floor"] = "full"


class ScoredPositions(RecordModel):
    """Disclosure 6 (the counts; the scheme is in the manifests)."""

    scheme: str
    n_scored: int
    first: int
    last: int
    n_without_next_token: int = Field(description="positions at the end of the text (no Δp/NLL)")


UNCERTAINTY_METHODS = {"cluster": "window-bootstrap", "circular-block": "block-bootstrap", "iid": "bootstrap"}
"""Bootstrap method -> the name the result and the card use (``bootstrap`` keeps its 0.1 meaning:
per-token, tokens assumed independent)."""


class ResultAggregation(RecordModel):
    """Disclosure 9."""

    statistic: Literal["token-mean"] = "token-mean"
    percentiles: list[float]
    output_ranges: list[list[int]] = Field(
        description="buckets [start, end) of position within the context window (tokens of left context)"
    )
    uncertainty_method: Literal["window-bootstrap", "block-bootstrap", "bootstrap", "se-iid"] = Field(
        description="window-bootstrap: whole context windows resampled; block-bootstrap: circular moving "
        "blocks of a data-driven length; bootstrap: individual tokens (assumed independent); se-iid: SE only"
    )
    bootstrap: BootstrapOptions
    n_windows: int | None = Field(None, description="context windows the scored positions fall in "
                                  "(window id = position // stride); absent in format_version 1")

    @model_validator(mode="before")
    @classmethod
    def _version_1(cls, data: Any) -> Any:
        # format_version 1 had only the per-token bootstrap; its options carry no method
        if isinstance(data, dict) and isinstance(data.get("bootstrap"), dict) and "method" not in data["bootstrap"]:
            data = {**data, "bootstrap": {**data["bootstrap"], "method": "iid", "interval": "percentile"}}
        return data


class Perplexity(RecordModel):
    """Per-token NLL (nats) of the actual next token under each model."""

    mean_nll_ref: float
    mean_nll_cand: float
    ppl_ref: float
    ppl_cand: float
    ln_ppl_ratio: float = Field(description="mean(nll_cand − nll_ref) = ln(PPL_cand/PPL_ref)")
    ln_ppl_ratio_se: float | None
    nll_correlation: float | None = Field(description="Pearson r of the per-token NLLs")


class Numerics(RecordModel):
    dtype: Literal["float64"] = "float64"
    method: str = "shifted expm1/log1p formulation with Taylor moments for |log(p/q)| < 0.01"
    robust_rows: int = Field(description="rows with -inf (masked) logits or extreme gaps (robust path)")
    threads: int


class CompareResult(RecordModel):
    """Result of ``kldcard compare``. Divergences in nats; forward = KL(P_ref ‖ P_cand)."""

    format: Literal["kldcard-compare-result"] = RESULT_FORMAT
    format_version: Literal[1, 2] = Field(2, description="2 adds block uncertainty (n_eff, blocks), "
                                          "confidence buckets and label-in-top-k; version 1 files still load")
    kldcard_version: str = __version__
    created_utc: str
    reference_path: str
    candidate_path: str
    reference: CaptureManifest = Field(description="the reference capture's manifest (provenance)")
    candidate: CaptureManifest = Field(description="the candidate capture's manifest (provenance)")
    direction: Direction = Field(default_factory=Direction)
    vocabulary: VocabularyInfo
    positions: ScoredPositions
    aggregation: ResultAggregation
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
    confidence: list[ConfidenceStats] = Field(default_factory=list, description="by the reference's top-1 "
                                              "probability (absent in format_version 1)")
    label_in_top_k: list[TopKStats] = Field(default_factory=list, description="k = 1..5 (absent in format_version 1)")
    disagreement_runs: Runs
    depth: DepthProfile | None = Field(None, description="onset of disagreement along the window, its clusters, "
                                       "late against early output range (absent in older results)")
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
                    kld_ci_low=r.forward_kl.ci_low,
                    kld_ci_high=r.forward_kl.ci_high,
                    n_eff=r.forward_kl.n_eff,
                )
                for r in self.ranges
            ],
            depth=self.depth,
            confidence=[ConfidenceBucket(low=b.low, high=b.high, n=b.n, kld_mean=b.forward_kl_mean,
                                         top1_agreement=b.top1_agreement) for b in self.confidence],
            label_in_top_k=[TopK(k=t.k, reference=t.reference, candidate=t.candidate) for t in self.label_in_top_k],
        )

    def summary_lines(self) -> list[str]:
        """A short labelled text summary (every number says what it is)."""
        v, p, f = self.vocabulary, self.positions, self.forward_kl
        vocab = f"{v.compared_vocab_size:,} entries" + (" (common prefix)" if v.alignment == "common-prefix" else "")
        ci = ""
        if f.ci_low is not None:
            lvl = self.aggregation.bootstrap.level
            ci = f", {lvl:.0%} {self.aggregation.uncertainty_method} CI [{f.ci_low:.6g}, {f.ci_high:.6g}]"
            if f.n_eff is not None:
                ci += f", n_eff {fmt_n_eff(f.n_eff, f.n)}"
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


def _card_summary(st: Stats) -> Summary:
    return Summary(
        mean=st.mean,
        se=st.se,
        ci_low=st.ci_low,
        ci_high=st.ci_high,
        se_block=st.se_block,
        n_eff=st.n_eff,
        block_length=st.block_length,
        n_blocks=st.n_blocks,
        median=st.median,
        percentiles=dict(st.percentiles),
        min=st.min,
        max=st.max,
    )
