"""kldcard.lint.scan: windowed matching is exactly whole-text matching, for every linter pattern.

The prefilter reads only windows around anchor literals (issue 16, lint time per MB); a window too
small would silently drop or change a finding, so each pattern of the prose linter is compared with
plain ``re`` on every card under tests/data, on the pathological cards and on random text.
"""

from __future__ import annotations

import importlib
import random
import re
import sys
from pathlib import Path

import pytest
from helpers_prose import PATHOLOGICAL
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kldcard.lint import scan, scan_plan
from kldcard.lint.markdown import scan as scan_markdown

MODULES = ["evidence", "evidence_patterns", "claims", "claims_patterns", "tool_defaults", "prose", "markdown", "interval_prose",
           "read.tools.llama_perplexity", "read.tools.exllamav3", "read.tools.named", "read.direction", "read.vocabulary", "read.aggregation"]


def _patterns() -> list[tuple[str, re.Pattern[str]]]:
    out: dict[tuple[str, int], tuple[str, re.Pattern[str]]] = {}
    for name in MODULES:
        try:
            module = importlib.import_module(f"kldcard.lint.{name}")
        except ModuleNotFoundError:
            continue
        for attr, value in vars(module).items():
            values = value if isinstance(value, (list, tuple)) else [value]
            for i, v in enumerate(values):
                if isinstance(v, re.Pattern) and isinstance(v.pattern, str):
                    out.setdefault((v.pattern, v.flags), (f"{name}.{attr}" + (f"[{i}]" if values is value else ""), v))
    return sorted(out.values(), key=lambda x: x[0])


PATTERNS = _patterns()
DATA = Path(__file__).parent / "data"
CARDS = [p.read_text(encoding="utf-8", errors="replace") for p in sorted(DATA.rglob("*.md"))]
CARDS += [make(n).decode() for make in PATHOLOGICAL.values() for n in (1, 3, 40)]
# Pieces that the patterns' anchors, barriers and look-arounds care about, and case-folding traps.
PIECES = list("abcdeklmnoprstuvx KLDBF16-_./|:;,()[]`*#\n\t 0123456789=<>%±→‖\r") + [
    "KLD", "vs ", "BF16", "reference", "baseline:", "chunks", "-c 512", "ctx", "\n\n", "tokens", "mean", "median",
    "wiki.test", "imatrix", "calibration", "İ", "ſ", "ı", "K", "llama-perplexity", "Same top p", "KL(", "‖", "|---|",
    "<td>", "</td>", "![", "](", "org/set", ".txt", "±", "bootstrap", "standard error", "n_ctx=", "# ", "> ",
]  # fmt: skip


def _key(m: re.Match[str]) -> tuple[object, ...]:
    return (m.span(), m.groups())


def _same(pattern: re.Pattern[str], text: str) -> None:
    whole = [_key(m) for m in pattern.finditer(text)]
    windowed = [_key(m) for m in scan.finditer(pattern, scan.Text(text))]
    assert windowed == whole, (pattern.pattern[:80], text[:120])


def test_most_whole_text_patterns_are_windowed() -> None:
    """The prefilter applies: a pattern without a plan runs over the whole text (slow, still exact)."""
    planned = [name for name, p in PATTERNS if scan.plan(p) is not None]
    assert len(PATTERNS) > 80
    assert len(planned) >= 0.9 * len(PATTERNS), sorted({n for n, p in PATTERNS} - set(planned))


@pytest.mark.parametrize(("name", "pattern"), PATTERNS, ids=[n for n, _ in PATTERNS])
def test_windowed_matches_equal_whole_text_on_cards(name: str, pattern: re.Pattern[str]) -> None:
    for text in CARDS:
        _same(pattern, text)


def test_windowed_matches_equal_whole_text_on_seeded_random_text() -> None:
    rnd = random.Random(16)
    for _ in range(150):
        text = "".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 300)))
        for _name, pattern in PATTERNS:
            _same(pattern, text)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(st.sampled_from(PIECES) | st.text(max_size=3), max_size=120).map("".join))
def test_windowed_matches_equal_whole_text_on_generated_text(text: str) -> None:
    for _name, pattern in PATTERNS:
        _same(pattern, text)


def test_fold_maps_every_case_variant_of_an_ascii_letter_to_its_lowercase() -> None:
    """Anchors are found in the folded text: every character ``re`` matches case-insensitively with an
    ASCII letter (Unicode or ASCII mode) must fold to that letter, and folding keeps the length."""
    every = "".join(chr(c) for c in range(0x110000) if not 0xD800 <= c < 0xE000)
    folded = scan.fold(every)
    assert len(folded) == len(every)
    for letter in "abcdefghijklmnopqrstuvwxyz":
        for flags in (re.IGNORECASE, re.IGNORECASE | re.ASCII):
            for m in re.finditer(letter, every, flags):
                assert folded[m.start()] == letter, (hex(ord(m.group(0))), letter)


