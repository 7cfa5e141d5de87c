"""Adapter: :class:`~kldcard.compare.run.CompareResult` objects (+ user disclosures) -> ``KldEvaluation``.

Everything a capture records comes from the two manifests each result carries (runtime stacks,
text sha256, token count, BOS handling, context, positions, vocabulary) and from the numbers
(``CompareResult.to_card_results``). What a capture cannot know comes from the disclosures
(:class:`~kldcard.render.disclosures.Disclosures`): the reference's repo id and pin (a GGUF reference is
pinned by its file sha256 from the manifest when no revision is given), the evaluation text's
name and source, and each candidate's calibration data. Anything missing is reported in one
:class:`InputError` listing every key to supply. All numbers are in nats; forward = KL(P_ref ‖ P_cand).
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np
from pydantic import ValidationError

from kldcard.compare.rank import RANK_FORMAT, RankResult, candidate_label
from kldcard.compare.result import CompareResult
from kldcard.errors import InputError
from kldcard.render.disclosures import (
    CandidateDisclosure,
    Disclosures,
    evaluation_from_file,
    first_error,
    is_evaluation_data,
    load_disclosures,
    read_structured,
)
from kldcard.schema import KldEvaluation

_HEX40 = re.compile(r"^[0-9a-f]{40}$")


def candidate_name(result: CompareResult) -> str:
    """The candidate's name in the card (and the key of its disclosures): its model file or
    directory name without a .gguf suffix."""
    return candidate_label(result)


def _single_file_sha(files: dict[str, str]) -> str | None:
    """The sha256 of a one-file model (a GGUF): a real pin of exactly those weights."""
    return next(iter(files.values())) if len(files) == 1 else None


def _check_same_reference(results: list[CompareResult]) -> None:
    first = results[0]
    for r in results[1:]:
        a, b = first.reference, r.reference
        same = (
            a.token_ids_sha256 == b.token_ids_sha256
            and a.positions_sha256 == b.positions_sha256
            and a.model.name == b.model.name
            and a.model.files == b.model.files
            and a.stack == b.stack
        )
        if not same:
            raise InputError(
                f"results {first.candidate_path!r} and {r.candidate_path!r} use different reference captures "
                f"({first.reference_path!r} vs {r.reference_path!r}); a card section needs one reference"
            )
        if r.aggregation != first.aggregation or r.direction.reported != first.direction.reported:
            raise InputError(
                f"results {first.candidate_path!r} and {r.candidate_path!r} were summarised differently "
                "(percentiles, output ranges, bootstrap or directions); rerun compare with the same options"
            )


def evaluation_from_results(results: list[CompareResult], *, overrides: Disclosures | None = None,
                            ranking: RankResult | None = None) -> KldEvaluation:
    """A validated KldEvaluation from compare results of one reference against N candidates (and,
    from ``kldcard rank``, their paired ranking: the card's ``comparison``)."""
    if not results:
        raise InputError("no compare results given")
    d = overrides or Disclosures()
    _check_same_reference(results)
    first = results[0]
    ref_m = first.reference
    missing: list[str] = []

    ref_model = d.reference.model
    if not ref_model:
        missing.append("reference.model (the reference's repo id, e.g. owner/name)")
    revision = d.reference.revision or (ref_m.model.revision if _HEX40.match(ref_m.model.revision or "") else None)
    sha = d.reference.sha256 or _single_file_sha(ref_m.model.files)
    if not revision and not sha:
        missing.append("reference.revision (the 40-hex commit of the reference repo) or reference.sha256")
    if ref_m.stack is None:
        raise InputError(f"{first.reference_path}: the reference capture records no runtime stack; recapture it")

    text = dict(d.evaluation_text)
    name = text.pop("name", None) or ref_m.text.name
    if not name:
        missing.append("evaluation_text.name (e.g. WikiText-2 (raw, test))")
    source = text.pop("source", None) or ref_m.text.source
    if isinstance(source, str):
        source = {"url": source}
    if not source:
        missing.append(
            "evaluation_text.source ({dataset, config, split, revision} or {url}) of the text the logits were computed on"
        )
    parity = text.pop("tokenizer_parity", None) or (ref_m.tokenizer_parity.model_dump() if ref_m.tokenizer_parity else None)
    if parity is None:
        # compare refused any pair whose token ids differ, so every capture was fed the same ids.
        engines = []
        for m in [ref_m, *(r.candidate for r in results)]:
            label = m.stack.engine if m.stack else (m.model.format or "unknown")
            if label not in engines:
                engines.append(label)
        parity = {"engines": engines, "tokens_checked": ref_m.n_tokens, "outcome": "identical"}

    cands = []
    for r in results:
        cname = candidate_name(r)
        cd = d.candidates.get(cname, CandidateDisclosure())
        cal = cd.calibration or d.calibration
        if cal is None:
            missing.append(f"candidates.{cname}.calibration (or a top-level calibration, e.g. {{none: true}})")
        cm = r.candidate.model
        model = {
            "model": cm.name,
            "revision": cm.revision if _HEX40.match(cm.revision or "") else None,
            "sha256": _single_file_sha(cm.files),
            "quantization": cm.quantization or cm.dtype or (r.candidate.stack.weights_dtype if r.candidate.stack else None),
            **({"size": cm.size.model_dump()} if cm.size is not None else {}),
            **(cd.model or {}),
        }
        if not model["quantization"]:
            missing.append(f"candidates.{cname}.model.quantization")
        if r.candidate.stack is None:
            raise InputError(f"{r.candidate_path}: the candidate capture records no runtime stack; recapture it")
        cands.append({"name": cname, "model": model, "runtime": r.candidate.stack.model_dump(),
                      "calibration": cal, "results": r.to_card_results().model_dump(),
                      **({"cross_stack": cd.cross_stack} if cd.cross_stack else {})})
    unknown = sorted(set(d.candidates) - {c["name"] for c in cands})
    if unknown:
        raise InputError(
            f"disclosures name candidates {', '.join(unknown)} that are not in the results "
            f"(candidates: {', '.join(c['name'] for c in cands)})"
        )
    if missing:
        raise InputError(
            "missing disclosures that captures cannot know: " + "; ".join(missing)
            + ". Put them in a YAML file and pass --disclosures FILE (see `kldcard render --help`)"
        )

    agg = first.aggregation
    ctx = ref_m.context
    pos = ref_m.positions
    voc = first.vocabulary
    trunc = ref_m.truncation
    data: dict[str, Any] = {
        "reference": {
            "model": ref_model,
            "revision": revision,
            "sha256": sha,
            "dtype": d.reference.dtype or ref_m.model.dtype or ref_m.stack.weights_dtype,
            "runtime": ref_m.stack.model_dump(),
        },
        "evaluation_text": {
            "name": name,
            "source": source,
            "sha256": ref_m.text.sha256,
            "n_tokens": ref_m.n_tokens,
            # kldcard captures feed the raw text file; a chat-formatted capture records True.
            "chat_template": bool(ref_m.text.chat_template),
            "bos": ref_m.tokens.bos,
            "tokenizer_parity": parity,
            **text,
        },
        "context": {"n_ctx": ctx.n_ctx, "n_chunks": ctx.n_chunks, "stride": ctx.stride, "prefill_chunk": ctx.prefill_chunk},
        "positions": {
            "scheme": pos.scheme,
            "every_n": pos.every_n,
            "offset": pos.offset,
            "explicit": _explicit_positions(first) if pos.scheme == "explicit" else None,
            "n_scored": first.positions.n_scored,
        },
        "direction": {"reported": list(first.direction.reported), "log_base": "e"},
        "vocabulary": {
            "truncation": voc.truncation,
            "top_k": trunc.top_k,
            "tail": getattr(trunc, "tail", None),
            "floor_nats": trunc.floor_nats,
            "reference_vocab_size": voc.reference_vocab_size,
            "candidate_vocab_size": voc.candidate_vocab_size,
            "alignment": voc.alignment,
        },
        "aggregation": {
            "statistic": agg.statistic,
            "percentiles": list(agg.percentiles),
            "output_ranges": [list(x) for x in agg.output_ranges],
            "uncertainty": uncertainty_disclosure(agg),
        },
        "candidates": cands,
    }
    if ranking is not None:
        ranked = {r.name for r in ranking.ranking}
        # every candidate is ranked, except one measured across stacks on purpose (its KLD holds the
        # stack difference too, so it is not comparable with the others'; the section says so)
        expected = {c["name"] for c in cands if not c.get("cross_stack")}
        if not expected <= ranked <= {c["name"] for c in cands}:
            raise InputError(f"the ranking covers {', '.join(sorted(ranked))}, the results "
                             f"{', '.join(c['name'] for c in cands)}; rank exactly the candidates rendered "
                             "(those measured across stacks on purpose may be left out)")
        data["comparison"] = ranking.to_card_comparison().model_dump()
    try:
        return KldEvaluation.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"the results do not make a complete disclosure: {first_error(exc)}") from None


