"""What "complete" means for a disclosure read from prose, and what to ask for when it is not.

From the schema's disclosure table (README, "The nine disclosures"), cut to what a sentence of a
card can carry: the keys below must all be read for ``stated``; anything less that was read is
``incomplete``, with the missing keys asked for in words. (The structured block asks for more:
backend, driver, hashes, ...; KLD1xx checks those.)
"""

from __future__ import annotations

from typing import Any

# disclosure -> alternatives: the reading is complete when every key of one alternative was read
REQUIRED: dict[int, tuple[tuple[str, ...], ...]] = {
    1: (("repo", "revision", "dtype"),),
    2: (("engine", "version"),),
    3: (("name", "source"), ("name", "sha256")),
    4: (("none",), ("dataset", "size")),
    5: (("n_ctx", "chunks"), ("n_ctx", "stride")),
    6: (("scheme", "count"),),
    7: (("direction",),),
    8: (("scheme",),),
    9: (("statistic",),),
}
# the disclosures whose reading can be incomplete (one KLD33n rule each): those with more than one
# required key, and D9, whose evidence may give an uncertainty or percentile but no statistic. D7 and
# D8 cannot: every statement their patterns find gives the direction / the scheme (read.values).
CAN_BE_INCOMPLETE = (1, 2, 3, 4, 5, 6, 9)

ASK = {  # key -> what to ask for
    (1, "repo"): "name the reference's repo id",
    (1, "revision"): "pin its revision (commit or sha256)",
    (1, "dtype"): "give its dtype (BF16 expected)",
    (2, "engine"): "name the engine that produced the logits",
    (2, "version"): "give the engine's version or build",
    (3, "name"): "name the text",
    (3, "source"): "give its source (dataset id with revision and split, or URL) or its sha256",
    (3, "sha256"): "give its source (dataset id with revision and split, or URL) or its sha256",
    (4, "dataset"): "name the calibration set",
    (4, "size"): "give its size",
    (4, "none"): "",
    (5, "n_ctx"): "give the context length (tokens per window)",
    (5, "chunks"): "give the number of windows/chunks (or the stride)",
    (5, "stride"): "give the number of windows/chunks (or the stride)",
    (6, "scheme"): "say which positions of each window were scored",
    (6, "count"): "give the number of scored positions",
    (7, "direction"): "say which direction: KL(P_ref ‖ P_cand) (forward), reverse or JS",
    (8, "scheme"): "say whether the full vocabulary was used, or top-k / a storage floor",
    (9, "statistic"): "say which statistic the numbers are (mean, median, p99, ...)",
}


def _gaps(alt: tuple[str, ...], value: dict[str, Any]) -> int:
    return sum(value.get(k) in (None, "") for k in alt)


def is_complete(disclosure: int, value: dict[str, Any]) -> bool:
    return any(all(value.get(k) not in (None, "") for k in alt) for alt in REQUIRED[disclosure])


def needs(disclosure: int, value: dict[str, Any]) -> tuple[str, ...]:
    """What is still to be given, in words (the nearest alternative's missing keys)."""
    if is_complete(disclosure, value):
        return ()
    alts = REQUIRED[disclosure]
    # nothing read: ask for the fullest alternative ("name the calibration set; give its size")
    best = max(alts, key=len) if not value else min(alts, key=lambda alt: (_gaps(alt, value), -len(alt)))
    asks: list[str] = []
    for k in best:
        ask = ASK[(disclosure, k)]
        if value.get(k) in (None, "") and ask and ask not in asks:
            asks.append(ask)
    return tuple(asks)
