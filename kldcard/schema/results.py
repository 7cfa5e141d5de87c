"""Per-candidate results: the summaries of the per-token quantities (nats), the output ranges,
the depth profile, confidence buckets and label-in-top-k."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field

from kldcard.schema.base import ClosedModel, NonNegInt, PosInt


class Summary(ClosedModel):
    """Summary of one per-token quantity (nats for divergences)."""

    mean: float
    se: float | None = Field(None, description="standard error of the mean (i.i.d.)")
    ci_low: float | None = None
    ci_high: float | None = None
    se_block: float | None = Field(None, description="standard error of the mean from the block bootstrap")
    n_eff: float | None = Field(None, description="effective sample size (s²/se_block²) next to n")
    block_length: PosInt | None = Field(None, description="tokens per moving block")
    n_blocks: PosInt | None = Field(None, description="windows resampled, or moving blocks per resample")
    median: float | None = None
    percentiles: dict[str, float] = Field(default_factory=dict, description="'99.9' -> value")
    min: float | None = None
    max: float | None = None


class RangeResult(ClosedModel):
    start: NonNegInt
    end: NonNegInt
    n: NonNegInt
    kld_mean: float
    kld_p99: float | None = None
    top1_agreement: float | None = None
    kld_ci_low: float | None = Field(None, description="interval of kld_mean (level and method: aggregation.uncertainty)")
    kld_ci_high: float | None = None
    n_eff: float | None = Field(None, description="effective sample size of kld_mean (s²/se_block²); above n when "
                                "neighbouring values are anti-correlated")


class DepthOnset(ClosedModel):
    """Where a candidate starts to disagree: the first depth (tokens of left context) at which the
    per-position KLD or top-1 disagreement leaves the band of the early part of the window, by a
    one-sided CUSUM whose threshold is set by block permutations for a stated false-alarm rate."""

    detected: bool
    depth: NonNegInt | None = Field(None, description="tokens of left context where the excursion that raised "
                                    "the alarm began (agreement up to here)")
    alarm_depth: NonNegInt | None = Field(None, description="where the CUSUM crossed its threshold")
    series: Literal["kld", "top1"] | None = Field(None, description="which series crossed first")
    baseline_end: NonNegInt = Field(description="the early part (the band) is depths below this")
    test: str = Field(description="the sequential test, in words")
    false_alarm_rate: float = Field(gt=0, lt=1, description="probability of an alarm on a series with no onset")
    p_value: float | None = Field(None, ge=0, le=1)


class DivergenceCluster(ClosedModel):
    """A run of consecutive scored positions of one window where the top-1 token differs or the KLD
    exceeds the early part's 99th percentile."""

    window: NonNegInt
    start: NonNegInt = Field(description="first position (depth in the window)")
    end: NonNegInt = Field(description="last position (inclusive)")
    n: PosInt = Field(description="scored positions in the run")
    kld_share: float = Field(ge=0, le=1, description="share of the total KLD over all scored positions")


class RangeDifference(ClosedModel):
    """Mean KLD of a late output range minus an early one (nats), with its interval."""

    early: Annotated[list[NonNegInt], Field(min_length=2, max_length=2)]
    late: Annotated[list[NonNegInt], Field(min_length=2, max_length=2)]
    early_mean: float
    late_mean: float
    diff: float
    ci_low: float
    ci_high: float
    level: float = Field(gt=0, lt=1)
    method: str


class DepthProfile(ClosedModel):
    """Where divergence lives along the window: onset, clusters, late against early (nats)."""

    max_depth: NonNegInt = Field(description="deepest scored position in a window")
    onset: DepthOnset | None = Field(None, description="None: too few depth points for the test")
    kld_threshold: float = Field(description="the early part's 99th percentile of KLD (a cluster criterion)")
    n_clusters: NonNegInt
    clusters_share: float = Field(ge=0, le=1, description="share of the total KLD inside clusters")
    n_clusters_after_onset: NonNegInt | None = None
    share_after_onset: float | None = Field(None, ge=0, le=1, description="share of the total KLD in the clusters "
                                            "that start at or after the onset")
    top_clusters: list[DivergenceCluster] = Field(default_factory=list, description="largest shares first")
    late_vs_early: RangeDifference | None = None


class ConfidenceBucket(ClosedModel):
    """Scored positions whose reference top-1 probability lies in [low, high) ([low, 1] for the last)."""

    low: float = Field(ge=0, le=1)
    high: float = Field(ge=0, le=1)
    n: NonNegInt
    kld_mean: float | None = None
    top1_agreement: float | None = None


class TopK(ClosedModel):
    """Label in top-k: share of positions (with a next token) whose actual next token is among the
    k most likely tokens of each side."""

    k: PosInt
    reference: float = Field(ge=0, le=1)
    candidate: float = Field(ge=0, le=1)


class Results(ClosedModel):
    """Per-candidate numbers. All divergences in nats, over the scored positions."""

    n_positions: PosInt
    kld: Summary = Field(description="forward KL(P_ref ‖ P_cand)")
    reverse_kld: Summary | None = Field(None, description="KL(P_cand ‖ P_ref)")
    js: Summary | None = None
    top1_agreement: float = Field(ge=0, le=1)
    top1_agreement_se: float | None = None
    rms_delta_p: float | None = None
    ranges: list[RangeResult] = Field(default_factory=list)
    confidence: list[ConfidenceBucket] = Field(
        default_factory=list, description="the results by the reference's top-1 probability")
    label_in_top_k: list[TopK] = Field(
        default_factory=list, description="share of positions whose actual next token is in each side's top k")
    depth: DepthProfile | None = Field(None, description="onset of disagreement, clusters, late against early ranges")
