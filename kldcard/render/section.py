"""Render the KLD card section (Markdown) from a validated :class:`~kldcard.schema.KldEvaluation`.

The section states the nine disclosures in a table, the results of every candidate (forward
KL(P_ref ‖ P_cand) in nats: mean with its interval, median, percentiles, max; reverse KL and
Jensen-Shannon when measured; top-1 agreement), the results per output range, and the caveats a
reader needs. Rendering is deterministic: fixed number formats (:mod:`kldcard.render.numbers`), no
timestamps, so a rerun on the same results is byte-identical. The disclosures table's rows come from
:mod:`kldcard.render.disclosure_table`.

Every template — the shipped ``kld_section.md.j2`` and a user's ``--template FILE`` — is rendered in a
:class:`jinja2.sandbox.SandboxedEnvironment` with :class:`jinja2.StrictUndefined`: a template cannot
reach ``__class__``/``__globals__`` and a misspelt variable is an error, never an empty string. The
context holds plain dicts and pre-escaped strings (see :func:`section_context`), not live objects.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import jinja2
from jinja2.sandbox import SandboxedEnvironment, SecurityError

from kldcard import __version__
from kldcard.card.model_index import percentile_label, percentile_value
from kldcard.card.numbers import fmt_int, fmt_nats, fmt_percent, md_cell
from kldcard.errors import InputError
from kldcard.render.caveats import on_purpose_text, own_vocabulary_text
from kldcard.render.disclosure_table import DIRECTION_TEXT, stack_text  # noqa: F401  (DIRECTION_TEXT: re-exported as before)
from kldcard.render.disclosure_table import disclosure_rows as _disclosure_rows
from kldcard.render.disclosure_table import pin_text as _pin
from kldcard.render.disclosure_table import same_stack as _same_stack
from kldcard.render.fidelity import fidelity_context
from kldcard.render.depth import depth_context, is_long_context, range_interval_cells
from kldcard.render.uncertainty import (
    comparison_context,
    confidence_rows,
    interval_text,
    n_eff_cell,
    top_k_rows,
)
from kldcard.resources import template_dir
from kldcard.schema import Candidate, KldEvaluation, Summary

__all__ = ["render_section", "section_context", "DEFAULT_TEMPLATE", "SECTION_TITLE"]

DEFAULT_TEMPLATE = "kld_section.md.j2"
SECTION_TITLE = "KL divergence against the reference"


# ---------------------------------------------------------------------------------------------
# Results
# ---------------------------------------------------------------------------------------------


def _opt(x: float | None, what: str) -> str:
    return "n/a" if x is None else fmt_nats(x, what)


def _mean_cell(s: Summary, what: str) -> str:
    mean = fmt_nats(s.mean, what)
    if s.ci_low is not None and s.ci_high is not None:
        return f"{mean} [{fmt_nats(s.ci_low, what)}, {fmt_nats(s.ci_high, what)}]"
    if s.se is not None:
        return f"{mean} ± {fmt_nats(s.se, what)} (SE)"
    return mean


def _candidate_row(c: Candidate, ev: KldEvaluation) -> dict[str, Any]:
    r = c.results
    what = f"candidate {c.name!r}"
    return {
        "name": md_cell(c.name),
        "model": md_cell(_pin(c.model.model, c.model.revision, c.model.sha256)),
        "quantization": md_cell(c.model.quantization),
        "positions": fmt_int(r.n_positions),
        "mean": _mean_cell(r.kld, what),
        "median": _opt(r.kld.median, what),
        "p99": _opt(percentile_value(r.kld, 99.0), what),
        "p99_9": _opt(percentile_value(r.kld, 99.9), what),
        "percentiles": [_opt(percentile_value(r.kld, p), what) for p in sorted(ev.aggregation.percentiles)],
        "max": _opt(r.kld.max, what),
        "reverse_mean": _opt(r.reverse_kld.mean if r.reverse_kld else None, what),
        "js_mean": _opt(r.js.mean if r.js else None, what),
        "top1": fmt_percent(r.top1_agreement, what),
        "n_eff": n_eff_cell(c),
        "confidence": confidence_rows(c),
        "top_k": top_k_rows(c),
        "ranges": [
            {
                "range": f"[{rr.start}, {rr.end})",
                "n": fmt_int(rr.n),
                "mean": fmt_nats(rr.kld_mean, what),
                "p99": _opt(rr.kld_p99, what),
                "top1": "n/a" if rr.top1_agreement is None else fmt_percent(rr.top1_agreement, what),
                **range_interval_cells(rr, what),
            }
            for rr in r.ranges
        ],
    }


def _unranked(ev: KldEvaluation, c: Any) -> bool:
    """True when the card has a paired ranking and ``c`` is not in it."""
    return ev.comparison is not None and c.name not in {e.name for e in ev.comparison.ranking}


def section_context(evaluation: KldEvaluation, *, plot: str | None = None, size_plot: str | None = None
                    ) -> dict[str, Any]:
    """The variables a section template sees. Strings are already Markdown-escaped.

    ``title``, ``kldcard_version``, ``disclosures`` (rows: number, name, value), ``candidates``
    (rows: name, model, quantization, positions, mean, median, p99, p99_9, percentiles[] (in the
    order of ``percentile_labels``, ascending), max, reverse_mean, js_mean, top1, ranges[]),
    ``percentile_labels``, ``more_percentiles`` (percentiles beyond p99/p99.9 exist), ``has_n_eff``,
    ``has_confidence``, ``has_top_k`` (candidate rows then carry n_eff, confidence[], top_k[]),
    ``has_range_ci`` (range rows then carry ci and n_eff), ``long_context`` and ``depth`` (per candidate:
    sentence, test, threshold, clusters[], n_clusters, late_vs_early; :mod:`kldcard.render.depth`),
    ``comparison`` (:func:`kldcard.render.uncertainty.comparison_context` or None), ``cross_stack``
    (names of candidates run on another stack than the reference without saying so), ``cross_stack_on_purpose``
    (one sentence per candidate whose ``cross_stack`` says it was measured across stacks on purpose),
    ``own_vocabulary`` (one per served candidate with its own top-k vocabulary treatment), ``interval`` (how the bracket after the mean
    was computed), ``reference`` (escaped name), ``text_name``, ``n_scored``, ``plot`` (relative path
    or None), ``evaluation`` (the whole validated block as plain JSON-like data), and the fidelity-per-byte
    keys of :func:`kldcard.render.fidelity.fidelity_context` (``summary``, ``sizes``, ``has_sizes``, ``size_plot``).
    """
    ev = evaluation
    return {
        "title": SECTION_TITLE,
        "kldcard_version": __version__,
        "disclosures": _disclosure_rows(ev),
        "candidates": [_candidate_row(c, ev) for c in ev.candidates],
        "percentile_labels": [percentile_label(p) for p in sorted(ev.aggregation.percentiles)],
        "more_percentiles": bool(set(ev.aggregation.percentiles) - {99.0, 99.9}),
        "interval": interval_text(ev.aggregation.uncertainty),
        "has_n_eff": any(c.results.kld.n_eff is not None for c in ev.candidates),
        "has_confidence": any(c.results.confidence for c in ev.candidates),
        "has_top_k": any(c.results.label_in_top_k for c in ev.candidates),
        "comparison": comparison_context(ev),
        "reference": md_cell(f"{ev.reference.model} ({ev.reference.dtype})"),
        "reference_stack": md_cell(stack_text(ev.reference.runtime)),
        "text_name": md_cell(ev.evaluation_text.name),
        "n_scored": fmt_int(ev.positions.n_scored),
        "has_reverse": "reverse" in ev.direction.reported or any(c.results.reverse_kld for c in ev.candidates),
        "has_js": "js" in ev.direction.reported or any(c.results.js for c in ev.candidates),
        "has_ranges": any(c.results.ranges for c in ev.candidates),
        "has_range_ci": any(rr.kld_ci_low is not None for c in ev.candidates for rr in c.results.ranges),
        "long_context": is_long_context(ev),
        "depth": depth_context(ev) if is_long_context(ev) else [],
        "depth_test": next((d["test"] for d in depth_context(ev) if d["test"]), "not run (too few depth points)"),
        "cross_stack": [md_cell(c.name) for c in ev.candidates
                        if not c.cross_stack and not _same_stack(c.runtime, ev.reference.runtime)],
        "cross_stack_on_purpose": [md_cell(on_purpose_text(c, ev.reference.runtime, _unranked(ev, c))) for c in ev.candidates
                                   if c.cross_stack],
        "own_vocabulary": [md_cell(f"{c.name}: {own_vocabulary_text(c)}") for c in ev.candidates if c.vocabulary],
        "vocabulary_caveat": _vocabulary_caveat(ev.vocabulary),
        "plot": md_cell(plot) if plot else None,
        "evaluation": ev.model_dump(mode="json"),
        **fidelity_context(ev, size_plot=size_plot),
    }


# ---------------------------------------------------------------------------------------------
# Templates
# ---------------------------------------------------------------------------------------------


def _environment(search_dir: Path) -> SandboxedEnvironment:
    env = SandboxedEnvironment(
        loader=jinja2.FileSystemLoader(str(search_dir)),
        undefined=jinja2.StrictUndefined,
        autoescape=False,  # Markdown, not HTML; values are escaped by md_cell before they get here
        keep_trailing_newline=True,
        trim_blocks=True,
        lstrip_blocks=True,
    )
    env.filters["md"] = md_cell
    return env


def render_section(
    evaluation: KldEvaluation, *, template: str | Path | None = None, plot: str | None = None,
    size_plot: str | None = None,
) -> str:
    """The Markdown section (LF line endings, ends with one newline) for ``evaluation``.

    ``template`` is a user template file (rendered sandboxed, StrictUndefined); None uses the shipped
    ``templates/kld_section.md.j2``. ``plot`` is the image path to reference, relative to the card, and
    ``size_plot`` the size chart's (KLD against bits per weight).
    Template errors become one-line :class:`InputError` messages naming the file and line.
    """
    if not isinstance(evaluation, KldEvaluation):
        raise TypeError("render_section needs a validated kldcard.schema.KldEvaluation")
    if template is None:
        path = template_dir() / DEFAULT_TEMPLATE
    else:
        path = Path(template)
        if not path.is_file():
            raise InputError(f"{path}: template not found")
    env = _environment(path.resolve().parent)
    context = section_context(evaluation, plot=plot, size_plot=size_plot)
    try:
        text = env.get_template(path.name).render(context)
    except jinja2.TemplateSyntaxError as exc:
        raise InputError(f"{path}:{exc.lineno}: template syntax error: {exc.message}") from None
    except jinja2.UndefinedError as exc:
        raise InputError(f"{path}:{_template_line(exc, path)}: undefined in template: {exc.message}") from None
    except SecurityError as exc:
        raise InputError(f"{path}:{_template_line(exc, path)}: template tried something unsafe: {exc}") from None
    except jinja2.TemplateError as exc:
        raise InputError(f"{path}:{_template_line(exc, path)}: template error: {exc}") from None
    except (TypeError, ValueError, KeyError, IndexError, AttributeError, ZeroDivisionError) as exc:
        raise InputError(f"{path}:{_template_line(exc, path)}: template error: {type(exc).__name__}: {exc}") from None
    text = text.replace("\r\n", "\n").replace("\r", "\n").rstrip("\n") + "\n"
    return text


def _template_line(exc: BaseException, path: Path) -> str:
    """The template line an error was raised on: jinja2 rewrites tracebacks so that frames of a
    compiled template carry the template's file name and line."""
    tb = exc.__traceback__
    line = "?"
    while tb is not None:
        fname = tb.tb_frame.f_code.co_filename
        if fname == "<template>" or Path(fname).name == path.name:
            line = str(tb.tb_lineno)
        tb = tb.tb_next
    return line


