"""Token parity across engines: tokenize with each, compare, classify, decide.

A BOS or chat-template difference changes the *input*, so it shifts the logits at every position
and would masquerade as quantization error in a KLD run; this check runs before any capture.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any, Union

from kldcard import files
from kldcard.errors import InputError, TokenMismatch
from kldcard.tokens.diff import describe_mismatch, first_char_difference, leading_bos
from kldcard.tokens.engines import EngineTokenizer, engine_label, load_tokenizer
from kldcard.tokens.report import ChatDiff, EngineResult, ParityReport
from kldcard.tokens.specs import EngineSpec, parse_spec

SpecLike = Union[str, EngineSpec, EngineTokenizer]
_MODES = {"auto": None, "yes": True, "no": False, "parse": True, "text": False}


def _mode(value: str | bool | None, names: tuple[str, str, str]) -> tuple[bool | None, str]:
    """Normalise ``None``/``"auto"``/bool/name into (flag, name)."""
    if value is None or value == "auto":
        return None, "auto"
    if isinstance(value, bool):
        return value, names[1] if value else names[2]
    if value not in names:
        raise InputError(f"expected one of {', '.join(names)}, got {value!r}")
    return _MODES[value], value


def read_text(path: str | Path) -> str:
    """The exact UTF-8 text of ``path``; one-line :class:`InputError` when empty or not UTF-8."""
    text = files.read_text(path, "text")
    if not text:
        raise InputError(f"{path}: the text is empty; nothing to tokenize")
    return text


def read_conversation(path: str | Path) -> list[dict[str, str]]:
    """A chat conversation: a JSON list of ``{"role": ..., "content": ...}`` objects."""
    text = read_text(path)
    data = files.loads_json(text, str(path))  # nesting, 1e400 and huge integers are one line too
    if not isinstance(data, list) or not data or not all(
        isinstance(m, dict) and isinstance(m.get("role"), str) and isinstance(m.get("content"), str)
        for m in data
    ):
        raise InputError(f'{path}: expected a non-empty JSON list of {{"role": str, "content": str}}')
    return data


def load_tokenizers(specs: Sequence[SpecLike]) -> list[EngineTokenizer]:
    if len(specs) < 2:
        raise InputError("token parity needs at least two engine specs (e.g. hf:DIR llama.cpp:FILE.gguf)")
    return [s if isinstance(s, EngineTokenizer) else load_tokenizer(parse_spec(s)) for s in specs]


def _finish(
    toks: list[EngineTokenizer],
    results: list[EngineResult],
    texts: list[str],
    *,
    add_bos: str,
    special: str,
    chat: bool,
    n_ctx: int | None,
) -> ParityReport:
    for t, r in zip(toks, results):
        if n_ctx is not None and r.n_tokens > n_ctx:
            raise InputError(
                f"{t.label}: the text is {r.n_tokens} tokens, longer than the context n_ctx={n_ctx}"
            )
        if r.n_tokens == 0:
            raise InputError(f"{t.label}: the text tokenizes to zero tokens")
        biggest = max(r.ids)
        for other in toks:
            if biggest >= other.n_tokens:
                raise InputError(
                    f"{t.label} produced id {biggest} but {other.label} has only {other.n_tokens} "
                    "tokens; the tokenizer files disagree with the model's vocabulary"
                )
    report = ParityReport(
        engines=results,
        tokens_checked=min(r.n_tokens for r in results),
        outcome="identical",
        add_bos=add_bos,
        special=special,
        chat=chat,
    )
    ref, tref = results[0], toks[0]
    for t, r, txt in zip(toks[1:], results[1:], texts[1:]):
        if chat:
            c = first_char_difference(texts[0], txt)
            if c is not None:
                lo = max(0, c - 20)
                report.chat_diffs.append(
                    ChatDiff(tref.label, t.label, c, texts[0][lo : c + 40], txt[lo : c + 40])
                )
        m = describe_mismatch(texts[0], ref.ids, r.ids, tref, t)
        if m is not None:
            if chat and report.chat_diffs and report.chat_diffs[-1].b == t.label:
                d = report.chat_diffs[-1]
                m.kind = "chat template"
                m.detail = f"the rendered prompts differ from character {d.char}; {m.detail}"
            report.mismatches.append(m)
    if report.mismatches:
        report.outcome = "mismatch"
    for r in results:
        if r.leading_bos >= 2:
            report.warnings.append(
                f"{r.spec} starts with {r.leading_bos} BOS tokens (double BOS): every logit is "
                "computed on a different input than the model was trained on"
            )
    defaults = {r.default_adds_bos for r in results if r.bos_id is not None}
    if add_bos == "auto" and not chat and len(defaults) > 1:
        who = ", ".join(f"{r.spec}={'adds' if r.default_adds_bos else 'no'}" for r in results)
        report.warnings.append(f"engines disagree on adding BOS by default ({who})")
    return report


def _result(t: EngineTokenizer, ids: list[int], how: str, parses: bool, rendered: str | None) -> EngineResult:
    return EngineResult(
        spec=t.label,
        engine=t.spec.engine,
        engine_label=t.engine_label,
        n_tokens=len(ids),
        bos_id=t.bos_id,
        default_adds_bos=t.default_adds_bos(),
        bos_handling=how,
        leading_bos=leading_bos(ids, t.bos_id),
        parses_special=parses,
        ids=ids,
        rendered=rendered,
    )


def check_parity(
    text: str,
    specs: Sequence[SpecLike],
    *,
    add_bos: str | bool | None = None,
    special: str | bool | None = None,
    n_ctx: int | None = None,
    ref_ids: Sequence[int] | None = None,
) -> ParityReport:
    """Tokenize ``text`` with every engine and compare the ids against ``specs[0]``.

    ``add_bos``: ``None``/"auto" (each engine's default), "yes"/True (exactly one BOS), "no"/False.
    ``special``: ``None``/"auto" (each engine's default), "parse"/True, "text"/False.
    ``n_ctx``: when given, a text longer than the context is an :class:`InputError`.
    ``ref_ids``: ids to use for ``specs[0]`` instead of tokenizing (what a capture really feeds).
    """
    if not text:
        raise InputError("the text is empty; nothing to tokenize")
    bos_flag, bos_name = _mode(add_bos, ("auto", "yes", "no"))
    sp_flag, sp_name = _mode(special, ("auto", "parse", "text"))
    toks = load_tokenizers(specs)
    results = []
    for k, t in enumerate(toks):
        ids, how = t.tokenize(text, add_bos=bos_flag, special=sp_flag)
        if k == 0 and ref_ids is not None:
            ids, how = [int(i) for i in ref_ids], "as fed by the capture"
        parses = t.default_parses_special if sp_flag is None else sp_flag
        results.append(_result(t, ids, how, parses, None))
    return _finish(toks, results, [text] * len(toks), add_bos=bos_name, special=sp_name, chat=False, n_ctx=n_ctx)


def check_chat_parity(
    messages: list[dict[str, Any]],
    specs: Sequence[SpecLike],
    *,
    add_bos: str | bool | None = None,
    n_ctx: int | None = None,
) -> ParityReport:
    """Render ``messages`` with each engine's own chat template and chat path, compare prompts and ids.

    With ``add_bos`` "auto" each engine tokenizes the rendered prompt as its chat path does; "yes"
    prepends BOS to a prompt whose template may already contain one (the double-BOS trap).
    """
    if not messages:
        raise InputError("the conversation is empty")
    bos_flag, bos_name = _mode(add_bos, ("auto", "yes", "no"))
    toks = load_tokenizers(specs)
    results, texts = [], []
    for t in toks:
        rendered, path_adds_bos = t.render_chat(messages)
        ids, how = t.tokenize_chat(rendered, path_adds_bos, add_bos=bos_flag)
        results.append(_result(t, ids, how, True, rendered))
        texts.append(rendered)
    return _finish(toks, results, texts, add_bos=bos_name, special="parse", chat=True, n_ctx=n_ctx)


def require_parity(text: str, specs: Sequence[SpecLike], **kwargs: Any) -> ParityReport:
    """:func:`check_parity`, raising :class:`TokenMismatch` at the first mismatch."""
    report = check_parity(text, specs, **kwargs)
    raise_for_mismatch(report)
    return report


def raise_for_mismatch(report: ParityReport) -> None:
    m = report.first_mismatch
    if m is None:
        return
    raise TokenMismatch(
        m.position,
        m.ids_a[m.position - m.window_start] if m.position - m.window_start < len(m.ids_a) else None,
        m.ids_b[m.position - m.window_start] if m.position - m.window_start < len(m.ids_b) else None,
        f"{m.kind} ({m.a} vs {m.b}): {m.detail}",
    )


def parity_for_capture(
    engine_spec: SpecLike,
    others: Sequence[SpecLike],
    text: str,
    *,
    ids: Sequence[int] | None = None,
    add_bos: str | bool | None = None,
    special: str | bool | None = "parse",
    n_ctx: int | None = None,
    override: bool = False,
) -> dict[str, Any]:
    """The ``tokenizer_parity`` dict for a capture manifest (``schema.TokenizerParity`` shape).

    ``engine_spec`` is the capturing engine (``transformers:DIR``, ``llama.cpp:FILE``, ``mlx:DIR``),
    ``others`` the engines whose captures this one will be compared with. ``ids``, when given, are
    the ids the capture will actually feed (``EngineModel.tokenize(text).ids``); they replace the
    capturing engine's row so that parity is checked on the real input. The others are tokenized
    with ``add_bos``/``special`` (default: each engine's own BOS, special-token strings parsed —
    what the capture adapters do).

    On a mismatch it raises :class:`TokenMismatch` (the capture must not run) unless ``override``
    is true; then the outcome is recorded as ``"overridden"``. With no ``others`` nothing is
    compared: the capturing engine alone is listed, 0 tokens checked, outcome ``identical``.
    """
    if not text:
        raise InputError("the text is empty; nothing to tokenize")
    if not others:  # nothing to compare, so nothing to load (a vocab-only load costs ~0.5 s)
        if isinstance(engine_spec, EngineTokenizer):
            label = f"{engine_spec.engine_label}: {engine_spec.spec.path.name}"
        else:
            spec = parse_spec(engine_spec)
            label = f"{engine_label(spec.engine)}: {spec.path.name}"
        return {"engines": [label], "tokens_checked": 0, "outcome": "identical"}
    first = engine_spec if isinstance(engine_spec, EngineTokenizer) else load_tokenizer(parse_spec(engine_spec))
    report = check_parity(text, [first, *others], add_bos=add_bos, special=special, n_ctx=n_ctx, ref_ids=ids)
    if report.outcome == "mismatch":
        if not override:
            raise_for_mismatch(report)
        report = report.overridden()
    return report.to_disclosure()
