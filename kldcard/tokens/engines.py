"""Tokenizer-only views of each engine: the same call each engine makes, without loading weights.

``add_bos`` and ``special`` are explicit everywhere:

- ``add_bos=None`` is the engine's *default* call (what a user of that engine gets without
  thinking): transformers ``tokenizer.encode(text)`` (adds whatever the tokenizer's post-processor
  adds), llama-cpp-python ``Llama.tokenize(text)`` (adds BOS when the GGUF says
  ``tokenizer.ggml.add_bos_token``), mlx-lm's ``generate`` rule (add special tokens unless the text
  already starts with the BOS string).
- ``add_bos=True`` asks the engine for no special tokens and prepends BOS exactly once;
  ``add_bos=False`` adds nothing.
- ``special=None`` keeps each engine's default for special-token strings found in the text
  (transformers and mlx-lm parse them; llama-cpp-python's ``tokenize`` treats them as text);
  ``True`` parses them everywhere, ``False`` treats them as plain text everywhere.

For chat, each engine renders its own template the way its chat path does and then tokenizes the
rendered prompt the way that path does (transformers ``apply_chat_template``: no special tokens
added; llama-cpp-python: ``add_bos = not added_special``, specials parsed; mlx-lm: no special tokens
added). ``add_bos=True`` on a chat prompt reproduces the double-BOS trap on purpose.
"""

from __future__ import annotations

import functools
import json
from importlib import metadata as _md
from pathlib import Path
from typing import Any

from kldcard.engines import not_installed
from kldcard.errors import InputError
from kldcard.tokens.specs import EngineSpec


def _version(dist: str) -> str:
    try:
        return _md.version(dist)
    except _md.PackageNotFoundError:  # pragma: no cover - the import above would have failed
        return "unknown"


_LABEL_DISTS = {"transformers": ("transformers", "transformers"), "mlx": ("mlx-lm", "mlx-lm"),
                "llama.cpp": ("llama-cpp-python", "llama_cpp_python")}


def engine_label(engine: str) -> str:
    """What a parity disclosure calls an engine's tokenizer: ``transformers 5.24.0``,
    ``llama-cpp-python 0.3.36``, ``mlx-lm 0.28.0`` (known without loading anything)."""
    name, dist = _LABEL_DISTS[engine]
    return f"{name} {_version(dist)}"


def looks_like_markup(text: str) -> bool:
    """``<...>`` or ``[...]`` without whitespace: a special-token-like string (``<|im_start|>``)."""
    return (
        len(text) >= 3
        and text[0] in "<[" and text[-1] in ">]"
        and not any(c.isspace() for c in text)
    )


class EngineTokenizer:
    """Common surface. Subclasses fill the attributes in ``__init__``."""

    spec: EngineSpec
    engine_label: str  # e.g. "transformers 5.24.0" (what the disclosure lists)
    bos_id: int | None
    eos_ids: set[int]
    special_ids: set[int]
    special_texts: set[str]
    n_tokens: int  # tokenizer size (ids 0..n_tokens-1 exist)
    default_parses_special: bool

    # -- per engine -------------------------------------------------------------------------
    def _encode(self, text: str, *, engine_specials: bool, special: bool) -> list[int]:
        raise NotImplementedError

    def _default_adds_specials(self, text: str) -> bool:
        return True

    def piece(self, token: int) -> str:
        raise NotImplementedError

    def decode(self, ids: list[int]) -> str:
        raise NotImplementedError

    def render_chat(self, messages: list[dict[str, Any]]) -> tuple[str, bool]:
        """Rendered prompt and whether the chat path adds BOS itself when tokenizing it."""
        raise NotImplementedError

    # -- shared -----------------------------------------------------------------------------
    @property
    def label(self) -> str:
        return self.spec.label

    def default_adds_bos(self) -> bool:
        """Whether the engine's default call on plain text starts with BOS."""
        if self.bos_id is None:
            return False
        return self._encode("a", engine_specials=True, special=self.default_parses_special)[:1] == [
            self.bos_id
        ]

    def tokenize(
        self, text: str, *, add_bos: bool | None, special: bool | None
    ) -> tuple[list[int], str]:
        """Token ids and a phrase saying how BOS was handled."""
        parse = self.default_parses_special if special is None else special
        if add_bos is None:
            engine_specials = self._default_adds_specials(text)
            ids = self._encode(text, engine_specials=engine_specials, special=parse)
            how = "engine default" + ("" if engine_specials else " (engine skipped: text starts with BOS)")
            return ids, how
        ids = self._encode(text, engine_specials=False, special=parse)
        if add_bos:
            ids = [self._require_bos(), *ids]
            return ids, "prepended by kldcard"
        return ids, "none"

    def tokenize_chat(self, rendered: str, path_adds_bos: bool, *, add_bos: bool | None) -> tuple[list[int], str]:
        if add_bos is None:
            ids = self._encode(rendered, engine_specials=path_adds_bos, special=True)
            if path_adds_bos:
                return ids, "chat path lets the engine add BOS"
            return ids, "chat path adds nothing (the template decides)"
        ids = self._encode(rendered, engine_specials=False, special=True)
        if add_bos:
            return [self._require_bos(), *ids], "prepended by kldcard"
        return ids, "none"

    def _require_bos(self) -> int:
        if self.bos_id is None:
            raise InputError(f"{self.label}: this tokenizer has no BOS token; use --add-bos no or auto")
        return self.bos_id


