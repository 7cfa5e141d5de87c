"""Numbers of a results JSON written by kldcard (``kldcard compare`` / ``kldcard evaluate``).

Read as plain JSON (no numpy, no pydantic models of the compare stage): the reference and candidate
capture manifests give D1–D6 and D8, the result's own sections give D6–D9. The number is the
forward KL(P_ref ‖ P_cand) mean in nats. Evidence is a JSON pointer into the results file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from kldcard.comparable.numbers import Interval, Number
from kldcard.lint.block_reading import reading
from kldcard.errors import InputError
from kldcard.files import loads_json
from kldcard.lint.reading import DisclosureReading, Evidence

RESULT_FORMAT = "kldcard-compare-result"  # kldcard.compare.result.RESULT_FORMAT (not imported: numpy)


def _map(x: Any) -> dict[str, Any]:
    return x if isinstance(x, dict) else {}


def is_results(data: Any) -> bool:
    return isinstance(data, dict) and data.get("format") == RESULT_FORMAT


def parse_json(text: str, path: str) -> Any:
    # kldcard.files' one JSON reader: nesting limit, and no NaN, infinity or 4,300-digit integer (one line each)
    return loads_json(text, path)


def results_number(data: dict[str, Any], path: str) -> Number:
    """The forward-KL :class:`Number` of one compare result (``data``: the parsed JSON)."""
    fwd = _map(data.get("forward_kl"))
    if not isinstance(fwd.get("mean"), (int, float)):
        raise InputError(f"{path}: a kldcard compare result without forward_kl.mean")
    agg = _map(data.get("aggregation"))
    level = _map(agg.get("bootstrap")).get("level")
    interval = None
    if isinstance(fwd.get("ci_low"), (int, float)) and isinstance(fwd.get("ci_high"), (int, float)):
        interval = Interval(float(fwd["ci_low"]), float(fwd["ci_high"]), level, agg.get("uncertainty_method"))
    cand = _map(_map(data.get("candidate")).get("model"))
    label = str(cand.get("quantization") or cand.get("name") or Path(path).stem)
    return Number(path, "results", label, float(fwd["mean"]), results_readings(data),
                  interval=interval, per_token=_per_token(data, path))


def _per_token(data: dict[str, Any], path: str) -> str | None:
    name = data.get("per_token_file")
    if not isinstance(name, str) or not name:
        return None
    for p in (Path(name), Path(path).parent / name):
        if p.is_file():
            return str(p)
    return None


def results_readings(data: dict[str, Any]) -> dict[int, DisclosureReading]:
    ref, cand = _map(data.get("reference")), _map(data.get("candidate"))
    model, text, ctx = _map(ref.get("model")), _map(ref.get("text")), _map(ref.get("context"))
    stack, ref_stack = _map(cand.get("stack")), _map(ref.get("stack"))
    pos, vocab, agg = _map(data.get("positions")), _map(data.get("vocabulary")), _map(data.get("aggregation"))
    direc, trunc = _map(data.get("direction")), _map(ref.get("truncation"))
    files = _map(model.get("files"))
    pin = model.get("revision") or (next(iter(files.values())) if len(files) == 1 else None)
    src = text.get("source")
    source = src if isinstance(src, str) else (_map(src).get("dataset") or _map(src).get("url"))
    engine = stack.get("engine")
    if engine and ref_stack.get("engine") and ref_stack.get("engine") != engine:
        engine = f"{ref_stack['engine']} (reference) / {engine}"

    def ev(*parts: str) -> tuple[Evidence, ...]:
        ptr = "/" + "/".join(parts)
        return (Evidence(text=ptr, key=ptr),)

    return {
        1: reading(1, {"repo": model.get("name"), "revision": pin, "dtype": model.get("dtype")},
                   ev("reference", "model"), complete=("repo", "revision", "dtype")),
        2: reading(2, {"engine": engine, "version": stack.get("engine_version"), "backend": stack.get("backend"),
                       "device": stack.get("device")}, ev("candidate", "stack"), complete=("engine", "version")),
        3: reading(3, {"name": text.get("name"), "source": source, "sha256": text.get("sha256"),
                       "tokens": ref.get("n_tokens"), "chat_template": text.get("chat_template")},
                   ev("reference", "text"), complete=("name", "sha256")),
        # calibration is the candidate's, not in a compare result
        4: reading(4, {}, ev("candidate", "model")),
        5: reading(5, {"n_ctx": ctx.get("n_ctx"), "chunks": ctx.get("n_chunks"), "stride": ctx.get("stride")},
                   ev("reference", "context"), complete=("n_ctx",)),
        6: reading(6, {"scheme": pos.get("scheme"), "count": pos.get("n_scored")}, ev("positions"),
                   complete=("scheme",)),
        7: reading(7, {"direction": "forward", "unit": direc.get("units", "nats")}, ev("direction"),
                   complete=("direction",)),
        8: reading(8, {"scheme": vocab.get("truncation") or trunc.get("kind"), "k": trunc.get("top_k"),
                       "floor": trunc.get("floor_nats")}, ev("vocabulary"), complete=("scheme",)),
        9: reading(9, {"statistic": agg.get("statistic"), "uncertainty": agg.get("uncertainty_method")},
                   ev("aggregation"), complete=("statistic",)),
    }
