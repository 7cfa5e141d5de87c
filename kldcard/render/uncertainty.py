"""The card's words for uncertainty: how each interval was computed, the paired ranking of the
candidates (with what "not distinguishable" means), the excess over a control, and the summaries by
reference confidence and label-in-top-k. Numbers are forward KL(P_ref ‖ P_cand) in nats unless a
row says otherwise; every string is Markdown-escaped here, so templates only place them."""

from __future__ import annotations

from typing import Any

from kldcard.card.numbers import fmt_int, fmt_n_eff, fmt_nats, fmt_percent, fmt_plain, md_cell
from kldcard.schema import (
    BLOCK_METHODS,
    Candidate,
    Comparison,
    KldEvaluation,
    Uncertainty,
)

__all__ = ["comparison_context", "confidence_rows", "interval_text", "n_eff_cell", "top_k_rows", "uncertainty_text"]

NOT_DISTINGUISHABLE = (
    "Two candidates are not distinguishable on this text when the {level}% interval of their paired "
    "difference (mean KLD of one minus the other, position by position, resampled in the same blocks) "
    "contains 0: on these positions the gap between them is within the sampling noise, so this text "
    "does not say which one is closer to the reference. Candidates that share a group letter cannot be "
    "told apart; no adjustment for multiple comparisons is made."
)
CONTROL_CAVEAT = (
    "Excess over the control {control} is each candidate's mean KLD minus the control's on the same "
    "positions, with a paired {level}% interval. It is an estimate of what the quantization adds beyond "
    "the price of the comparison itself: it can be negative, and it is valid only on the control's "
    "stack and this evaluation text."
)


def _level(level: float | None) -> str:
    return fmt_plain(round(100 * (level or 0.0), 6)).removesuffix(".0")


def _signed(x: float, what: str) -> str:
    text = fmt_nats(x, what)
    return text if text.startswith("-") else "+" + text


def uncertainty_text(unc: Uncertainty, n_chunks: int) -> str:
    """The Aggregation row's uncertainty clause (disclosure 9)."""
    boot = f"{fmt_int(unc.resamples or 0)} resamples, seed {unc.seed}"
    kind = f"{unc.interval} " if unc.interval else ""
    if unc.method == "window-bootstrap":
        return (f"{_level(unc.level)}% {kind}block-bootstrap interval resampling whole context windows "
                f"({fmt_int(n_chunks)} windows, {boot})")
    if unc.method == "block-bootstrap":
        rule = (unc.block.length_rule if unc.block else None) or "a data-driven rule"
        return (f"{_level(unc.level)}% {kind}block-bootstrap interval resampling circular moving blocks of "
                f"consecutive positions (length by {rule}, in each candidate's row; {boot})")
    if unc.method == "bootstrap":
        return f"{_level(unc.level)}% bootstrap interval over individual tokens, assumed independent ({boot})"
    if unc.method == "se-iid":
        return "standard error assuming independent tokens" + (f" ({_level(unc.level)}% interval)" if unc.level else "")
    return "none"


def interval_text(unc: Uncertainty) -> str:
    """What the bracket after a mean is."""
    if unc.method in BLOCK_METHODS:
        unit = "context windows" if unc.method == "window-bootstrap" else "moving blocks of positions"
        return (f"{_level(unc.level)}% block-bootstrap interval (resampling {unit}, so tokens that share context "
                "are not counted as independent); the effective sample size says how many independent "
                "tokens the interval is worth")
    if unc.method == "bootstrap":
        return f"{_level(unc.level)}% bootstrap interval (tokens assumed independent)"
    if unc.method == "se-iid":
        return "± standard error (independent tokens assumed)"
    return "no interval"


def n_eff_cell(c: Candidate) -> str:
    k = c.results.kld
    if k.n_eff is None:
        return "n/a"
    blocks = f"; blocks of {fmt_int(k.block_length)}" if k.block_length else ""
    return md_cell(f"{fmt_n_eff(k.n_eff, c.results.n_positions)}{blocks}")


def _n_eff_short(n_eff: float, n: int | None) -> str:
    """The ranking table's effective n: capped at the candidate's positions, with a pointer to why
    (the effective-sample-size table above gives the reason in full)."""
    if n is not None and not (n_eff <= n):
        return f"{fmt_int(n)} (capped at n; see the effective sample sizes)"
    return fmt_int(round(n_eff)) if n_eff == n_eff and abs(n_eff) != float("inf") else "n/a"


def confidence_rows(c: Candidate) -> list[dict[str, str]]:
    what = f"candidate {c.name!r}"
    rows = []
    for b in c.results.confidence:
        last = b.high >= 1.0
        rows.append({
            "bucket": f"[{b.low:g}, {b.high:g}{']' if last else ')'}",
            "n": fmt_int(b.n),
            "mean": "n/a" if b.kld_mean is None else fmt_nats(b.kld_mean, what),
            "top1": "n/a" if b.top1_agreement is None else fmt_percent(b.top1_agreement, what),
        })
    return rows


def top_k_rows(c: Candidate) -> list[dict[str, str]]:
    what = f"candidate {c.name!r}"
    return [{"k": str(t.k), "reference": fmt_percent(t.reference, what), "candidate": fmt_percent(t.candidate, what)}
            for t in c.results.label_in_top_k]


def comparison_context(ev: KldEvaluation) -> dict[str, Any] | None:
    """Rows of the ranking, pairs and control tables, and their explanations; None without a comparison."""
    cmp: Comparison | None = ev.comparison
    if cmp is None:
        return None
    lvl = _level(cmp.level)
    n_of = {c.name: c.results.n_positions for c in ev.candidates}
    ranking = [{
        "rank": str(r.rank),
        "name": md_cell(r.name),
        "mean": fmt_nats(r.kld_mean, r.name),
        "ci": "n/a" if r.ci_low is None or r.ci_high is None
              else f"[{fmt_nats(r.ci_low, r.name)}, {fmt_nats(r.ci_high, r.name)}]",
        "n_eff": "n/a" if r.n_eff is None else md_cell(_n_eff_short(r.n_eff, n_of.get(r.name))),
        "group": r.group,
        "tied": md_cell(", ".join(r.not_distinguishable_from) or "none (distinguishable from all)"),
    } for r in cmp.ranking]
    pairs = [{
        "pair": md_cell(f"{p.b} − {p.a}"),
        "diff": _signed(p.mean_difference, "difference"),
        "ci": f"[{_signed(p.ci_low, 'difference')}, {_signed(p.ci_high, 'difference')}]",
        "verdict": "distinguishable" if p.distinguishable else "not distinguishable",
    } for p in cmp.pairs]
    excess = [{
        "name": md_cell(e.candidate),
        "excess": _signed(e.excess, "excess"),
        "ci": f"[{_signed(e.ci_low, 'excess')}, {_signed(e.ci_high, 'excess')}]",
    } for e in cmp.excess_over_control]
    method = {"window-bootstrap": "whole context windows", "block-bootstrap": "circular moving blocks",
              "bootstrap": "individual tokens (assumed independent)"}[cmp.method]
    return {
        "level": lvl,
        "method": f"paired bootstrap resampling {method}, {fmt_int(cmp.resamples)} resamples, seed {cmp.seed}",
        "ranking": ranking,
        "pairs": pairs,
        "meaning": NOT_DISTINGUISHABLE.format(level=lvl),
        "control": md_cell(cmp.control) if cmp.control else None,
        "excess": excess,
        "control_caveat": CONTROL_CAVEAT.format(control=md_cell(cmp.control), level=lvl) if cmp.control else None,
    }