# ------------------------------------------------------------------------------------------------
# transformers (and mlx-lm, which wraps a transformers tokenizer)
# ------------------------------------------------------------------------------------------------


def _check_config_vocab(spec: EngineSpec, n_tokens: int) -> None:
    """A model dir's config.json vocab_size must have a row for every tokenizer id."""
    cfg = spec.path / "config.json"
    if not cfg.is_file():
        return
    try:
        data = json.loads(cfg.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"{spec}: config.json is not readable JSON ({exc})") from None
    vocab = data.get("vocab_size", (data.get("text_config") or {}).get("vocab_size"))
    if isinstance(vocab, int) and n_tokens > vocab:
        raise InputError(
            f"{spec}: tokenizer has {n_tokens} tokens but config.json vocab_size is {vocab}; "
            "the tokenizer files do not belong to this model"
        )


class HfTokenizer(EngineTokenizer):
    default_parses_special = True

    def __init__(self, spec: EngineSpec, tok: Any = None):
        self.spec = spec
        if tok is None:
            try:
                from transformers import AutoTokenizer
            except ImportError as exc:
                raise not_installed("transformers", exc.name) from None
            if not (spec.path / "tokenizer.json").is_file() and not (
                spec.path / "tokenizer_config.json"
            ).is_file():
                raise InputError(f"{spec}: no tokenizer.json or tokenizer_config.json in the folder")
            try:
                tok = AutoTokenizer.from_pretrained(str(spec.path), local_files_only=True)
            except (OSError, ValueError, KeyError) as exc:
                raise InputError(f"{spec}: cannot load the tokenizer ({exc})") from None
        self.tok = tok
        self.engine_label = engine_label("transformers")
        self.bos_id = tok.bos_token_id
        self.eos_ids = {tok.eos_token_id} if tok.eos_token_id is not None else set()
        # Added tokens are matched in the text before BPE (special or not); the markup-like ones
        # (<think>, </s>, [INST]) are what a special-token parsing difference is about. Gemma 3
        # also adds whitespace runs, which would make every nearby difference look "special".
        added = {i: a.content for i, a in tok.added_tokens_decoder.items() if a.special or looks_like_markup(a.content)}
        self.special_ids = set(tok.all_special_ids) | set(added)
        self.special_texts = set(added.values())
        self.n_tokens = len(tok)
        _check_config_vocab(spec, self.n_tokens)

    def _encode(self, text: str, *, engine_specials: bool, special: bool) -> list[int]:
        return list(
            self.tok.encode(text, add_special_tokens=engine_specials, split_special_tokens=not special)
        )

    def piece(self, token: int) -> str:
        p = self.tok.convert_ids_to_tokens(int(token))
        return "" if p is None else str(p)

    def decode(self, ids: list[int]) -> str:
        return self.tok.decode(ids, skip_special_tokens=False, clean_up_tokenization_spaces=False)

    def render_chat(self, messages: list[dict[str, Any]]) -> tuple[str, bool]:
        if self.tok.chat_template is None:
            raise InputError(f"{self.label}: the tokenizer has no chat template")
        text = self.tok.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return str(text), False


