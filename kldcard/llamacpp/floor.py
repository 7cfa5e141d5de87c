"""The base-file format's own noise floor: a reference scored against its own uint16 encoding.

When a llama.cpp base file is the reference, no comparison can resolve divergences much below what
the encoding itself introduces (quantisation step ≤ floor/65535 nats, entries below max − floor
collapsed to one code, the −16 cutoff on terms). This measures it per token on given float32 logits:

- ``llama``: llama.cpp's own per-token KLD (:func:`.stats.per_token`) of the *original* logits
  (as the candidate Q) against their encoded record (as P_base) — what llama-perplexity prints for a
  model scored against its own file on a bit-identical stack;
- ``float64``: kldcard's float64 KL(P_decoded ‖ P_original) over the full vocabulary
  (:func:`kldcard.compare.divergence.divergence_logits`), the decoded record renormalised, with code-0
  entries decoded to ``min_log_prob`` (as llama.cpp's reader sees them: every tail entry gets the
  floor probability, which with a 150k vocabulary adds real mass);
- ``float64_masked``: the same with code-0 entries decoded to −inf (probability 0, "truncated").

All in nats, forward direction (the decoded base is the reference).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kldcard.llamacpp.basefile import (
    MAINLINE_FLOOR_NATS,
    decode_codes,
    encode_records,
    split_records,
)
from kldcard.llamacpp.stats import per_token


@dataclass
class FormatFloor:
    """Per-token floors (nats) and their summaries."""

    llama: np.ndarray  # float64 [n]
    float64: np.ndarray  # float64 [n]
    float64_masked: np.ndarray  # float64 [n]
    floor_nats: float

    def summary(self) -> dict:
        def s(x: np.ndarray) -> dict | None:
            if np.isnan(x).any():
                return None
            return {"mean": float(np.mean(x)), "median": float(np.median(x)), "max": float(np.max(x)),
                    "min": float(np.min(x))}

        return {
            "n_tokens": int(len(self.llama)),
            "floor_nats": self.floor_nats,
            "units": "nats",
            "direction": "forward: KL(P_decoded_base || P_original)",
            "llama_cpp_formula": s(self.llama),
            "float64_full_vocab": s(self.float64),
            "float64_full_vocab_masked_floor": s(self.float64_masked),
        }


def measure_format_floor(
    logits: np.ndarray, *, floor_nats: float = MAINLINE_FLOOR_NATS, float64: bool = True, block: int = 32
) -> FormatFloor:
    """Encode float32 ``logits`` ``[n, V]`` as base records and score them against themselves.
    ``float64=False`` skips the (slower) float64 measures, leaving them NaN."""
    z_all = np.asarray(logits, dtype=np.float32)
    n, v = z_all.shape
    from kldcard.compare.divergence import divergence_logits

    llama = np.empty(n)
    f64 = np.full(n, np.nan)
    f64m = np.full(n, np.nan)
    for a in range(0, n, block):
        z = z_all[a : a + block]
        raw = encode_records(z, floor_nats)
        targets = np.argmax(z, axis=1)  # the target only affects NLL/Δp, not KLD
        llama[a : a + len(z)] = per_token(z, raw, targets, v).kld
        if not float64:
            continue
        scale, mn, codes = split_records(raw, v)
        lp = decode_codes(codes, scale, mn)
        f64[a : a + len(z)] = divergence_logits(lp, z).forward_kl
        lp[codes == 0] = -np.inf
        # the kernel's −inf path computes (−inf) − (−inf) in scratch entries it then discards
        with np.errstate(invalid="ignore"):
            f64m[a : a + len(z)] = divergence_logits(lp, z).forward_kl
    return FormatFloor(llama, f64, f64m, floor_nats)
