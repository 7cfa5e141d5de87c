"""Paired comparison of candidates against one reference: ``kldcard rank``.

Candidates compared with the same reference capture were scored on the same positions, so their
per-position forward KL(P_ref ‖ P_cand) (nats) can be compared position by position. For every pair
the mean difference gets a paired block-bootstrap interval (the same blocks resampled for both:
whole context windows when the capture has >= 20, else circular moving blocks); candidates whose
paired interval contains 0 are not distinguishable on this text. A candidate marked ``control``
(e.g. the reference weights run on the candidates' stack) measures the price of the comparison
itself; each other candidate's excess over it is an estimate, can be negative, and is valid only on
the control's stack and this text.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import datetime, timezone
from pathlib import Path
from typing import Literal

import numpy as np
from pydantic import Field

from kldcard.compare.pareto import pareto_standing
from kldcard.compare.ranking import paired_difference_ci, rank_candidates
from kldcard.compare.result import UNCERTAINTY_METHODS, CompareResult
from kldcard.compare.run import window_ids
from kldcard.compare.summary import BootstrapOptions, resolved_method
from kldcard.errors import InputError, UsageError
from kldcard.schema import Comparison, RecordModel

__all__ = ["RANK_FORMAT", "RankResult", "candidate_label", "rank_results"]

RANK_FORMAT = "kldcard-ranking"


def candidate_label(result: CompareResult) -> str:
    """A candidate's name in the ranking and the card: its model file or directory name without .gguf."""
    name = Path(result.candidate.model.name.rstrip("/")).name
    return name[: -len(".gguf")] if name.lower().endswith(".gguf") else name


class RankedCandidate(RecordModel):
    rank: int
    name: str
    result_path: str | None = None
    mean: float = Field(description="mean forward KL(P_ref ‖ P_cand), nats")
    ci_low: float
    ci_high: float
    n_eff: float | None
    group: str = Field(description="compact letter display: a shared letter = not distinguishable")
    not_distinguishable_from: list[str]
    bits_per_weight: float | None = Field(None, description="from the model's own tables (None: unknown)")
    bytes: int | None = Field(None, description="model files on disk")
    pareto: str | None = Field(None, description="front | behind | dominated | no size (kldcard.compare.pareto)")
    dominated_by: list[str] = Field(default_factory=list, description="smaller candidates distinguishably closer "
                                    "to the reference (for 'behind': smaller or equal and closer, not distinguishably)")


class RankedPair(RecordModel):
    a: str
    b: str
    mean_difference: float = Field(description="mean(KLD_b − KLD_a) over the same positions, nats")
    ci_low: float
    ci_high: float
    distinguishable: bool
    block_length: int | None = None
    n_blocks: int | None = None


class Excess(RecordModel):
    candidate: str
    excess: float = Field(description="mean(KLD_candidate − KLD_control), nats; an estimate, can be negative")
    ci_low: float
    ci_high: float


class RankResult(RecordModel):
    """What ``kldcard rank`` writes; ``render`` turns it into the card's ``comparison`` block."""

    format: Literal["kldcard-ranking"] = RANK_FORMAT
    format_version: Literal[1] = 1
    created_utc: str
    reference_path: str
    n_positions: int
    uncertainty_method: Literal["window-bootstrap", "block-bootstrap", "bootstrap"]
    bootstrap: BootstrapOptions
    ranking: list[RankedCandidate]
    pairs: list[RankedPair]
    control: str | None = None
    excess_over_control: list[Excess] = Field(default_factory=list)

    def to_card_comparison(self) -> Comparison:
        b = self.bootstrap
        return Comparison.model_validate({
            "method": self.uncertainty_method, "level": b.level, "resamples": b.resamples, "seed": b.seed,
            "ranking": [{"rank": r.rank, "name": r.name, "kld_mean": r.mean, "ci_low": r.ci_low, "ci_high": r.ci_high,
                         "n_eff": r.n_eff, "group": r.group, "not_distinguishable_from": r.not_distinguishable_from}
                        for r in self.ranking],
            "pairs": [{"a": p.a, "b": p.b, "mean_difference": p.mean_difference, "ci_low": p.ci_low,
                       "ci_high": p.ci_high, "distinguishable": p.distinguishable} for p in self.pairs],
            "control": self.control,
            "excess_over_control": [e.model_dump() for e in self.excess_over_control],
        })

    def summary_lines(self) -> list[str]:
        lvl = f"{self.bootstrap.level:.0%}"
        lines = [f"mean forward KL(P_ref || P_cand), nats, {self.n_positions:,} positions, {lvl} "
                 f"{self.uncertainty_method} intervals; a shared group letter = not distinguishable on this text"]
        for r in self.ranking:
            lines.append(f"  {r.rank}. {r.name}: {r.mean:.6g} [{r.ci_low:.6g}, {r.ci_high:.6g}] group {r.group}"
                         + (f", not distinguishable from {', '.join(r.not_distinguishable_from)}"
                            if r.not_distinguishable_from else ""))
        for r in self.ranking:
            if r.pareto == "dominated":
                lines.append(f"  {r.name} ({r.bits_per_weight:.2f} bits per weight) is dominated: "
                             f"{', '.join(r.dominated_by)} {'is' if len(r.dominated_by) == 1 else 'are'} smaller "
                             "and distinguishably closer to the reference")
        fronts = [r.name for r in self.ranking if r.pareto == "front"]
        if fronts:
            lines.append(f"  on the size/KLD Pareto front (bits per weight vs mean KLD): {', '.join(fronts)}")
        for e in self.excess_over_control:
            lines.append(f"  excess of {e.candidate} over control {self.control}: {e.excess:+.6g} "
                         f"[{e.ci_low:+.6g}, {e.ci_high:+.6g}] (estimate; same stack and text only)")
        return lines


