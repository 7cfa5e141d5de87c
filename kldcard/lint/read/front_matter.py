"""Front-matter keys the Hugging Face Hub defines for model cards, read as disclosure evidence.

https://huggingface.co/docs/hub/model-cards#model-card-metadata: ``base_model`` (the model this one
derives from; with ``base_model_relation: quantized``, the checkpoint it quantizes: the natural
reference), ``datasets`` (a calibration set, or the evaluation text, when its name says so:
:func:`kldcard.lint.read.eval_text.front_matter_texts`), ``library_name`` (the library
that loads the model: an engine, never a version). A key is evidence only for what the Hub says it
means; ``quantized_by`` names a person, not a disclosure, and is not read.

``model-index`` (the Hub's evaluation results): a result whose metric is a KL divergence
(``type: kl_divergence``) describes that measurement: its ``dataset`` (type, revision, split) is the
evaluation text, and the protocol fields that fidelity receipts put in ``dataset.args`` /
``metrics[].args`` (``context_length``, ``contexts``, ``scored_positions``, ``direction``,
``estimator``) are read for what their names say. Only the first few results are read (an
embedding model's card lists thousands, none of them KL).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from dataclasses import dataclass
from typing import Any

from kldcard.lint.read import direction, eval_text

# base_model_relation values under which base_model is the checkpoint the card's model was made from
# without training (the KLD reference a reader assumes); "finetune", "adapter", "merge" are not.
REFERENCE_RELATIONS = {None, "quantized"}
CALIBRATION_NAME = re.compile(r"calib|imatrix", re.IGNORECASE)
KL_METRIC = re.compile(r"^(?:kl|kld|kl[_-]?div\w*)$", re.IGNORECASE)
MAX_RESULTS = 32  # model-index results looked at
# protocol fields of a KL result, by name (dataset.args, then the metric's args) -> (disclosure, value key)
FIELDS = {
    "context_length": (5, "n_ctx"), "n_ctx": (5, "n_ctx"), "seq_len": (5, "n_ctx"), "max_seq_len": (5, "n_ctx"),
    "contexts": (5, "chunks"), "chunks": (5, "chunks"), "windows": (5, "chunks"), "stride": (5, "stride"),
    "scored_positions": (6, "count"), "positions": (6, "count"),
}
DIRECTIONS = {"reference_to_candidate": "forward", "ref_to_cand": "forward", "forward": "forward",
              "candidate_to_reference": "reverse", "reverse": "reverse"}


@dataclass(frozen=True)
class MetaEvidence:
    disclosure: int
    key: str  # JSON pointer into the front matter
    text: str  # the value as written
    value: dict[str, Any]


def _strings(v: Any) -> list[str]:
    items = v if isinstance(v, list) else [v]
    return [s.strip() for s in items if isinstance(s, str) and s.strip()]


def read(metadata: dict[str, Any] | None) -> dict[int, list[MetaEvidence]]:
    """Disclosure number -> what the front matter says about it."""
    out: dict[int, list[MetaEvidence]] = {}
    if not metadata:
        return out
    relation = metadata.get("base_model_relation")
    bases = _strings(metadata.get("base_model"))
    if len(bases) == 1 and (relation if isinstance(relation, str) else None) in REFERENCE_RELATIONS:
        key = "/base_model" if isinstance(metadata.get("base_model"), str) else "/base_model/0"
        out.setdefault(1, []).append(MetaEvidence(1, key, bases[0], {"repo": bases[0]}))
    datasets = metadata.get("datasets")
    for i, name in enumerate(_strings(datasets)):
        if CALIBRATION_NAME.search(name):
            key = "/datasets" if isinstance(datasets, str) else f"/datasets/{i}"
            out.setdefault(4, []).append(MetaEvidence(4, key, name, {"dataset": name}))
            break
    for i, name in eval_text.front_matter_texts(_strings(datasets)):  # "org/...-fidelity-suite", not a calibration set
        key = "/datasets" if isinstance(datasets, str) else f"/datasets/{i}"
        out.setdefault(3, []).append(MetaEvidence(3, key, name, {"name": name, "source": name}))
    for n, ev in _kl_result(metadata.get("model-index")).items():
        out.setdefault(n, []).append(ev)
    return out


def _kl_result(index: Any) -> dict[int, MetaEvidence]:
    """What the first model-index result with a KL-divergence metric says about the protocol."""
    if not isinstance(index, list):
        return {}
    for i, model in enumerate(index[:MAX_RESULTS]):
        results = model.get("results") if isinstance(model, dict) else None
        for j, result in enumerate(results[:MAX_RESULTS] if isinstance(results, list) else []):
            metrics = result.get("metrics") if isinstance(result, dict) else None
            for k, metric in enumerate(metrics[:MAX_RESULTS] if isinstance(metrics, list) else []):
                if isinstance(metric, dict) and isinstance(metric.get("type"), str) and KL_METRIC.match(metric["type"]):
                    return _protocol(f"/model-index/{i}/results/{j}", result, k, metric)
    return {}


def _protocol(at: str, result: dict[str, Any], k: int, metric: dict[str, Any]) -> dict[int, MetaEvidence]:
    out: dict[int, MetaEvidence] = {}
    dataset = result.get("dataset") if isinstance(result.get("dataset"), dict) else {}
    dtype, dname = dataset.get("type"), dataset.get("name")
    if isinstance(dtype, str) and dtype.strip():
        value: dict[str, Any] = {"name": str(dname or dtype)[:80]}
        rev, split = dataset.get("revision"), dataset.get("split")
        value["source"] = dtype + (f"@{rev}" if isinstance(rev, str) else "") + (f" {split}" if isinstance(split, str) else "")
        out[3] = MetaEvidence(3, at + "/dataset/type", dtype, value)
    values: dict[int, dict[str, Any]] = {}
    keys: dict[int, str] = {}
    for where, args in ((at + "/dataset/args", dataset.get("args")), (f"{at}/metrics/{k}/args", metric.get("args"))):
        if not isinstance(args, dict):
            continue
        for name, (n, key) in FIELDS.items():
            v = args.get(name)
            if isinstance(v, int) and not isinstance(v, bool) and v > 0:
                values.setdefault(n, {}).setdefault(key, v)
                keys.setdefault(n, f"{where}/{name}")
        d = args.get("direction")
        if isinstance(d, str) and d.strip():
            values.setdefault(7, {"direction": DIRECTIONS.get(d.strip().lower(), "as-written")})
            keys.setdefault(7, f"{where}/direction")
        e = args.get("estimator")
        if isinstance(e, str) and "full_vocab" in e.lower():
            values.setdefault(8, {"scheme": "full"})
            keys.setdefault(8, f"{where}/estimator")
    name = metric.get("name")  # "mean KL(target ‖ model)": the metric's name may give the direction (read.direction)
    if isinstance(name, str) and 7 not in values and (d := direction.in_words(name[:200])) is not None:
        values[7], keys[7] = {"direction": d}, f"{at}/metrics/{k}/name"
    for n, value in values.items():
        out[n] = MetaEvidence(n, keys[n], ", ".join(f"{x}: {y}" for x, y in value.items()), value)
    return out