# Measured by kldcard on its tiny model that predicts its text (docs/llamacpp.md; random weights,
# whose tails are thinner, gave 1.3e-4 and 5.9e-9): a reference round-tripped through llama.cpp's
# uint16 base-file encoding, decoded with floor entries masked, against the original logits; mean
# per-token forward KL in nats.
BASE_FILE_SELF_KL = {16.0: 1.7e-3, 24.0: 1.5e-8}


def _vocabulary_caveat(voc: Any) -> str | None:
    """The caveat a truncated vocabulary needs: what the truncation cannot resolve."""
    if voc.truncation == "floor":
        floor = float(voc.floor_nats or 0.0)
        self_kl = BASE_FILE_SELF_KL.get(floor)
        measured = (
            f" the same logits round-tripped through that encoding differ from themselves by about "
            f"{self_kl:.1e} nats per token (mean, measured by kldcard), so smaller differences are not resolved"
            if self_kl is not None else ""
        )
        return (f"The reference's log-probabilities were stored with a {floor:g}-nat floor under the "
                f"maximum (llama.cpp's base-file encoding);{measured}.")
    if voc.truncation == "top-k":
        bound = ("a lower bound on the full-vocabulary KL" if voc.tail == "lumped"
                 else "neither a lower nor an upper bound on the full-vocabulary KL")
        return (f"Only the top {voc.top_k} log-probabilities per position were available (tail treatment "
                f"{voc.tail}): the numbers are {bound}; see kldcard's truncation-bias table before comparing "
                "them with full-vocabulary numbers.")
    return None
