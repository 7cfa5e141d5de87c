"""The reading of a card's ``kld_evaluation`` block, per candidate: the same types the prose reader
fills (:mod:`kldcard.lint.reading`), so that a block's numbers and a prose card's numbers can be put
side by side (``kldcard comparable``, KLD212).

The block is read as the raw mapping (a block that does not validate still says what it says; what it
leaves out is ``missing``), with a compact block's ``runtime_changes`` applied. Evidence is the JSON
pointer into the front matter, with its line. The candidate's number is ``results.kld``: forward
KL(P_ref ‖ P_cand), nats.
"""

from __future__ import annotations

from typing import Any

from kldcard.card.document import Card
from kldcard.lint.placeholders import is_todo
from kldcard.lint.reading import DISCLOSURES, DisclosureReading, Evidence
from kldcard.lint.structured import pointer_of

__all__ = ["block_readings", "reading"]


def _map(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def _scalar(x: Any) -> Any:
    return x if isinstance(x, (str, int, float, bool)) else None


def reading(n: int, value: dict[str, Any], evidence: tuple[Evidence, ...] = (), *,
            complete: tuple[str, ...] = ()) -> DisclosureReading:
    """A reading of disclosure ``n`` from ``value`` (None values dropped): ``missing`` when empty,
    ``stated`` when every key of ``complete`` is there, ``incomplete`` otherwise."""
    # a scaffold's placeholder ("TODO: ...") says nothing yet: it is not a value to compare
    value = {k: v for k, v in value.items() if v is not None and not is_todo(v)}
    if not value:
        return DisclosureReading(n, "missing", {}, evidence, (f"the {DISCLOSURES[n]}",))
    lacking = tuple(k for k in complete if k not in value)
    return DisclosureReading(n, "incomplete" if lacking else "stated", value, evidence, lacking)


def block_readings(card: Card, block: dict[str, Any], i: int) -> dict[int, DisclosureReading]:
    """D1–D9 of candidate ``i`` of ``block`` (the raw mapping, with
    :func:`kldcard.schema.expand_runtime_changes` applied)."""
    cand = _map(_map_list(block.get("candidates"), i))

    def ev(*parts: object) -> tuple[Evidence, ...]:
        ptr = pointer_of("kld_evaluation", *parts)
        line, col = card.locate(ptr)
        return (Evidence(text=ptr, line=line, column=col, key=ptr),)

    ref, text = _map(block.get("reference")), _map(block.get("evaluation_text"))
    ctx, pos = _map(block.get("context")), _map(block.get("positions"))
    direc, agg = _map(block.get("direction")), _map(block.get("aggregation"))
    vocab_at = ("candidates", i, "vocabulary") if isinstance(cand.get("vocabulary"), dict) else ("vocabulary",)
    vocab = _map(cand.get("vocabulary")) if isinstance(cand.get("vocabulary"), dict) else _map(block.get("vocabulary"))
    run, ref_run = _map(cand.get("runtime")), _map(ref.get("runtime"))
    cal = _map(cand.get("calibration"))
    src = _map(text.get("source"))
    scheme = _scalar(pos.get("scheme"))
    if scheme == "every-n" and pos.get("every_n"):
        scheme = f"every:{pos['every_n']}"
    reported = direc.get("reported") if isinstance(direc.get("reported"), list) else []
    engine = _scalar(run.get("engine"))
    if engine and ref_run.get("engine") and ref_run.get("engine") != engine:
        engine = f"{ref_run['engine']} (reference) / {engine}"
    return {
        1: reading(1, {"repo": _scalar(ref.get("model")), "revision": _scalar(ref.get("revision") or ref.get("sha256")),
                       "dtype": _scalar(ref.get("dtype"))}, ev("reference"), complete=("repo", "revision", "dtype")),
        2: reading(2, {"engine": engine, "version": _scalar(run.get("engine_version")),
                       "backend": _scalar(run.get("backend")), "device": _scalar(run.get("device"))},
                   ev("candidates", i, "runtime" if "runtime" in cand else "runtime_changes"),
                   complete=("engine", "version")),
        3: reading(3, {"name": _scalar(text.get("name")),
                       "source": _scalar(src.get("dataset") or src.get("url") or src.get("repo_file")),
                       "sha256": _scalar(text.get("sha256")), "tokens": _scalar(text.get("n_tokens")),
                       "chat_template": _scalar(text.get("chat_template"))},
                   ev("evaluation_text"), complete=("name", "source", "sha256")),
        4: reading(4, {"none": True if cal.get("none") is True else None, "dataset": _scalar(cal.get("dataset")),
                       "size": _scalar(cal.get("n_tokens")), "overlaps": _scalar(cal.get("overlaps_evaluation_text"))},
                   ev("candidates", i, "calibration")),
        5: reading(5, {"n_ctx": _scalar(ctx.get("n_ctx")), "chunks": _scalar(ctx.get("n_chunks")),
                       "stride": _scalar(ctx.get("stride"))}, ev("context"), complete=("n_ctx",)),
        6: reading(6, {"scheme": scheme, "count": _scalar(pos.get("n_scored"))}, ev("positions"),
                   complete=("scheme",)),
        # the number is results.kld: forward KL, in nats when the block says log base e
        7: reading(7, {"direction": "forward" if "forward" in reported else None,
                       "unit": "nats" if direc.get("log_base") == "e" else None}, ev("direction"),
                   complete=("direction", "unit")),
        8: reading(8, {"scheme": _scalar(vocab.get("truncation")), "k": _scalar(vocab.get("top_k")),
                       "floor": _scalar(vocab.get("floor_nats"))}, ev(*vocab_at), complete=("scheme",)),
        9: reading(9, {"statistic": _scalar(agg.get("statistic")),
                       "uncertainty": _scalar(_map(agg.get("uncertainty")).get("method"))},
                   ev("aggregation"), complete=("statistic",)),
    }


def _map_list(x: Any, i: int) -> Any:
    return x[i] if isinstance(x, list) and i < len(x) else None