def rank_results(
    results: Sequence[CompareResult],
    per_token: Sequence[Mapping[str, np.ndarray]],
    *,
    control: str | None = None,
    bootstrap: BootstrapOptions | None = None,
    paths: Sequence[str | None] | None = None,
) -> RankResult:
    """Rank candidates of one reference on the same positions. ``per_token[i]``: columns ``position``
    and ``forward_kl`` (KL(P_ref ‖ P_cand), nats) of ``results[i]``, as ``kldcard compare --per-token``
    writes them (or :meth:`TokenDivergence.columns`)."""
    if len(results) < 2:
        raise UsageError("a ranking needs at least two candidates")
    if len(per_token) != len(results):
        raise UsageError(f"{len(per_token)} per-token series for {len(results)} results")
    first = results[0]
    for r in results[1:]:
        if (r.reference.token_ids_sha256, r.reference.positions_sha256) != (
                first.reference.token_ids_sha256, first.reference.positions_sha256):
            raise InputError(f"{r.candidate_path!r} and {first.candidate_path!r} were not compared with the same "
                             "reference tokens and positions; a paired comparison needs the same positions")
    names = [candidate_label(r) for r in results]
    if len(set(names)) != len(names):
        raise InputError(f"candidate names repeat ({', '.join(names)}); rename the model files")
    if control is not None and control not in names:
        raise UsageError(f"--control {control!r} is not one of the candidates ({', '.join(names)})")
    values = {}
    positions = np.asarray(per_token[0]["position"], dtype=np.int64)
    for name, r, cols in zip(names, results, per_token):
        x = np.asarray(cols["forward_kl"], dtype=np.float64)
        if not np.array_equal(np.asarray(cols["position"], dtype=np.int64), positions):
            raise InputError(f"{name}: its per-token positions differ from {names[0]}'s; not the same positions")
        if len(x) != r.positions.n_scored:
            raise InputError(f"{name}: {len(x)} per-token values for {r.positions.n_scored} scored positions")
        if not np.all(np.isfinite(x)):
            raise InputError(f"{name}: infinite forward KL at some position; a mean cannot be ranked")
        values[name] = x
    opts = bootstrap or BootstrapOptions()
    if opts.resamples < 2:
        raise UsageError("a ranking needs bootstrap resamples (>= 2)")
    blocks = window_ids(positions, first.reference.context)
    method = resolved_method(opts, blocks)
    kw = dict(resamples=opts.resamples, seed=opts.seed, method=opts.method, interval=opts.interval,
              min_clusters=opts.min_windows)
    r = rank_candidates(values, blocks, level=opts.level, **kw)
    d = r.to_dict()
    path_of = dict(zip(names, paths or [None] * len(names)))
    ranking = [RankedCandidate(rank=c["rank"], name=c["name"], result_path=path_of[c["name"]], mean=c["mean"],
                               ci_low=c["ci"][0], ci_high=c["ci"][1],
                               n_eff=c["n_eff"] if np.isfinite(c["n_eff"]) and method != "iid" else None,
                               group=c["groups"], not_distinguishable_from=c["indistinguishable_from"])
               for c in d["candidates"]]
    pairs = [RankedPair(a=p.a, b=p.b, mean_difference=p.estimate, ci_low=p.lo, ci_high=p.hi,
                        distinguishable=p.excludes_zero, block_length=p.ci.block_length, n_blocks=p.ci.n_blocks)
             for p in r.pairs]
    size_of = {name: res.candidate.model.size for name, res in zip(names, results)}
    standing = pareto_standing({n: s.bits_per_weight if s else None for n, s in size_of.items()},
                               {c.name: c.mean for c in ranking}, [(p.a, p.b, p.ci_low, p.ci_high) for p in pairs])
    for c in ranking:
        size = size_of[c.name]
        c.bits_per_weight, c.bytes = (size.bits_per_weight, size.bytes) if size else (None, None)
        c.pareto, c.dominated_by = standing[c.name].status, standing[c.name].by
    excess = []
    if control is not None:
        for name in names:
            if name != control:
                p = paired_difference_ci(values[control], values[name], blocks=blocks, names=(control, name),
                                         level=opts.level, **kw)
                excess.append(Excess(candidate=name, excess=p.estimate, ci_low=p.lo, ci_high=p.hi))
    return RankResult(
        created_utc=datetime.now(timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ"),
        reference_path=first.reference_path, n_positions=first.positions.n_scored,
        uncertainty_method=UNCERTAINTY_METHODS[method], bootstrap=opts, ranking=ranking, pairs=pairs,
        control=control, excess_over_control=excess,
    )
