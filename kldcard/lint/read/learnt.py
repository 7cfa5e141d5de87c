"""A learnt second reading, for what the rules cannot read: a disclosure the card seems to state.

The reader's rules read a value (a repo id, an engine and version, a dataset name) from the forms the
labelled corpus showed them. Round 20 of issue 28 measured what that buys on text nobody tuned to: the
rules it added fixed 42 of 554 errors on the cards they were written from and none of 185 on two
holdouts kept from them. What they miss on new text is a long tail of ways to *say* a disclosure.

So, after the rules, a linear model trained on the whole labelled corpus (tests/data; 1,000+ texts of
140+ authors, by ``scripts/train_reader.py``) reads the card body as a bag of words and word pairs and
gives, for a disclosure the rules found nowhere, the probability that the card states it. Above the
disclosure's threshold (chosen on out-of-fold predictions for a precision of 0.90), the reading
becomes ``incomplete`` instead of ``missing``: it has no value (the model reads none), its evidence is
the line whose words weigh most, with the probability, and it asks for the disclosure in a form a
reader can check. So a verdict of "does not state" stays one the model agrees with; a statement the
rules cannot read is a lower-severity finding that points at the line, and a reviewer can check it.

Only the disclosures where the model added recall out of fold have weights (the file says which).
Pure Python: the linter loads no numerics; the weights load once, on the first card with a claim the
rules leave a disclosure missing in.
"""

from __future__ import annotations

import json
import math
from functools import cache
from pathlib import Path
from typing import Any

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

WEIGHTS = Path(__file__).with_name("learnt_weights.json")
FEATURES = 1  # the version of :func:`features`; the weights file records the one it was trained with
WORD = re.compile(r"[^\W\d_]+|\d+(?:[.,]\d+)?")
CJK = re.compile(r"[\u3040-\u30ff\u4e00-\u9fff\uac00-\ud7af]")
TEXT_LIMIT = 400_000  # characters of a body read (a card is rarely longer; a pasted log should not slow lint)
# A body with fewer distinct words and word pairs is read by the rules alone: the model learnt from whole
# cards (95% of the labelled ones have 129 or more), and on a few lines its probability is the corpus's
# prior ("Mean KLD" cards mostly state their positions), not evidence read in this card.
MIN_FEATURES = 100
# the disclosures the weights file holds a model for (the rule docs say so without loading the file;
# tests/test_learnt_reading.py checks the two agree after every training)
DISCLOSURES = (1, 2, 3, 6)


def tokens(text: str) -> list[str]:
    """Lower-case words; a number as its shape (``<dec>`` for 0.0123, ``<n2>`` for 42, ``<long>`` for 7+
    digits) unless it has three to six digits (512, 4096: lengths and counts are words here); CJK runs
    as overlapping character pairs (no spaces to split on)."""
    out: list[str] = []
    for m in WORD.finditer(text[:TEXT_LIMIT].lower()):
        w = m.group()
        if w[0].isdigit():
            w = "<dec>" if ("." in w or "," in w) else (w if 3 <= len(w) <= 6 else f"<n{len(w)}>" if len(w) < 3 else "<long>")
            out.append(w)
        elif len(w) > 2 and CJK.search(w):
            out.extend(w[i : i + 2] for i in range(len(w) - 1))
        else:
            out.append(w)
    return out


def features(text: str) -> set[str]:
    """The words and adjacent word pairs of ``text`` (each counted once)."""
    t = tokens(text)
    return {*t, *(f"{a} {b}" for a, b in zip(t, t[1:]))}


@cache
def model() -> dict[str, Any]:
    """The weights file: ``{"features": version, "disclosures": {"3": {"bias", "threshold", "weights"}}}``."""
    data = json.loads(WEIGHTS.read_text(encoding="utf-8"))
    if data.get("features") != FEATURES:  # a stale file must not score with other features than it learnt
        raise RuntimeError(f"{WEIGHTS.name} was trained on features v{data.get('features')}, not v{FEATURES}: run scripts/train_reader.py")
    return data


def probability(weights: dict[str, float], bias: float, feats: set[str]) -> float:
    """The model's probability; features weigh 1/sqrt(their count) each (the training's normalisation)."""
    z = bias + sum(weights.get(f, 0.0) for f in feats) / math.sqrt(max(1, len(feats)))
    return 1 / (1 + math.exp(-max(-60.0, min(60.0, z))))


def suggest(lines: list[str], code: list[bool], wanted: set[int]) -> dict[int, tuple[float, int]]:
    """For each disclosure in ``wanted`` the model reads as stated: (probability, index of the line
    whose words weigh most for it). ``lines``/``code``: the body's lines and fenced-code flags."""
    per = model()["disclosures"]
    wanted = {n for n in wanted if str(n) in per}
    if not wanted:
        return {}
    feats = features("\n".join(lines))
    if len(feats) < MIN_FEATURES:
        return {}
    out: dict[int, tuple[float, int]] = {}
    line_feats: list[set[str]] | None = None
    for n in sorted(wanted):
        m = per[str(n)]
        p = probability(m["weights"], m["bias"], feats)
        if p <= m["threshold"]:
            continue
        if line_feats is None:
            line_feats = [features(line) if line.strip() else set() for line in lines]
        w = m["weights"]
        weigh = [sum(max(0.0, w.get(f, 0.0)) for f in fs) for fs in line_feats]
        # prose before code on a tie: a sentence is easier to check than a log line
        best = max(range(len(lines)), key=lambda i: (weigh[i], not code[i], -i))
        out[n] = (p, best)
    return out
