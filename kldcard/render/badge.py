"""An optional badge for a card: a shields.io endpoint JSON file next to it.

shields.io draws a badge from any public JSON file of the shape ``{"schemaVersion": 1, "label": ...,
"message": ..., "color": ...}`` (``https://img.shields.io/endpoint?url=<raw URL of the file>``). The
message is one candidate's headline mean forward KL(P_ref ‖ P_cand) in nats with its interval, and the
label names the reference, so the badge never shows a bare number. Opt-in (``badge:`` in a
``kldcard evaluate`` project); deterministic bytes.
"""

from __future__ import annotations

import json

from kldcard.card.numbers import fmt_nats
from kldcard.errors import InputError
from kldcard.schema import KldEvaluation

__all__ = ["badge_json"]


def badge_json(ev: KldEvaluation, candidate: str | None = None) -> bytes:
    """The endpoint JSON for ``candidate`` (default: the first one in the card)."""
    cands = {c.name: c for c in ev.candidates}
    if candidate is not None and candidate not in cands:
        raise InputError(f"badge: no candidate {candidate!r} in the card (candidates: {', '.join(cands)})")
    c = cands[candidate] if candidate is not None else ev.candidates[0]
    k, what = c.results.kld, f"candidate {c.name!r}"
    message = f"{fmt_nats(k.mean, what)} nats"
    if k.ci_low is not None and k.ci_high is not None:
        message += f" [{fmt_nats(k.ci_low, what)}, {fmt_nats(k.ci_high, what)}]"
    message += f" ({c.model.quantization})"
    data = {"schemaVersion": 1, "label": f"KLD vs {ev.reference.model}", "message": message,
            "color": "blue" if k.mean < 0.01 else "green" if k.mean < 0.1 else "orange"}
    return (json.dumps(data, ensure_ascii=False, indent=2) + "\n").encode("utf-8")
