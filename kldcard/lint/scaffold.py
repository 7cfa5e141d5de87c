"""``kldcard lint --fix --scaffold``: a ``kld_evaluation`` block pre-filled from a free-form card's reading.

The block has every field the schema requires (built from the pydantic models, so it follows the
schema), with the card's own values where its reading *states* them (stated or incomplete; never a
tool default, never a guess) and a ``TODO`` placeholder everywhere else. A placeholder says what to
put there; a candidate's printed number whose statistic the card leaves open stays a placeholder that
quotes it (``"TODO: 0.0374 as printed: which statistic?"``). Linting a card whose block holds
placeholders reports each of them (KLD013) and nothing else about the block, until they are filled.

The block is written with :func:`kldcard.card.splice.splice_block` (only the ``kld_evaluation`` key
changes; every other byte of the card stays) by ``kldcard lint --fix --scaffold``.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
import types
from typing import Annotated, Any, Literal, Union, get_args, get_origin

from pydantic import BaseModel

from kldcard import schema
from kldcard.card.document import Card, parse_card
from kldcard.card.splice import splice_block
from kldcard.card.yaml import dump_yaml
from kldcard.lint.reader import clean, read_card
from kldcard.lint.placeholders import TODO
from kldcard.lint.reading import ClaimReading, DisclosureReading, NumberReading

MAX_CANDIDATES = 64
ACCELERATOR_FIELDS = ("sm_count", "compute_capability", "driver_version", "cuda_version")


# ---- the schema's skeleton ---------------------------------------------------------------------


def _is_model(tp: Any) -> bool:
    return isinstance(tp, type) and issubclass(tp, BaseModel)


def skeleton(model: type[BaseModel]) -> dict[str, Any]:
    """Every required field of ``model``, nested models expanded, leaves as placeholders."""
    return {name: _placeholder(f.annotation, name) for name, f in model.model_fields.items() if f.is_required()}


def _placeholder(tp: Any, name: str) -> Any:
    origin, args = get_origin(tp), get_args(tp)
    if origin is Annotated:
        return _placeholder(args[0], name)
    if _is_model(tp):
        return skeleton(tp)
    if origin in (Union, types.UnionType):
        real = [a for a in args if a is not type(None)]
        models = [a for a in real if _is_model(a)]
        return skeleton(models[0]) if models else _placeholder(real[0], name)
    if origin is list:
        inner = args[0] if args else Any
        return [skeleton(inner)] if _is_model(inner) else f"{TODO}: a list ({name})"
    if origin is Literal:
        return f"{TODO}: one of " + " | ".join(map(str, args))
    if tp is bool:
        return f"{TODO}: true or false"
    if tp in (int, float):
        return f"{TODO}: a number"
    return TODO


# ---- the card's values -------------------------------------------------------------------------


def _said(d: DisclosureReading) -> dict[str, Any]:
    """The values a reading *states* (a tool default is not the card's word)."""
    return d.said if d.status in ("stated", "incomplete") else {}


def _set(block: dict[str, Any], path: tuple[Any, ...], value: Any) -> None:
    """Set ``value`` at ``path`` where the skeleton (or an optional field of its model) has room."""
    node: Any = block
    for part in path[:-1]:
        node = node.setdefault(part, {}) if isinstance(node, dict) else node[part]
    node[path[-1]] = value


def _fill_shared(block: dict[str, Any], r: ClaimReading) -> None:
    v = {n: _said(d) for n, d in r.disclosures.items()}
    ref = v[1]
    if ref.get("repo"):
        _set(block, ("reference", "model"), ref["repo"])
    if re.fullmatch(r"[0-9a-f]{64}", str(ref.get("revision", ""))):
        _set(block, ("reference", "sha256"), ref["revision"])
    else:  # the schema wants a pin: a 40-hex commit (a short one is the author's to complete)
        full = re.fullmatch(r"[0-9a-f]{40}", str(ref.get("revision", "")))
        _set(block, ("reference", "revision"), ref["revision"] if full else f"{TODO}: the 40-hex commit of the reference"
             + (f" (the card gives {ref['revision']})" if ref.get("revision") else ""))
    if ref.get("dtype"):
        _set(block, ("reference", "dtype"), str(ref["dtype"]).lower())
    for key, field in (("engine", "engine"), ("version", "engine_version"), ("device", "device")):
        if v[2].get(key):
            _set(block, ("reference", "runtime", field), str(v[2][key]))
    if v[2].get("backend"):
        backend = str(v[2]["backend"]).lower()
        _set(block, ("reference", "runtime", "backend"), backend)
        if backend in ("cuda", "rocm"):  # the schema asks an accelerator stack for its details
            for field in ACCELERATOR_FIELDS:
                _set(block, ("reference", "runtime", field), TODO)
    text = v[3]
    if text.get("name"):
        _set(block, ("evaluation_text", "name"), str(text["name"]))
    source = str(text.get("source", ""))
    if source.startswith(("http://", "https://")):
        block["evaluation_text"]["source"] = {"url": source}
    elif len(source.split()) == 3:  # "Salesforce/wikitext wikitext-2-raw-v1 test": the card gave config and split
        dataset, config, split = source.split()
        src = block["evaluation_text"]["source"]
        src["dataset"] = f"{TODO}: the dataset id ({config} is a config of {dataset})"
        src["config"], src["split"] = config, split
    elif source:
        block["evaluation_text"]["source"]["dataset"] = source
    if text.get("sha256"):
        _set(block, ("evaluation_text", "sha256"), text["sha256"])
    if text.get("tokens"):
        _set(block, ("evaluation_text", "n_tokens"), int(text["tokens"]))
    ctx = v[5]
    for key, field in (("n_ctx", "n_ctx"), ("chunks", "n_chunks"), ("stride", "stride")):
        if isinstance(ctx.get(key), int):
            _set(block, ("context", field), ctx[key])
    pos = v[6]
    if pos.get("scheme") in ("all", "second-half"):
        _set(block, ("positions", "scheme"), pos["scheme"])
    if isinstance(pos.get("count"), int):
        _set(block, ("positions", "n_scored"), pos["count"])
    direction = v[7].get("direction")
    if direction in ("forward", "reverse", "js"):
        _set(block, ("direction", "reported"), [direction])
    if v[7].get("unit") == "nats":
        _set(block, ("direction", "log_base"), "e")
    elif v[7].get("unit") == "bits":
        _set(block, ("direction", "log_base"), f"{TODO}: e (the card reports bits: give the values in nats)")
    voc = v[8]
    if voc.get("scheme") in ("full", "top-k", "floor"):
        _set(block, ("vocabulary", "truncation"), voc["scheme"])
    if voc.get("scheme") == "top-k":
        _set(block, ("vocabulary", "top_k"), voc["k"] if isinstance(voc.get("k"), int) else f"{TODO}: a number")
        _set(block, ("vocabulary", "tail"), f"{TODO}: how the tail beyond top-k was treated")
    if voc.get("scheme") == "floor":
        _set(block, ("vocabulary", "floor_nats"), float(voc["floor"]) if isinstance(voc.get("floor"), int) else f"{TODO}: a number")
    if v[9].get("statistic") == "median":
        _set(block, ("aggregation", "statistic"), "median")
    elif v[9].get("statistic") == "mean":
        _set(block, ("aggregation", "statistic"), f"{TODO}: token-mean or sequence-mean (the card says mean)")


PERCENTILE = re.compile(r"^p(\d+(?:\.\d+)?)$")


def _candidate_names(readings: list[ClaimReading]) -> list[tuple[str, list[NumberReading]]]:
    """(name, numbers) per candidate: a table row's label, else one unnamed candidate per claim."""
    out: dict[str, list[NumberReading]] = {}
    for r in readings:
        for n in r.numbers:
            name = clean(n.candidate, 80) if n.candidate else f"{TODO}: the candidate of the claim at line {r.line}"
            out.setdefault(name, []).append(n)
    return list(out.items())[:MAX_CANDIDATES] or [(f"{TODO}: the candidate's name", [])]


SUMMARY_FIELDS = {"mean": "mean", "median": "median", "max": "max", "min": "min", "se": "se", "ci_low": "ci_low", "ci_high": "ci_high"}


def _candidates(block: dict[str, Any], readings: list[ClaimReading]) -> None:
    template = block["candidates"][0]
    calib = _said(readings[0].disclosures[4])
    out = []
    for name, numbers in _candidate_names(readings):
        cand = _copy(template)
        cand["name"] = name
        # the compact form: the candidate ran on the reference's stack, with its own weights
        del cand["runtime"]
        cand["runtime_changes"] = {"weights_dtype": f"{TODO}: the candidate's weights dtype (e.g. q4_k_m)"}
        if calib.get("none"):
            cand["calibration"] = {"none": True}
        else:
            dataset = str(calib["dataset"]) if calib.get("dataset") else f"{TODO}: the calibration set (or none: true)"
            size = f" (the card gives {calib['size']})" if calib.get("size") else ""
            cand["calibration"] = {"dataset": dataset, "sha256": TODO, "n_tokens": f"{TODO}: a number{size}",
                                   "overlaps_evaluation_text": f"{TODO}: true or false"}
        bare = cand["results"]["kld"]["mean"]
        kld = cand["results"]["kld"]
        for n in numbers:
            if n.unit in ("bits", "percent"):
                continue  # not nats: the author converts or leaves it out
            stat = n.statistic or ""
            pct = PERCENTILE.match(stat)
            if stat in SUMMARY_FIELDS and kld.get(SUMMARY_FIELDS[stat], bare) == bare:
                kld[SUMMARY_FIELDS[stat]] = n.value
            elif pct is not None:
                kld.setdefault("percentiles", {})[pct.group(1)] = n.value
            elif kld.get("mean") == bare:
                kld["mean"] = f"{TODO}: {n.text} as printed: which statistic? (the mean goes here)"
        out.append(cand)
    block["candidates"] = out


def _copy(x: Any) -> Any:
    if isinstance(x, dict):
        return {k: _copy(v) for k, v in x.items()}
    if isinstance(x, list):
        return [_copy(v) for v in x]
    return x


def scaffold_block(readings: list[ClaimReading]) -> dict[str, Any]:
    """The ``kld_evaluation`` mapping for a card read as ``readings`` (its first claim's reading for
    the disclosures, every claim's numbers for the candidates)."""
    block = {"schema_version": schema.SCHEMA_VERSION, **skeleton(schema.KldEvaluation)}
    if not readings:
        return block
    _fill_shared(block, readings[0])
    _candidates(block, readings)
    return block


def scaffold_bytes(data: bytes, name: str) -> bytes | None:
    """Card bytes with a scaffolded block (byte-order mark and line endings kept), or None when
    there is nothing to scaffold; raises :class:`~kldcard.errors.InputError` for an unreadable card."""
    bom = b"\xef\xbb\xbf" if data.startswith(b"\xef\xbb\xbf") else b""
    text = scaffold_text(parse_card(data, name))
    return None if text is None else bom + text.encode("utf-8")


def scaffold_text(card: Card) -> str | None:
    """The card's text with a scaffolded ``kld_evaluation`` block, or None when there is nothing to
    scaffold (the card has a block already, or makes no KLD claim)."""
    if schema_key() in card.metadata:
        return None
    readings = read_card(card)
    if not readings:
        return None
    return splice_block(card.text, dump_yaml({schema_key(): scaffold_block(readings)}), path=card.path)


def schema_key() -> str:
    return "kld_evaluation"
