"""The ``kldcard evaluate`` project file: one YAML file for the whole job.

::

    reference: {engine: llama.cpp, model: model-bf16.gguf}  # or {capture: DIR}, or {basefile: FILE.kld}
    candidates:
      - {name: model-Q8_0, engine: llama.cpp, model: model-Q8_0.gguf}
      - {name: model-mlx-4bit, engine: mlx, model: mlx-4bit/, calibration: {none: true},
         cross_stack: {coordinates: [engine, attention_backend, compute_dtype, kv_cache_dtype],
                       reason: the MLX build is what Apple-silicon users run}}   # see KLD207
      - {name: model-served, engine: openai, server: 'http://127.0.0.1:8080', model: served-name, top_k: 20,
         vocab_gguf: model-Q4_K_M.gguf, cross_stack: {...}}   # top-k log-probabilities: the truncated KLD
    text: {path: wiki.test.raw, name: WikiText-2 (raw, test),
           source: {dataset: Salesforce/wikitext, config: wikitext-2-raw-v1, split: test, revision: <40-hex>}}
    positions: every:32        # all | every:N[@OFFSET] | second-half | list:1,5,9
    n_ctx: 512                 # context window (default: the whole text)
    protocol: llama-perplexity # optional: llama-perplexity's chunks, BOS and scored positions
    disclosures:               # what the captures cannot know (see kldcard.render.disclosures)
      reference: {model: owner/name, revision: <40-hex>}
      calibration: {none: true}
    card: README.md            # the card to update (created when missing)
    plot: kld_per_position.png # optional; the size chart kld_vs_size.png/.svg is written next to it
    badge: kld_badge.json      # optional: a shields.io endpoint file (first candidate's mean KLD)
    cache: .kldcard-cache      # content-addressed results; a rerun evaluates only what changed

A served candidate (``engine: openai``) is asked for the prompt's top-k log-probabilities in one
request: the truncated KLD, with its own vocabulary disclosure (:mod:`kldcard.evaluate.served`).
Relative paths are relative to the project file. Flags of ``kldcard evaluate`` build the same
:class:`Project` for the common case (one reference, N candidates, one text).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, ValidationError, field_validator, model_validator

from kldcard.errors import InputError
from kldcard.schema import CrossStack, RecordModel

__all__ = ["CandidateSpec", "ModelSpec", "Project", "TextSpec", "load_project"]


class ModelSpec(RecordModel):
    """A model run by an engine (``engine`` + ``model``), or an existing capture (``capture``)."""

    engine: str | None = Field(None, description="transformers | llama.cpp | mlx (aliases: hf, gguf)")
    model: str | None = Field(None, description="model directory or GGUF file")
    capture: str | None = Field(None, description="an existing capture directory (reference only)")
    basefile: str | None = Field(None, description="a llama-perplexity --kl-divergence-base file (reference only; "
                                 "use protocol: llama-perplexity and its -c)")
    settings: dict[str, Any] = Field(default_factory=dict, description="engine settings: dtype, threads, n_batch, ...")

    @model_validator(mode="after")
    def _one_source(self) -> ModelSpec:
        if self.capture is None and self.basefile is None and not (self.engine and self.model):
            raise ValueError("give engine and model, capture, or basefile")
        return self


class CandidateSpec(ModelSpec):
    # a name becomes file names (the cached result, .eval_results/kld-<name>.yaml): within 255 bytes
    name: str = Field(description="the candidate's name in the card", min_length=1, max_length=200)
    calibration: dict[str, Any] | None = Field(None, description="calibration disclosure (default: the project's)")
    quantization: str | None = Field(None, description="what the card states (default: read from the file)")
    keep: str | None = Field(None, description="also store this candidate's logits here (a capture, bf16)")
    cross_stack: CrossStack | None = Field(
        None, description="run on another stack than the reference on purpose: {coordinates: [engine, ...], "
        "reason: ...}; the card states it and KLD207 stays quiet for exactly these coordinates")
    server: str | None = Field(None, description="engine openai: base URL of the OpenAI-compatible server that "
                               "serves this candidate (model: the served model name)")
    top_k: int | None = Field(None, ge=1, description="engine openai: log-probabilities the server returns per position")
    tail: Literal["lumped", "union-renormalised"] = Field(
        "lumped", description="engine openai: how the unreported tail enters the KLD (lumped: a lower bound)")
    vocab_gguf: str | None = Field(None, description="engine openai, llama-cpp-python: the served GGUF, to map the "
                                   "server's token strings back to ids exactly (and read its quantization)")

    @field_validator("name")
    @classmethod
    def _file_name(cls, name: str) -> str:
        # the name becomes a file name (.eval_results/kld-<name>.yaml): refused here, before any engine runs
        bad = next((ch for ch in name if ch in '/\\:*?"<>|' or ord(ch) < 32 or ord(ch) == 127), None)
        if bad is not None or name.strip() in ("", ".", "..") or name != name.strip():
            what = f"contains {bad!r}" if bad is not None else "is empty, '.', '..' or padded with spaces"
            raise ValueError(f"candidate name {name!r} {what}; a name becomes a file name "
                             "(.eval_results/kld-NAME.yaml), so use letters, digits, '-', '_', '.'")
        return name

    @model_validator(mode="after")
    def _served(self) -> CandidateSpec:
        if (self.engine == "openai") != (self.server is not None):
            raise ValueError("a served candidate has engine: openai and server: URL (both or neither)")
        if self.server is not None and self.top_k is None:
            raise ValueError("a served candidate needs top_k (log-probabilities per position)")
        return self


class TextSpec(RecordModel):
    path: str
    name: str | None = None
    source: dict[str, Any] | str | None = Field(
        None, description="{dataset, config, split, revision}, {url} or {repo_file, sha256} (a file in the model repo)")


class Project(RecordModel):
    reference: ModelSpec
    candidates: list[CandidateSpec] = Field(min_length=1)
    text: TextSpec
    positions: str = "all"
    n_ctx: int | None = Field(None, ge=1)
    protocol: str | None = None
    align_vocab: str | None = None
    disclosures: dict[str, Any] = Field(default_factory=dict)
    card: str | None = None
    plot: str | None = None
    badge: str | None = Field(None, description="opt-in: a shields.io endpoint JSON file (the first candidate's "
                              "mean KLD and the reference), relative to the project file")
    model_name: str | None = None
    compact: bool = Field(True, description="shared stack once, per candidate what differs, the rest in kld_evaluation.json")
    cache: str = ".kldcard-cache"
    bootstrap: int = Field(1000, ge=0)
    seed: int = 0
    base: Path = Field(default_factory=Path.cwd, exclude=True, description="directory relative paths start from")
    source: Path | None = Field(None, exclude=True, description="the project file itself, when read from one")

    @field_validator("positions")
    @classmethod
    def _positions(cls, value: str) -> str:
        from kldcard.capture.positions import parse_positions
        from kldcard.errors import UsageError

        try:
            parse_positions(value)
        except UsageError as exc:
            raise ValueError(str(exc)) from None
        return value

    @model_validator(mode="after")
    def _unique(self) -> Project:
        names = [c.name for c in self.candidates]
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"candidate names must be unique: {', '.join(dup)}")
        return self

    def input_paths(self) -> list[Path]:
        """Every file or directory the run reads: the project file, the text, the models and captures."""
        specs = [self.reference, *self.candidates]
        named = [self.text.path, self.align_vocab, *(getattr(s, k) for s in specs
                                                    for k in ("capture", "basefile", "vocab_gguf")
                                                    if isinstance(getattr(s, k, None), str))]
        paths = [self.path(p) for p in named if p]
        for model in (self.path(s.model) for s in specs if s.model):
            # a model directory is its weights, config and tokenizer files: the card that lives next
            # to them in the model repo (model/README.md) is an output, not an input
            try:  # os.path.isdir: a served model's name may be no valid path at all (too long)
                paths += [f for f in model.iterdir() if f.suffix.lower() != ".md"] if os.path.isdir(model) else [model]
            except OSError:
                paths.append(model)
        return [p for p in [self.source, *paths] if p is not None]

    def check_outputs(self, extra: list[tuple[str, Path]] = ()) -> None:
        """The output policy (:func:`kldcard.files.check_output_file`) for the card, its sidecar, the
        plot and ``extra``, before anything is computed or written: none may be an input."""
        from kldcard.files import check_output_file

        inputs = self.input_paths()
        outs = [("card:", self.path(self.card)), ("plot:", self.path(self.plot)), *extra]
        if self.card and self.compact:
            from kldcard.render.metadata import SIDECAR_FILE

            outs.append(("sidecar", self.path(self.card).parent / SIDECAR_FILE))
        for option, out in outs:
            if out is not None:
                check_output_file(out, option, inputs)

    def path(self, p: str | None) -> Path | None:
        """``p`` resolved against the project file's directory."""
        if p is None:
            return None
        q = Path(os.path.expanduser(p))
        return q if q.is_absolute() else (self.base / q)


def load_project(path: str | os.PathLike[str]) -> Project:
    """Read and validate a project file (YAML or JSON); errors are one line naming the key."""
    import yaml

    from kldcard.card.document import yaml_error_parts
    from kldcard.card.yaml import compose_and_load
    from kldcard.files import read_text
    from kldcard.render.disclosures import first_error

    p = Path(path)
    try:
        _node, data = compose_and_load(read_text(p, "project file"))
    except yaml.YAMLError as exc:
        where, problem = yaml_error_parts(exc)
        raise InputError(f"{p}{where}: not valid YAML: {problem}") from None
    except RecursionError:
        raise InputError(f"{p}: the project file nests too deeply") from None
    if not isinstance(data, dict):
        raise InputError(f"{p}: a project file is a mapping (reference, candidates, text, ...)")
    try:
        return Project.model_validate({**data, "base": p.resolve().parent, "source": p})
    except ValidationError as exc:
        raise InputError(f"{p}: {first_error(exc)}") from None