class MlxTokenizer(HfTokenizer):
    """mlx-lm's ``TokenizerWrapper`` (``mlx_lm.utils.load_tokenizer``)."""

    def __init__(self, spec: EngineSpec):
        try:
            from mlx_lm.utils import load_tokenizer
        except ImportError as exc:
            raise not_installed("mlx", exc.name) from None
        if not (spec.path / "tokenizer.json").is_file():
            raise InputError(f"{spec}: no tokenizer.json in the folder")
        try:
            self.wrapper = load_tokenizer(spec.path)
        except (OSError, ValueError, KeyError) as exc:
            raise InputError(f"{spec}: cannot load the tokenizer ({exc})") from None
        super().__init__(spec, tok=self.wrapper._tokenizer)
        self.engine_label = engine_label("mlx")

    def _default_adds_specials(self, text: str) -> bool:
        # mlx_lm.generate.stream_generate: skip special tokens when the prompt already has BOS.
        bos = self.tok.bos_token
        return bos is None or not text.startswith(bos)

    def render_chat(self, messages: list[dict[str, Any]]) -> tuple[str, bool]:
        if not self.wrapper.has_chat_template:
            raise InputError(f"{self.label}: the tokenizer has no chat template")
        text = self.wrapper.apply_chat_template(messages, tokenize=False, add_generation_prompt=True)
        return str(text), False


# ------------------------------------------------------------------------------------------------
# llama.cpp via llama-cpp-python
# ------------------------------------------------------------------------------------------------


