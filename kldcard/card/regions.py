"""The one grammar of a card's managed parts: section markers, code fences, front-matter keys.

Lint and render both read a card through these definitions, so what the linter calls "the kldcard
section" is exactly what ``kldcard render --card --write`` replaces.

Markers. The canonical spelling is ``<!-- kldcard:start schema=1 -->`` … ``<!-- kldcard:end -->``.
Whitespace inside the comment is optional (``<!--kldcard:start-->`` is accepted: people and editors
write both) and ``schema=N`` may be absent. A marker counts only on a line of its own (up to three
spaces of indentation, trailing blanks) and outside fenced code; a marker-like comment sharing a line
with other text is reported as misplaced (KLD005) and refused by render, never silently skipped.

Fences follow CommonMark: a line of at least three backticks or tildes, indented up to three spaces,
opens a block; it closes at a line of the same character, at least as long, with nothing after it.
An unclosed fence runs to the end of the document.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

START_MARKER = "<!-- kldcard:start schema=1 -->"
END_MARKER = "<!-- kldcard:end -->"

_MARKER_LINE = re.compile(r"^ {0,3}<!--[ \t]*kldcard:(start|end)(?:[ \t]+schema=\d+)?[ \t]*-->[ \t]*$")
_MARKER_ANY = re.compile(r"<!--[ \t]*kldcard:(start|end)\b")
# What people write when they mean a marker: `<!-- kldcard: end -->`, `<!-- kldcard-start -->`,
# `<!-- KLDCARD:BEGIN -->`, `<!-- kld-card stop -->` (on a line of their own, not a valid marker).
_NEAR_MISS = re.compile(r"^ {0,3}<!--+\s*kld[-_ ]?card\s*[:\-_ ]?\s*(start|begin|end|stop)\b[^>]*?-*->\s*$", re.IGNORECASE)
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})(.*)$")

KLD_KEY = "kld_evaluation"
MODEL_INDEX_KEY = "model-index"
TASK_TYPE = "text-generation"
# Metric types kldcard writes into model-index (render) and checks there (lint). A result holding any of
# them is a "KLD result" that a render replaces (hand-written ones included, so no stale KLD claim
# survives next to ours). Statistics other than the mean are KLD_METRIC + "_" + statistic.
KLD_METRIC = "kl_divergence"  # forward KL(P_ref || P_cand), token mean, nats
REVERSE_KL_METRIC = "reverse_kl_divergence"
JS_METRIC = "js_divergence"
TOP1_METRIC = "top1_agreement"
HEADLINE_TYPE = KLD_METRIC
KLD_METRIC_PREFIXES = (KLD_METRIC, REVERSE_KL_METRIC, JS_METRIC, TOP1_METRIC)


def kld_statistic_metric(statistic: str) -> str:
    """The metric type of a forward-KLD statistic other than the mean (``median``, ``p99``, ``p99.9``, ``max``)."""
    return f"{KLD_METRIC}_{statistic.replace('.', '_')}"


@dataclass(frozen=True)
class Marker:
    kind: str  # "start" or "end"
    index: int  # 0-based line index in the lines given
    alone: bool  # on a line of its own (the only place it counts)


def fenced(lines: Sequence[str]) -> list[bool]:
    """For each line, whether it is part of a fenced code block (the fence lines included)."""
    out = [False] * len(lines)
    fence: str | None = None
    for i, line in enumerate(lines):
        m = _FENCE.match(line) if "```" in line or "~~~" in line else None  # a fence has three of them
        if fence is None:
            # a backtick fence's info string may not contain a backtick (CommonMark 4.5)
            if m and not (m.group(1)[0] == "`" and "`" in m.group(2)):
                fence = m.group(1)
                out[i] = True
        else:
            out[i] = True
            if m and m.group(1)[0] == fence[0] and len(m.group(1)) >= len(fence) and not m.group(2).strip():
                fence = None
    return out


def find_markers(lines: Sequence[str]) -> list[Marker]:
    """Every section marker outside fenced code, in order."""
    code = fenced(lines)
    found = []
    for i, line in enumerate(lines):
        if code[i] or "kldcard:" not in line:
            continue
        m = _MARKER_LINE.match(line)
        if m:
            found.append(Marker(m.group(1), i, True))
        else:
            found.extend(Marker(mm.group(1), i, False) for mm in _MARKER_ANY.finditer(line))
    return found


def near_miss_markers(lines: Sequence[str]) -> list[tuple[int, str]]:
    """(line index, "start" or "end") of each misspelled marker outside fenced code."""
    code = fenced(lines)
    out = []
    for i, line in enumerate(lines):
        if code[i] or _MARKER_LINE.match(line):
            continue
        m = _NEAR_MISS.match(line)
        if m:
            out.append((i, "start" if m.group(1).lower() in ("start", "begin") else "end"))
    return out


def marker_problem(markers: Sequence[Marker], first_line: int = 1) -> str | None:
    """Why ``markers`` are not exactly one well-placed start/end pair (None when they are, or when
    there are none). ``first_line`` is the card line of line index 0, for the message."""
    if not markers:
        return None
    misplaced = [m for m in markers if not m.alone]
    if misplaced:
        m = misplaced[0]
        return f"kldcard:{m.kind} marker on line {first_line + m.index} shares its line with other text; put it on a line of its own"
    starts = [first_line + m.index for m in markers if m.kind == "start"]
    ends = [first_line + m.index for m in markers if m.kind == "end"]
    if len(starts) == 1 and len(ends) == 1 and starts[0] < ends[0]:
        return None
    if len(starts) > 1 or len(ends) > 1:
        where = ", ".join(str(first_line + m.index) for m in markers)
        return f"{len(starts)} kldcard:start and {len(ends)} kldcard:end markers (lines {where}); keep exactly one pair"
    if not ends:
        return f"kldcard:start marker on line {starts[0]} has no matching {END_MARKER}"
    if not starts:
        return f"kldcard:end marker on line {ends[0]} has no matching {START_MARKER}"
    return f"kldcard:end (line {ends[0]}) comes before kldcard:start (line {starts[0]})"


def is_kld_result(result: Any) -> bool:
    """True for a model-index result that carries KLD metrics (ours or hand-written)."""
    if not isinstance(result, dict):
        return False
    metrics = result.get("metrics")
    if not isinstance(metrics, list):
        return False
    return any(
        isinstance(m, dict) and isinstance(m.get("type"), str) and m["type"].startswith(KLD_METRIC_PREFIXES)
        for m in metrics
    )
