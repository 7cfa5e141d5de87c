"""kldcard.lazy_re: patterns compile on first use and behave as re's own (one-card lint start-up, issue 28)."""

from __future__ import annotations

import copy
import importlib
import pickle
import pkgutil
import re as std_re
from pathlib import Path

import pytest

import kldcard.card
import kldcard.lint
from kldcard import lazy_re as re
from kldcard.lazy_re import LazyPattern

ROOT = Path(__file__).resolve().parent.parent


def _fresh(source: str = r"lazy[ -]?test (\d+)") -> LazyPattern:
    p = re.compile(source, re.I)
    assert type(p) is LazyPattern
    return p


def test_a_pattern_compiles_on_first_use_only():
    p = _fresh(r"first[ -]use (\d+) of a lazy pattern")
    assert "compiled" not in vars(p)
    assert p.pattern == r"first[ -]use (\d+) of a lazy pattern"  # read without compiling
    assert p.flags == std_re.compile(p.pattern, std_re.I).flags  # re's flags, UNICODE included, without compiling
    assert "compiled" not in vars(p)
    assert p.search("its First use 12 of a lazy pattern").group(1) == "12"
    assert isinstance(vars(p)["compiled"], std_re.Pattern) and type(vars(p)["compiled"]) is std_re.Pattern
    for source, flags in [("(?i)a", 0), ("(?:a)", re.I), ("(?P<x>a)", re.M | re.S), ("a", re.A | re.I), ("a", re.X),
                          ("(?<=a)b", 0), ("(?x) a", 0), (b"a", 0), ("a", re.U)]:
        lazy, eager = re.compile(source, flags).flags, std_re.compile(source, flags).flags
        assert lazy == eager and type(lazy) is type(eager) is int, (source, flags)  # str(flags) keys the scan plans


def test_a_match_was_made_by_a_pattern_exactly_when_re_is_its_compiled():
    p, q = _fresh(r"made (\w+)"), _fresh(r"other (\w+)")
    m = p.search("made here")
    assert m.re is p.compiled and m.re is not q.compiled
    assert m.re is not p  # why the reader asks X.compiled (test_no_identity_check_with_a_lazy_pattern)
    assert _fresh(r"made (\w+)").compiled is p.compiled  # equal patterns share one compiled object
    assert m.re in (q, p) and m.re not in (q,) and m.re == p and p == m.re and p != q
    assert {p: "p", q: "q"}[m.re] == "p" and hash(p) == hash(m.re)


def test_the_rest_of_re_passes_through():
    assert re.IGNORECASE is std_re.IGNORECASE and re.escape is std_re.escape and re.Match is std_re.Match
    assert re.error is std_re.error and re.Pattern is std_re.Pattern
    assert re.search(r"b+", "abbc").group() == "bb" and re.sub("b", "x", "abc") == "axc"
    p = _fresh(r"b+")
    assert isinstance(p, re.Pattern) and isinstance(p, std_re.Pattern)
    assert re.search(p, "abbc").re is p.compiled and std_re.search(p, "abbc").group() == "bb"
    assert re.sub(p, "x", "abbc") == std_re.sub(p, "x", "abbc") == "axc"
    assert [m.span() for m in re.finditer(p, "b ab")] == [(0, 1), (3, 4)]
    assert re.split(p, "abc") == ["a", "c"] and re.findall(p, "bb b") == ["bb", "b"]
    assert re.compile(p) is p and std_re.compile(p) is p
    with pytest.raises(ValueError):
        re.compile(p, re.I)
    assert copy.copy(p) is p and copy.deepcopy(p) is p
    assert pickle.loads(pickle.dumps(p)).search("abbc").group() == "bb"
    assert repr(p) == repr(std_re.compile(r"b+", std_re.I))


def _lazy_patterns() -> list[tuple[str, LazyPattern]]:
    found = []
    for package in (kldcard.lint, kldcard.card):
        for info in pkgutil.walk_packages(package.__path__, package.__name__ + "."):
            module = importlib.import_module(info.name)
            found += [(f"{info.name}.{k}", v) for k, v in vars(module).items() if type(v) is LazyPattern]
    return found


def test_the_readers_lazy_patterns_give_the_same_matches_as_re():
    patterns = _lazy_patterns()
    assert len(patterns) > 150
    cards = [ROOT / "examples" / "cards" / "compliant.md", *sorted((ROOT / "tests" / "data" / "prose_corpus").glob("*.md"))[:2]]
    for card in cards:
        text = card.read_text(encoding="utf-8")
        for name, p in patterns:
            lazy, eager = LazyPattern(p.pattern, vars(p)["_flags"]).flags, std_re.compile(p.pattern, vars(p)["_flags"]).flags
            assert lazy == eager and type(lazy) is int, name
            eager = std_re.compile(p.pattern, p.flags)
            assert [m.span() for m in p.finditer(text)] == [m.span() for m in eager.finditer(text)], (name, card.name)


def test_no_identity_check_with_a_lazy_pattern():
    """``m.re is X`` is always false for a lazy X: a check the reader adds must read ``m.re is X.compiled``."""
    check = std_re.compile(r"\.re\s+is(?:\s+not)?\s+([A-Za-z_][\w.]*(?:\[\d+\][\w.]*)?)")
    bad = [f"{f.relative_to(ROOT)}: {m.group(0)}" for f in sorted((ROOT / "kldcard").rglob("*.py"))
           for m in check.finditer(f.read_text(encoding="utf-8")) if not m.group(1).endswith(".compiled")
           and f.name != "lazy_re.py"]
    assert bad == []


def test_made_by_tells_a_matchs_pattern_by_identity_compiling_none_of_the_others():
    p = _fresh(r"made_by (\w+) of a lazy pattern")
    q, other = _fresh(r"made_by other (\w+)"), _fresh(r"made_by third (\w+)")
    m = p.search("made_by this of a lazy pattern")
    assert re.made_by(m, [q, p]) and re.made_by(m, (p,)) and not re.made_by(m, [q, other]) and not re.made_by(m, [])
    assert "compiled" not in vars(q) and "compiled" not in vars(other)  # ``m.re in [q, p]`` compiles q
    twin = re.compile(p.pattern, re.I)  # equal to p (m.re == twin), not compiled: made m as well, and stays lazy
    assert re.made_by(m, [twin]) and "compiled" not in vars(twin)
    assert not re.made_by(m, [re.compile(p.pattern)])  # other flags: another pattern
    eager = std_re.compile(r"made_by eager (\w+)")
    assert re.made_by(eager.search("made_by eager x"), [q, eager]) and not re.made_by(m, [eager])


def test_equal_patterns_share_one_compiled_object_however_many_compile_between():
    held = _fresh(r"held across (\d+) other compilations")
    compiled = held.compiled
    before = len(vars(re)["_COMPILED"])
    for i in range(5000):  # patterns built per card; the memo was cleared past 4096 entries, splitting equal patterns
        re.compile(rf"per-card pattern {i}").search("")
    assert re.compile(held.pattern, re.I).compiled is compiled
    assert len(vars(re)["_COMPILED"]) < before + 1000  # the per-card ones went with their patterns (re's cache: 512)


def test_purge_leaves_equal_patterns_one_compiled_object():
    """``re.purge()`` empties re's cache only: clearing the memo too would give an equal pattern compiled after it
    another object than the one a pattern compiled before holds (``m.re is X.compiled`` false for equal patterns)."""
    held = _fresh(r"held across a purge (\d+)")
    compiled = held.compiled
    re.purge()
    assert re.compile(held.pattern, re.I).compiled is compiled
