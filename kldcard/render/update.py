"""Write a rendered KLD evaluation into a card file: section, ``kld_evaluation`` and model-index.

:func:`update_card` computes the new bytes (nothing is written), checks them by parsing the result
back, and :func:`kldcard.files.write_atomic` replaces the file in one step (temporary name + ``os.replace``), so an
interrupted run never leaves a half-written card. The card keeps its detected line ending and is
written as UTF-8 without a BOM. A card whose new bytes equal the old ones is not touched at all.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

import yaml

from kldcard.card.document import (
    YAML_BLOCK,
    detect_newline,
    parse_card,
    read_bytes,
    yaml_error_parts,
)
from kldcard.card.regions import KLD_KEY, MODEL_INDEX_KEY, is_kld_result
from kldcard.card.yaml import compose_and_load
from kldcard.card.splice import (
    find_body_region,
    region_text,
    splice_body,
    splice_front_matter,
    split_lines,
)
from kldcard.errors import InputError
from kldcard.files import keep_bom
from kldcard.render.metadata import (
    default_model_name,
    kld_evaluation_yaml,
    model_index_results,
)
from kldcard.render.section import render_section
from kldcard.schema import KldEvaluation, is_quantized_dtype


@dataclass(frozen=True)
class CardUpdate:
    """Old and new bytes of one card. ``changed`` is what ``--check`` reports."""

    path: str
    old: bytes
    new: bytes

    @property
    def changed(self) -> bool:
        return self.old != self.new


def render_card_text(
    text: str,
    evaluation: KldEvaluation,
    *,
    section: str,
    model_name: str | None = None,
    source_url: str | None = None,
    set_base_model: bool = True,
    path: str = "<card>",
    compact: bool = False,
) -> str:
    """``text`` (a decoded card, possibly empty) with all three managed regions written.

    ``compact``: the front matter gets :func:`~kldcard.render.metadata.compact_evaluation` (the
    caller writes :func:`~kldcard.render.metadata.sidecar_bytes` next to the card) and one short
    model-index result per candidate; the body section is the same."""
    newline = detect_newline(text) if text else "\n"
    # Check the markers first, so that a message names the lines of the card as the user has it.
    m0 = YAML_BLOCK.search(text)
    start0 = m0.end() if m0 else 0
    find_body_region(text[start0:], len(split_lines(text[:start0])) + 1, path)
    existing = _existing_metadata(text, path)
    name = model_name or _existing_model_name(existing) or default_model_name(evaluation)
    ensure: dict[str, str] = {}
    if set_base_model:
        # reference/model-cards.md §4: reference_model must equal base_model and quants need
        # base_model_relation: quantized. Only added when absent; an existing value is the user's.
        ensure["base_model"] = evaluation.reference.model
        if any(is_quantized_dtype(c.model.quantization) for c in evaluation.candidates):
            ensure["base_model_relation"] = "quantized"
    front = evaluation
    if compact:
        from kldcard.render.metadata import (
            compact_evaluation,
            compact_kld_evaluation_yaml,
            compact_model_index_results,
        )

        front = compact_evaluation(evaluation)
        kld_yaml, results = compact_kld_evaluation_yaml(front), compact_model_index_results(evaluation, source_url=source_url)
    else:
        kld_yaml, results = kld_evaluation_yaml(evaluation), model_index_results(evaluation, source_url=source_url)
    out = splice_front_matter(
        text,
        kld_yaml=kld_yaml,
        results=results,
        model_name=name,
        ensure=ensure,
        path=path,
    )
    m = YAML_BLOCK.search(out)
    body_start = m.end() if m else 0
    first_line = len(split_lines(out[:body_start])) + 1
    out = out[:body_start] + splice_body(out[body_start:], section, newline, path, first_line)
    _verify(out, front, section, newline, path, existing, set(ensure))
    return out


def update_card(
    path: str | os.PathLike[str],
    evaluation: KldEvaluation,
    *,
    template: str | os.PathLike[str] | None = None,
    plot: str | None = None,
    model_name: str | None = None,
    source_url: str | None = None,
    set_base_model: bool = True,
    create: bool = True,
    compact: bool = False,
    size_plot: str | None = None,
) -> CardUpdate:
    """The old and new bytes of the card at ``path`` (not written). A missing file is created when
    ``create`` (the section, front matter and nothing else)."""
    p = Path(path)
    if p.exists() or not create:
        old = read_bytes(p)
        try:
            text = old.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise InputError(f"{p}: not valid UTF-8 (byte {exc.start}); save the card as UTF-8") from None
        if "\x00" in text:
            raise InputError(f"{p}: binary file (contains NUL bytes), not a Markdown card")
    else:
        old, text = b"", ""
    section = render_section(evaluation, template=template, plot=plot, size_plot=size_plot)
    new_text = render_card_text(
        text, evaluation, section=section, model_name=model_name, source_url=source_url,
        set_base_model=set_base_model, path=str(p), compact=compact,
    )
    return CardUpdate(str(p), old, keep_bom(old, new_text.encode("utf-8")))  # a BOM that was there stays


def write_sidecar(card: str | os.PathLike[str], evaluation: KldEvaluation) -> Path:
    """Write the compact card's sidecar (the full block, :func:`~kldcard.render.metadata.sidecar_bytes`)
    next to ``card``, atomically, unless it already holds those bytes. Call it before writing the card,
    so a card never names a sidecar that is not there."""
    from kldcard.files import write_atomic
    from kldcard.render.metadata import SIDECAR_FILE, sidecar_bytes

    path = Path(card).parent / SIDECAR_FILE
    data = sidecar_bytes(evaluation)
    if not path.is_file() or path.read_bytes() != data:
        write_atomic(path, data)
    return path


def _existing_metadata(text: str, path: str) -> dict:
    m = YAML_BLOCK.search(text) if text else None
    if not m:
        return {}
    try:
        data = compose_and_load(m.group(2))[1]
    except yaml.YAMLError as exc:
        where, problem = yaml_error_parts(exc, len(split_lines(text[: m.start(2)])) + 1)
        raise InputError(f"{path}{where}: malformed YAML front matter: {problem}") from None
    return data if isinstance(data, dict) else {}


def _existing_model_name(meta: dict) -> str | None:
    index = meta.get(MODEL_INDEX_KEY)
    if isinstance(index, list) and index and isinstance(index[0], dict) and isinstance(index[0].get("name"), str):
        return index[0]["name"]
    return None


def _canon(data: object) -> str:
    """A comparable text form (NaN equals NaN; dates and other YAML types by their str)."""
    return json.dumps(data, sort_keys=True, default=str)


def _verify(
    text: str, evaluation: KldEvaluation, section: str, newline: str, path: str, before: dict, added: set[str]
) -> None:
    """Parse the result back: the block must validate to ``evaluation``, the model-index must hold
    exactly our KLD results next to the user's other results, every other top-level key must load
    to the same value as before, and the body must hold exactly one managed region with
    ``section``. A failure means the splice would corrupt the card, so nothing is written."""
    card = parse_card(text.encode("utf-8"), path)
    ours = {KLD_KEY, MODEL_INDEX_KEY}
    after = {k: v for k, v in card.metadata.items() if k not in ours and not (k in added and k not in before)}
    others_ok = _canon(after) == _canon({k: v for k, v in before.items() if k not in ours})
    old_index = before.get(MODEL_INDEX_KEY)
    if isinstance(old_index, list) and old_index and isinstance(old_index[0], dict):
        kept = [r for r in old_index[0].get("results") or [] if not is_kld_result(r)]
        new_index = card.metadata.get(MODEL_INDEX_KEY) or [{}]
        others_ok = others_ok and _canon(kept) == _canon(
            [r for r in new_index[0].get("results") or [] if not is_kld_result(r)]
        )
    block = card.metadata.get(KLD_KEY)
    try:
        ok = block is not None and KldEvaluation.model_validate(block) == evaluation
    except ValueError:
        ok = False
    index = card.metadata.get(MODEL_INDEX_KEY)
    kld = [r for r in index[0].get("results", [])] if isinstance(index, list) and index else []
    kld = [r for r in kld if is_kld_result(r)]
    span = find_body_region(card.body, card.body_line, path)
    region_ok = span is not None and card.body[span[0] : span[1]] == region_text(section, newline)
    if not ok or not others_ok or len(kld) != len(evaluation.candidates) or not region_ok:
        raise InputError(
            f"{path}: kldcard could not splice this card safely (its front matter or markers confuse "
            f"the splice); nothing was written. Remove the kld_evaluation key, the KLD model-index "
            f"results and the kldcard markers, then rerun"
        )
