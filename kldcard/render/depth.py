"""The card's long-context text: where a candidate starts to disagree and where its divergence is.

Reads :class:`~kldcard.schema.DepthProfile` (computed by :mod:`kldcard.compare.depth`) and the
interval of each output range; every figure says what it is (forward KL(P_ref ‖ P_cand), nats; an
interval with its level and method; an effective n never shown above n without saying why).
"""

from __future__ import annotations

from typing import Any

from kldcard.card.numbers import fmt_int, fmt_nats, md_cell
from kldcard.schema import Candidate, DepthProfile, KldEvaluation, RangeResult

__all__ = ["LONG_CONTEXT", "depth_context", "is_long_context", "onset_words", "range_interval_cells"]

LONG_CONTEXT = 2048
"""Windows at least this deep (tokens of left context) get the long-context presentation: the depth
plot, the onset sentence and the clusters."""


def is_long_context(ev: KldEvaluation) -> bool:
    """True when a candidate's windows reach :data:`LONG_CONTEXT` tokens and its profile was measured."""
    return any(c.results.depth is not None and c.results.depth.max_depth + 1 >= LONG_CONTEXT for c in ev.candidates)


def _about(x: int) -> str:
    """A depth rounded to two significant figures for prose (6,143 -> 6,100)."""
    if x < 100:
        return f"{x:,}"
    mag = 10 ** (len(str(x)) - 2)
    return f"{round(x / mag) * mag:,}"


def onset_words(p: DepthProfile) -> str:
    """One sentence: up to where the candidate agrees, and how much of its divergence the clusters hold."""
    o = p.onset
    if o is None:
        return (f"too few depth points for the onset test; {p.n_clusters:,} cluster(s) hold "
                f"{p.clusters_share:.0%} of the divergence")
    if not o.detected:
        return (f"no onset of disagreement: per-position KLD and top-1 disagreement stay in the band of the "
                f"first {o.baseline_end:,} tokens up to {p.max_depth:,} tokens ({o.false_alarm_rate:.0%} "
                f"false-alarm test); {p.n_clusters:,} cluster(s) hold {p.clusters_share:.0%} of the divergence")
    what = "per-position KLD" if o.series == "kld" else "top-1 disagreement"
    return (f"agrees with the reference up to about {_about(o.depth or 0)} tokens (where {what} leaves the "
            f"band of the first {o.baseline_end:,} tokens; {o.false_alarm_rate:.0%} false-alarm test); from there "
            f"{p.n_clusters_after_onset or 0:,} cluster(s) hold {p.share_after_onset or 0.0:.0%} of the divergence")


def n_eff_text(n_eff: float | None, n: int) -> str:
    """An effective n next to n; an estimate above n (neighbours anti-correlated, or the bootstrap's own
    noise on a short range) is shown as n and says so."""
    if n_eff is None:
        return "n/a"
    if n_eff > n:
        return f"{fmt_int(n)} of {fmt_int(n)} (estimate {fmt_int(round(n_eff))}: no positive dependence found, capped at n)"
    return f"{fmt_int(round(n_eff))} of {fmt_int(n)}"


def range_interval_cells(rr: RangeResult, what: str) -> dict[str, str]:
    """The interval and effective-n cells of one output-range row (older results: n/a)."""
    ci = "n/a" if rr.kld_ci_low is None or rr.kld_ci_high is None else \
        f"[{fmt_nats(rr.kld_ci_low, what)}, {fmt_nats(rr.kld_ci_high, what)}]"
    return {"ci": md_cell(ci), "n_eff": md_cell(n_eff_text(rr.n_eff, rr.n))}


def _candidate_depth(c: Candidate) -> dict[str, Any] | None:
    p = c.results.depth
    if p is None:
        return None
    what = f"candidate {c.name!r}"
    le = p.late_vs_early
    late = None
    if le is not None:
        late = {
            "late": f"[{le.late[0]}, {le.late[1]})", "early": f"[{le.early[0]}, {le.early[1]})",
            "late_mean": fmt_nats(le.late_mean, what), "early_mean": fmt_nats(le.early_mean, what),
            "diff": fmt_nats(le.diff, what), "ci": f"[{fmt_nats(le.ci_low, what)}, {fmt_nats(le.ci_high, what)}]",
            "level": f"{le.level:.0%}", "method": md_cell(le.method),
            "verdict": "larger late" if le.ci_low > 0 else ("smaller late" if le.ci_high < 0 else "not distinguishable"),
        }
    return {
        "name": md_cell(c.name),
        "sentence": md_cell(onset_words(p)),
        "test": md_cell(p.onset.test) if p.onset is not None else None,
        "threshold": fmt_nats(p.kld_threshold, what),
        "clusters": [{"window": str(k.window), "start": fmt_int(k.start), "end": fmt_int(k.end), "n": fmt_int(k.n),
                      "share": f"{k.kld_share:.1%}"} for k in p.top_clusters],
        "n_clusters": fmt_int(p.n_clusters),
        "late_vs_early": late,
    }


def depth_context(ev: KldEvaluation) -> list[dict[str, Any]]:
    """Per candidate with a depth profile: its sentence, top clusters and late-against-early row."""
    return [d for d in (_candidate_depth(c) for c in ev.candidates) if d is not None]