def uncertainty_disclosure(agg: Any) -> dict[str, Any]:
    """The card's ``aggregation.uncertainty`` from a result's aggregation (format_version 1 results:
    the per-token bootstrap, named ``bootstrap``)."""
    method = agg.uncertainty_method
    if method == "se-iid":
        return {"method": "se-iid"}
    boot = agg.bootstrap
    out: dict[str, Any] = {"method": method, "level": boot.level, "resamples": boot.resamples, "seed": boot.seed,
                           "interval": boot.interval if boot.interval != "auto" else
                           ("percentile" if method == "bootstrap" else "studentized")}
    if method == "window-bootstrap":
        out["block"] = {"unit": "context-window", "min_windows": boot.min_windows}
    elif method == "block-bootstrap":
        out["block"] = {"unit": "moving-block", "length_rule": "politis-white-2004"}
    return out


def _explicit_positions(result: CompareResult) -> list[int]:
    from kldcard.capture.store import open_capture

    return [int(p) for p in open_capture(result.reference_path, verify=False).positions]


def load_result(path: str | Path, data: Any | None = None) -> CompareResult:
    data = read_structured(path, "compare result") if data is None else data
    try:
        return CompareResult.model_validate(data)
    except ValidationError as exc:
        raise InputError(f"{path}: not a kldcard compare result: {first_error(exc)}") from None


