"""What a capture manifest says, checked against what can be recomputed, before a result copies it.

A compare result carries both manifests, and the card's disclosures come from them (text sha256,
context, positions, quantization). Manifests are plain JSON, so :func:`check_provenance` recomputes
what the stored data pin down and refuses (one :class:`CaptureMismatch` line, exit 2) a manifest
that says otherwise:

- positions: the scheme (``all``, ``every-n``, ``second-half``) and the context windows (``n_ctx``,
  ``n_chunks``) must agree with the stored positions and the number of tokens;
- text: the two captures' token ids are identical (checked by the caller), so they come from one
  text: both manifests must state the same sha256 and size; with the text at hand, its sha256;
- quantization: with the model's GGUF file at hand (``model.path``), what its tensor table says.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from kldcard.errors import CaptureMismatch, KldcardError

__all__ = ["check_provenance", "check_same_text"]

def check_provenance(cap, role: str, *, text: str | Path | None = None) -> None:
    """Raise CaptureMismatch when ``cap``'s manifest contradicts its own data (``role``: "reference"
    or "candidate", for the message); ``text``: the evaluation text file, when at hand."""
    m = cap.manifest
    where = f"{role} capture {cap.path}"
    _check_positions(cap, where)
    if text is not None:
        from kldcard.capture.fingerprint import sha256_bytes
        from kldcard.files import read_bytes

        data = read_bytes(text, "evaluation text")
        if m.text.sha256 is not None and sha256_bytes(data) != m.text.sha256:
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
    """What every capture's stated positions and windows imply about its stored positions (position i
    predicts token i + 1; windows of ``n_ctx`` tokens that do not overlap). Necessary conditions only,
    so a capture another tool wrote with its own window rules passes when it is what it says."""
    m = cap.manifest
    kind, ctx, pos, n_tok = m.positions.scheme, m.context, cap.positions, m.n_tokens

    def refuse(what: str) -> None:
        raise CaptureMismatch(f"{where}: its manifest's {what}; the manifest was edited or describes another capture")

    if ctx.n_ctx is not None:
        w, step = ctx.n_ctx, ctx.stride or ctx.n_ctx  # windows start every ``step`` tokens, ``w`` long
        if n_tok <= w:
            windows = {1}
        elif w > step:  # overlapping windows
            windows = {(n_tok - w) // step + 1, -(-(n_tok - w) // step) + 1}
        else:
            windows = {n_tok // step, -(-n_tok // step)}
        if ctx.n_chunks is not None and ctx.n_chunks not in windows:
            refuse(f"context (n_ctx {w}, stride {step}, {ctx.n_chunks} window(s)) does not fit its {n_tok} tokens "
                   f"({' or '.join(map(str, sorted(windows)))} window(s))")
        if len(pos) and ctx.n_chunks is not None and int(pos[-1]) >= (ctx.n_chunks - 1) * step + w:
            refuse(f"context ({ctx.n_chunks} window(s) of n_ctx {w}) ends before stored position {int(pos[-1])}")
        if len(pos) and step >= w and np.any(pos % step >= w):
            refuse(f"context (windows of n_ctx {w} every {step} tokens) leaves out stored positions")
        if kind == "second-half" and len(pos) and step == w and np.any(pos % w < w // 2):
            refuse(f"positions (second half of each n_ctx {w} window) include a first-half position")
    if kind == "every-n":
        n, off = m.positions.every_n, m.positions.offset or 0
        if not n or (len(pos) and (pos[0] < off or np.any((pos - off) % n))):
            refuse(f"positions (every {n} from offset {off}) are not the stored positions")
    if kind == "all":
        # every position but the last of each window (its next token is in the next window)
        windows = ctx.n_chunks or 1
        if len(pos) < n_tok - 1 - windows:
            refuse(f"positions (all) are not the stored positions ({len(pos)} of {n_tok} tokens)")
