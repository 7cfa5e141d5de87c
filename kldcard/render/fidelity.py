"""Fidelity per byte in the card: the summary a user acts on, the size table with its Pareto column,
and the points of the size chart. Sizes come from each candidate's ``model.size`` (read from the file's
own tables); standings from :func:`kldcard.compare.pareto.pareto_standing` over the paired comparison.
Every string is Markdown-escaped here; divergences are forward KL(P_ref ‖ P_cand) in nats."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kldcard.card.model_index import percentile_value
from kldcard.card.numbers import fmt_int, fmt_nats, fmt_percent, md_cell
from kldcard.compare.pareto import Standing, pareto_standing
from kldcard.schema import Candidate, KldEvaluation

__all__ = ["SIZE_CLASSES", "fmt_bytes", "size_points", "standings", "summary_lines", "size_rows"]

# (upper bound in bits per weight, label): a user chooses within a budget, so the best candidate is named
# per class rather than overall (the overall closest is always the largest).
SIZE_CLASSES = ((3.0, "under 3 bits per weight"), (5.0, "3 to 5 bits per weight"), (7.0, "5 to 7 bits per weight"),
                (9.0, "7 to 9 bits per weight"), (float("inf"), "9 bits per weight and more"))

SUMMARY_MEANING = (
    "\"Not distinguishable\" means the {level}% interval of two candidates' paired difference in mean KLD "
    "(position by position, on these {n} positions) contains 0: this text cannot say which of them is "
    "closer to the reference, and a longer or more varied text might."
)


def fmt_bytes(n: int) -> str:
    """``27.6 MiB`` / ``4.37 GiB`` (binary units, as file managers on Linux and the Hub's file list use)."""
    for unit, scale in (("GiB", 2**30), ("MiB", 2**20), ("KiB", 2**10)):
        if n >= scale:
            value = n / scale
            return f"{value:.3g} {unit}" if value < 100 else f"{value:.0f} {unit}"
    return f"{fmt_int(n)} bytes"


def _bits(c: Candidate) -> float | None:
    return c.model.size.bits_per_weight if c.model.size else None


def _ranked(ev: KldEvaluation) -> list[Candidate]:
    """The candidates the size comparison is about: those on the reference's stack (one measured across
    stacks on purpose carries the stack difference in its KLD)."""
    return [c for c in ev.candidates if not c.cross_stack]


def standings(ev: KldEvaluation) -> dict[str, Standing]:
    """Each same-stack candidate's standing (front / behind / dominated / no size)."""
    pairs = [(p.a, p.b, p.ci_low, p.ci_high) for p in ev.comparison.pairs] if ev.comparison else []
    cands = _ranked(ev)
    return pareto_standing({c.name: _bits(c) for c in cands}, {c.name: c.results.kld.mean for c in cands}, pairs)


def size_rows(ev: KldEvaluation, standing: dict[str, Standing]) -> list[dict[str, str]]:
    rows = []
    for c in ev.candidates:
        what = f"candidate {c.name!r}"
        size = c.model.size
        p99 = percentile_value(c.results.kld, 99.0)
        rows.append({
            "name": md_cell(c.name),
            "quantization": md_cell(c.model.quantization),
            "bits": "n/a" if size is None else f"{size.bits_per_weight:.2f}",
            "bytes": "n/a" if size is None else f"{fmt_bytes(size.bytes)} ({fmt_int(size.bytes)} bytes)",
            "mean": fmt_nats(c.results.kld.mean, what),
            "p99": "n/a" if p99 is None else fmt_nats(p99, what),
            "pareto": "n/a (measured across stacks)" if c.cross_stack else md_cell(standing[c.name].text()),
        })
    return rows


def _interval(c: Candidate) -> str:
    k, what = c.results.kld, f"candidate {c.name!r}"
    if k.ci_low is None or k.ci_high is None:
        return ""
    return f" [{fmt_nats(k.ci_low, what)}, {fmt_nats(k.ci_high, what)}]"


def summary_lines(ev: KldEvaluation, standing: dict[str, Standing], level: str) -> list[str]:
    """Bullets (Markdown, escaped) opening the section: the closest candidate per size class, which
    candidates are dominated, and what "not distinguishable" means here."""
    cands = _ranked(ev)
    tied = {r.name: r.not_distinguishable_from for r in ev.comparison.ranking} if ev.comparison else {}
    lines = []
    classes: dict[str, list[Candidate]] = {}
    for c in cands:
        bits = _bits(c)
        label = "size unknown" if bits is None else next(lab for top, lab in SIZE_CLASSES if bits < top)
        classes.setdefault(label, []).append(c)
    order = [lab for _, lab in SIZE_CLASSES] + ["size unknown"]
    for label in sorted(classes, key=order.index):
        best = min(classes[label], key=lambda c: c.results.kld.mean)
        what = f"candidate {best.name!r}"
        size = best.model.size
        where = f" ({size.bits_per_weight:.2f} bits per weight, {fmt_bytes(size.bytes)})" if size else ""
        same = [n for n in tied.get(best.name, []) if n in {c.name for c in classes[label]}]
        note = f"; not distinguishable from {', '.join(same)}" if same else ""
        lines.append(f"**{label.capitalize()}**: best here {md_cell(best.name)}{md_cell(where)}, mean KLD "
                     f"{fmt_nats(best.results.kld.mean, what)} nats{_interval(best)}, top-1 agreement "
                     f"{fmt_percent(best.results.top1_agreement, what)}%{md_cell(note)}.")
    dominated = [(n, s) for n, s in standing.items() if s.status == "dominated"]
    if dominated:
        for n, s in dominated:
            lines.append(md_cell(f"{n} is dominated: {', '.join(s.by)} {'is' if len(s.by) == 1 else 'are'} smaller "
                                 "and distinguishably closer to the reference, so there is no reason to pick it."))
    elif any(s.status != "no size" for s in standing.values()) and len(cands) > 1:
        lines.append("No candidate is dominated: no smaller candidate is distinguishably closer to the reference.")
    if ev.comparison is not None:
        lines.append(md_cell(SUMMARY_MEANING.format(level=level, n=fmt_int(ev.positions.n_scored))))
    lines.append("These numbers hold for this reference, stack and text only (the disclosure table below says "
                 "which); a card measured otherwise is not comparable with them.")
    return lines


@dataclass(frozen=True)
class SizePoint:
    """One candidate on the size chart (:mod:`kldcard.render.size_plot` draws them)."""

    name: str
    bits_per_weight: float
    mean: float  # nats
    ci_low: float | None
    ci_high: float | None
    p99: float | None
    front: bool
    cross_stack: bool = False


def size_points(ev: KldEvaluation, standing: dict[str, Standing]) -> list[SizePoint]:
    """The size chart's points, candidates with a size only."""
    return [SizePoint(c.name, c.model.size.bits_per_weight, c.results.kld.mean, c.results.kld.ci_low,
                      c.results.kld.ci_high, percentile_value(c.results.kld, 99.0),
                      front=not c.cross_stack and standing.get(c.name, Standing("no size")).status == "front",
                      cross_stack=c.cross_stack is not None)
            for c in ev.candidates if c.model.size is not None]


def fidelity_context(ev: KldEvaluation, *, size_plot: str | None = None) -> dict[str, Any]:
    """The section template's ``summary`` (bullets), ``sizes`` (rows: name, quantization, bits, bytes,
    mean, p99, pareto), ``has_sizes`` and ``size_plot`` (the chart's path relative to the card, or None)."""
    from kldcard.card.numbers import fmt_plain

    standing = standings(ev)
    level = fmt_plain(round(100 * (ev.comparison.level if ev.comparison else 0.95), 6)).removesuffix(".0")
    return {
        "summary": summary_lines(ev, standing, level),
        "sizes": size_rows(ev, standing),
        "has_sizes": any(c.model.size is not None for c in ev.candidates),
        "size_plot": md_cell(size_plot) if size_plot else None,
    }