def evaluation_from_result_files(paths: list[str], datas: list[Any], disclosures: Disclosures) -> KldEvaluation:
    """Compare results, plus at most one ``kldcard rank`` file among them (its ``format`` says so)."""
    is_rank = [isinstance(d, dict) and d.get("format") == RANK_FORMAT for d in datas]
    if sum(is_rank) > 1:
        raise InputError("give at most one ranking file (from `kldcard rank`)")
    ranking = None
    for p, d, r in zip(paths, datas, is_rank):
        if r:
            try:
                ranking = RankResult.model_validate(d)
            except ValidationError as exc:
                raise InputError(f"{p}: not a kldcard ranking: {first_error(exc)}") from None
    results = [load_result(p, d) for p, d, r in zip(paths, datas, is_rank) if not r]
    return evaluation_from_results(results, overrides=disclosures, ranking=ranking)


def plot_series(paths: list[str], per_token: list[str], names: list[str] | None = None) -> list:
    """One :class:`~kldcard.render.plot.PlotSeries` per result, from ``per_token`` files (in order) or the
    per-token file each result names (resolved as given, then next to the result file); ``names``
    label them instead of the names the results hold."""
    from kldcard.render.plot import PlotSeries

    if per_token and len(per_token) != len(paths):
        raise InputError(f"--per-token given {len(per_token)} time(s) for {len(paths)} result(s); give one per RESULT")
    series = []
    for i, path in enumerate(paths):
        result = load_result(path)
        file = Path(per_token[i]) if per_token else per_token_path(path, result)
        series.append(_read_per_token(file, names[i] if names else candidate_name(result), PlotSeries))
    return series


def per_token_path(path: str | Path, result: CompareResult) -> Path:
    """The per-token file a result names, resolved as given, then next to the result file."""
    name = result.per_token_file
    if not name:
        raise InputError(f"{path}: names no per-token file; pass --per-token FILE (from `kldcard compare --per-token`)")
    file = Path(name)
    if not file.is_file() and (Path(path).parent / name).is_file():
        file = Path(path).parent / name
    return file


def _read_per_token(file: Path, name: str, cls: Any) -> Any:
    if not file.is_file():
        raise InputError(f"{file}: no such per-token file")
    try:
        if file.suffix == ".npz":
            with np.load(file, allow_pickle=False) as z:
                cols = {k: z[k] for k in ("position", "forward_kl", "top1_agree")}
        else:
            arr = np.genfromtxt(file, delimiter=",", names=True, comments="#")
            cols = {k: arr[k] for k in ("position", "forward_kl", "top1_agree")}
    except (OSError, KeyError, ValueError) as exc:
        raise InputError(f"{file}: unreadable per-token file: {exc}") from None
    return cls(name, cols["position"].astype(np.int64), cols["forward_kl"].astype(np.float64), cols["top1_agree"].astype(bool))


def load_evaluation(paths: list[str], *, disclosures: str | None = None) -> KldEvaluation:
    """The evaluation to render from ``paths`` (see the module docstring)."""
    datas = [read_structured(p, "result") for p in paths]
    kinds = [is_evaluation_data(d) for d in datas]
    if any(kinds):
        if len(paths) != 1:
            raise InputError("a kld_evaluation file is rendered on its own; pass it as the only RESULT")
        if disclosures:
            raise InputError("--disclosures applies to compare results, not to a complete kld_evaluation file")
        return evaluation_from_file(paths[0], datas[0])
    return evaluation_from_result_files(paths, datas, load_disclosures(disclosures))


def load_plot_series(paths: list[str], per_token: list[str]) -> list:
    """Per-position series for the plot: one per RESULT, from ``--per-token`` files or the files
    the results name."""
    datas = [read_structured(p, "result") for p in paths]
    return plot_series([p for p, d in zip(paths, datas)
                        if not (isinstance(d, dict) and d.get("format") == RANK_FORMAT)], per_token)