def test_windows_are_small_when_anchors_are_rare() -> None:
    """The point of it: on a megabyte without the anchor, the pattern reads (almost) nothing."""
    pattern = re.compile(r"\b(?:forward|reverse)\s+KL\b|\bJSD\b", re.IGNORECASE)
    text = scan.Text("| Q4 | KLD 0.0123 |\n" * 50_000 + "forward KL\n")
    plan = scan.plan(pattern)
    assert plan is not None
    windows = list(scan._windows(plan, text))
    assert sum(e - s for s, e in windows) < 100
    assert [m.group(0) for m in scan.finditer(pattern, text)] == ["forward KL"]


def test_dataset_name_patterns_built_per_card_are_windowed_exactly() -> None:
    """evidence._shared_dataset compiles an alternation of the card's calibration dataset names."""
    names = ["neelnanda/pile-10k", "pile-10k", "wiki.train.raw", "org/set7", "groups_merged.txt", "ultrachat_200k"]
    found = re.compile("|".join(rf"(?<![\w.\-/]){re.escape(n)}(?![\w\-])" for n in names), re.IGNORECASE | re.ASCII)
    assert scan.plan(found) is not None
    rnd = random.Random(7)
    pieces = [*PIECES, *names, "NeelNanda/Pile-10K", "/pile-10k", "pile-10k-x", "org/set77"]
    for text in CARDS + ["".join(rnd.choice(pieces) for _ in range(rnd.randint(0, 200))) for _ in range(200)]:
        _same(found, text)


@pytest.mark.parametrize("kind", ["lines", "sentences"])
def test_spans_with_keeps_every_span_a_pattern_can_match(kind: str) -> None:
    """spans_with lets loops over lines and sentences skip the rest: no span where the pattern
    matches may be left out."""
    rnd = random.Random(3)
    texts = CARDS + ["".join(rnd.choice(PIECES) for _ in range(rnd.randint(0, 300))) for _ in range(100)]
    for text in texts:
        doc = scan_markdown(text, 1)
        if kind == "lines":
            spans = [(s, s + len(line)) for s, line in zip(doc.starts, doc.lines)]
            starts = doc.starts
        else:
            spans, starts = doc.sentences, doc.sentence_starts
        for _name, pattern in PATTERNS:
            kept = set(scan.spans_with(pattern, doc.scanned, spans, starts))
            for k, (s, e) in enumerate(spans):
                if k not in kept:
                    assert pattern.search(text[s:e]) is None, (pattern.pattern[:60], text[s:e][:80])


@pytest.mark.parametrize(("pattern", "text"), [(r"KLD:\s*\d", "kld: 1"), (r"KLD:\s*\d", "KLD: 1 kld: 2 KLD: 3"),
                                               (r"kld\s+x", "KLD x kld x"), (r"[A-C]\d", "a1 B2 c3")])
def test_case_sensitive_pattern_whose_anchor_starts_on_a_barrier(pattern, text):
    """A folded hit whose first character the pattern refuses is a barrier at the hit itself: the scan
    must step past it (it once found the same hit for ever)."""
    p = re.compile(pattern)
    assert [m.span() for m in scan.finditer(p, scan.Text(text))] == [m.span() for m in p.finditer(text)]


def test_stored_plans_equal_fresh_ones_and_are_used() -> None:
    """kldcard/lint/scan_plans.py (generated) spares a one-card lint the planning; each stored plan must be the
    plan the analysis makes now (the drift test regenerates the table; this checks it per pattern)."""
    from kldcard.lint import scan_plans

    if scan_plans.PYTHON != tuple(sys.version_info[:2]):  # written by another Python: never used here
        assert not any(scan_plan._stored((p.pattern, p.flags))[0] for _, p in PATTERNS)
        return
    checked = 0
    for _, pattern in PATTERNS:
        key = (pattern.pattern, pattern.flags)
        if scan_plan.stored_key(*key) not in scan_plans.PLANS:
            continue
        found, stored = scan_plan._stored(key)
        saved = scan_plan._PLANS.pop(key, None)
        scan_plan.USE_STORED = False
        try:
            fresh = scan_plan.plan(pattern)
        finally:
            scan_plan.USE_STORED = True
            scan_plan._PLANS.pop(key, None)
            if saved is not None:
                scan_plan._PLANS[key] = saved
        assert found and stored == fresh, pattern.pattern[:80]
        checked += 1
    assert checked > 100
