"""What a capture manifest says, checked against what can be recomputed, before a result copies it.

A compare result carries both manifests, and the card's disclosures come from them (text sha256,
context, positions, quantization). Manifests are plain JSON, so :func:`check_provenance` recomputes
what the stored data pin down and refuses (one :class:`CaptureMismatch` line, exit 2) a manifest
that says otherwise:

- positions: the scheme (``all``, ``every-n``, ``second-half``) and the context windows (``n_ctx``,
  ``n_chunks``, ``stride``) must reproduce the stored positions exactly;
- text: the two captures' token ids are identical (checked by the caller), so they come from one
  text: both manifests must state the same sha256 and size; with the text at hand, its sha256;
- quantization: with the model's GGUF file at hand (``model.path``), what its tensor table says.
"""

from __future__ import annotations

import hashlib
from pathlib import Path

import numpy as np

from kldcard.errors import CaptureMismatch, KldcardError

__all__ = ["check_provenance", "check_same_text"]

_RECOMPUTABLE = ("all", "every-n", "second-half")


def check_provenance(cap, role: str, *, text: str | Path | None = None) -> None:
    """Raise CaptureMismatch when ``cap``'s manifest contradicts its own data (``role``: "reference"
    or "candidate", for the message); ``text``: the evaluation text file, when at hand."""
    m = cap.manifest
    where = f"{role} capture {cap.path}"
    _check_positions(cap, where)
    if text is not None:
        from kldcard.files import read_bytes

        data = read_bytes(text, "evaluation text")
        if m.text.sha256 is not None and hashlib.sha256(data).hexdigest() != m.text.sha256:
            raise CaptureMismatch(f"{where}: its manifest's text sha256 is not that of {text}; the manifest was "
                                  "edited or the capture is of another text")
    path = Path(m.model.path) if m.model.path else None
    if m.model.quantization and path is not None and path.is_file() and path.suffix.lower() == ".gguf":
        from kldcard.capture.quantization import contradiction, model_quantization

        try:
            why = contradiction(m.model.quantization, model_quantization(path))
        except KldcardError:  # the file changed into something unreadable: nothing to check against
            why = None
        if why:
            raise CaptureMismatch(f"{where}: its manifest says quantization {m.model.quantization!r}, but {path}'s "
                                  f"tensor table says otherwise ({why.split(' but ', 1)[-1]})")


def check_same_text(ref, cand) -> None:
    """Identical token ids come from one text: the manifests must agree on its sha256 and size."""
    a, b = ref.manifest.text, cand.manifest.text
    for what, x, y in (("sha256", a.sha256, b.sha256), ("size", a.n_bytes, b.n_bytes)):
        if x is not None and y is not None and x != y:
            raise CaptureMismatch(f"the captures have identical token ids but their manifests give the text {what} "
                                  f"as {x} and {y}; a manifest was edited")


def _check_positions(cap, where: str) -> None:
    from kldcard.capture.positions import PositionScheme, make_windows, select_positions

    m = cap.manifest
    kind, ctx = m.positions.scheme, m.context
    if kind not in _RECOMPUTABLE or ctx.n_ctx is None:
        return
    scheme = PositionScheme(kind, every_n=m.positions.every_n, offset=m.positions.offset or 0)
    if kind == "every-n" and not scheme.every_n:
        raise CaptureMismatch(f"{where}: its manifest says positions every-n without every_n")
    try:
        windows = make_windows(m.n_tokens, ctx.n_ctx, scheme)
        want = select_positions(scheme, windows)
    except KldcardError as exc:
        raise CaptureMismatch(f"{where}: its manifest's positions and context cannot describe this capture ({exc})") \
            from None
    if windows.n_ctx != ctx.n_ctx or (ctx.n_chunks is not None and ctx.n_chunks != windows.n_windows) \
            or (ctx.stride is not None and ctx.stride != windows.n_ctx):
        raise CaptureMismatch(f"{where}: its manifest's context (n_ctx {ctx.n_ctx}, {ctx.n_chunks} window(s), stride "
                              f"{ctx.stride}) is not what {m.n_tokens} tokens in windows of n_ctx {ctx.n_ctx} give "
                              f"(n_ctx {windows.n_ctx}, {windows.n_windows} window(s)); the manifest was edited")
    if not np.array_equal(want, cap.positions):
        detail = f"every_n {scheme.every_n}, offset {scheme.offset}, " if kind == "every-n" else ""
        raise CaptureMismatch(f"{where}: its manifest's positions ({kind}, {detail}n_ctx {ctx.n_ctx}) do not give the "
                              f"{len(cap.positions)} stored positions (they give {len(want)}); the manifest was edited")