class LlamaCppTokenizer(EngineTokenizer):
    default_parses_special = False  # Llama.tokenize(text, add_bos=True, special=False)

    def __init__(self, spec: EngineSpec):
        try:
            import llama_cpp
            from llama_cpp._internals import LlamaModel
        except ImportError as exc:
            raise not_installed("llama.cpp", exc.name) from None
        self.spec = spec
        from kldcard.stack.gguf_header import read_gguf_header

        try:  # a truncated file (cut at 1 MB, or after its magic) is refused before llama.cpp opens it
            read_gguf_header(spec.path)
        except (ValueError, OSError) as exc:
            raise InputError(f"{spec}: not a readable GGUF file ({exc})") from None
        params = llama_cpp.llama_model_default_params()
        params.vocab_only = True
        try:
            # LlamaModel is what Llama() wraps; Llama() itself would also build a context, which
            # a vocab-only file cannot have.
            self.model = LlamaModel(path_model=str(spec.path), params=params, verbose=False)
        except ValueError:
            raise InputError(self._why_unloadable(spec)) from None
        self.engine_label = engine_label("llama.cpp")
        self.meta = self.model.metadata()
        n = self.model.n_vocab()
        if n <= 0:
            raise InputError(f"{spec}: the GGUF has no vocabulary (tokenizer.ggml.tokens missing)")
        key = f"{self.meta.get('general.architecture', '')}.vocab_size"
        if key in self.meta and int(self.meta[key]) != n:
            raise InputError(
                f"{spec}: {key} is {self.meta[key]} but the vocabulary has {n} tokens; "
                "the tokenizer does not match the model"
            )
        self.n_tokens = n
        self.bos_id = self.model.token_bos() if "tokenizer.ggml.bos_token_id" in self.meta else None
        self.eos_ids = {self.model.token_eos(), self.model.token_eot()} - {-1}
        # CONTROL tokens are parsed only with special=True; USER_DEFINED ones always.
        parsed = llama_cpp.LLAMA_TOKEN_ATTR_CONTROL | llama_cpp.LLAMA_TOKEN_ATTR_USER_DEFINED
        control = llama_cpp.LLAMA_TOKEN_ATTR_CONTROL
        self.special_ids = set()
        for i in range(n):
            attr = self.model.token_get_attr(i)
            if attr & control or (attr & parsed and looks_like_markup(self.model.token_get_text(i))):
                self.special_ids.add(i)
        self.special_texts = {self.model.token_get_text(i) for i in self.special_ids}

    @staticmethod
    def _why_unloadable(spec: EngineSpec) -> str:
        """Name the reason llama.cpp refused the file (only on the error path: reading is slow)."""
        import gguf

        try:
            fields = gguf.GGUFReader(spec.path).fields
        except (ValueError, OSError, IndexError, KeyError, TypeError) as exc:  # numpy views past a cut end
            return f"{spec}: not a readable GGUF file ({exc})"
        if "tokenizer.ggml.tokens" not in fields:
            return f"{spec}: the GGUF has no vocabulary (tokenizer.ggml.tokens missing)"
        return f"{spec}: llama.cpp cannot load this GGUF's vocabulary"

    def _encode(self, text: str, *, engine_specials: bool, special: bool) -> list[int]:
        return list(self.model.tokenize(text.encode("utf-8"), engine_specials, special))

    def piece(self, token: int) -> str:
        return self.model.token_get_text(int(token))

    def decode(self, ids: list[int]) -> str:
        out = b"".join(self._piece_bytes(i) for i in ids)
        return out.decode("utf-8", errors="replace")

    def _piece_bytes(self, token: int) -> bytes:
        import ctypes

        import llama_cpp

        buf = ctypes.create_string_buffer(256)
        n = llama_cpp.llama_token_to_piece(self.model.vocab, int(token), buf, 256, 0, True)
        return bytes(buf[: max(n, 0)])

    def render_chat(self, messages: list[dict[str, Any]]) -> tuple[str, bool]:
        # Mirrors Llama.__init__: a built-in formatter when the template is one llama-cpp-python
        # recognises, else Jinja2ChatFormatter over tokenizer.chat_template with the BOS/EOS text.
        from llama_cpp import llama_chat_format as lcf

        template = self.meta.get("tokenizer.chat_template")
        if template is None:
            raise InputError(f"{self.label}: the GGUF has no tokenizer.chat_template")
        guessed = lcf.guess_chat_format_from_gguf_metadata(self.meta)
        builtin = {"chatml": "format_chatml", "mistral-instruct": "format_mistral_instruct",
                   "llama-3": "format_llama3"}.get(guessed or "")
        if builtin:
            result = getattr(lcf, builtin)(messages=messages)
        else:
            bos, eos = self.model.token_bos(), self.model.token_eos()
            formatter = lcf.Jinja2ChatFormatter(
                template=template,
                eos_token=self.model.token_get_text(eos) if eos != -1 else "",
                bos_token=self.model.token_get_text(bos) if bos != -1 else "",
                stop_token_ids=[eos],
            )
            result = formatter(messages=messages)
        return result.prompt, not result.added_special


_LOADERS = {"transformers": HfTokenizer, "llama.cpp": LlamaCppTokenizer, "mlx": MlxTokenizer}


def _signature(path: Path) -> tuple:
    """What identifies the files behind a spec: a changed file means a fresh load."""
    files = [path] if path.is_file() else sorted(p for p in path.iterdir() if p.is_file())
    return tuple((p.name, (st := p.stat()).st_size, st.st_mtime_ns) for p in files)


@functools.lru_cache(maxsize=6)
def _load_cached(engine: str, path: Path, signature: tuple) -> EngineTokenizer:
    return _LOADERS[engine](EngineSpec(engine, path))


def load_tokenizer(spec: EngineSpec) -> EngineTokenizer:
    """Tokenizer-only loader for ``spec`` (no weights are read).

    Loading a real tokenizer takes seconds (Gemma 3's tokenizer.json is 33 MB), so a loaded one
    is reused within the process while its files are unchanged (same names, sizes, mtimes).
    """
    path = spec.path.resolve()
    return _load_cached(spec.engine, path, _signature(path))
