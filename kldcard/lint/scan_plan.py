"""The analysis behind :mod:`kldcard.lint.scan`: from a compiled pattern's parse tree, its anchors
(folded literals every match contains), its width (the most characters a match and its lookaheads
read, or unbounded) and its barriers (ASCII characters no item consumes), branch by branch for a
top-level alternation. Done once per pattern (about 45 ms for the linter's hundred patterns), or read from the
table kldcard.lint.scan_plans that scripts/generate.py stores ahead."""

from __future__ import annotations

import hashlib
from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
import sys
from dataclasses import dataclass
# re exposes no public parse-tree API: its own private modules (Python 3.11+, as requires-python
# says; exactness is property-tested in tests/test_lint_scan.py on the running interpreter)
from re import _compiler, _parser
from re import _constants as C  # noqa: N812

__all__ = ["INF", "Part", "Plan", "fold", "plan"]

_ASCII = "".join(map(chr, range(128)))
INF = 1 << 62


def fold(text: str) -> str:
    """``text`` lowercased, same length: every character a case-insensitive ``re`` literal matches
    (ASCII or Unicode mode) becomes that literal's lowercase. ``str.lower`` does that except for
    U+0130 (İ, lowercases to two characters), U+0131 (ı) and U+017F (ſ), which ``re`` matches as i/s."""
    if "\u0130" in text:
        text = text.replace("\u0130", "i")
    low = text.lower()
    if "\u0131" in low:
        low = low.replace("\u0131", "i")
    if "\u017f" in low:
        low = low.replace("\u017f", "s")
    return low


@dataclass(frozen=True)
class Part:
    """The pattern, or one branch of its top-level alternation: a match made by this branch contains
    one of its anchors and lies within its width and barriers."""

    anchors: tuple[str, ...]  # folded; every match (of this branch) contains one
    width: int  # INF when unbounded
    barrier: re.Pattern[str] | None  # a class of ASCII characters no item of the branch consumes


@dataclass(frozen=True)
class Plan:
    """How to window a pattern. A top-level alternation is planned branch by branch: "\\btest\\s+set"
    needs only the letters and spaces around its hit, whatever its sister branches may need. That is
    exact too: a branch tried at a start reads past its window only if it would match there, and then
    its own anchor's window, which the windows merge with, covers it."""

    parts: tuple[Part, ...]

    @property
    def anchors(self) -> tuple[str, ...]:
        return tuple(sorted({a for p in self.parts for a in p.anchors}))



_PLANS: dict[tuple[str, int], Plan | None] = {}
# Plans stored ahead (kldcard.lint.scan_plans, written by scripts/generate.py from linting the bundled example cards and
# the invented corpus, drift-checked): a one-card lint otherwise spends a third of its run planning its patterns. They
# are keyed by a digest of the pattern and its flags, so a changed pattern is planned afresh, and used only on the
# Python minor version that wrote them (the analysis reads re's private parse tree).
USE_STORED = True


def stored_key(pattern: str, flags: int) -> str:
    return hashlib.blake2b(f"{flags}\0{pattern}".encode(), digest_size=16).hexdigest()


def _stored(key: tuple[str, int]) -> tuple[bool, Plan | None]:
    from kldcard.lint import scan_plans

    if not USE_STORED or tuple(sys.version_info[:2]) != scan_plans.PYTHON:
        return False, None
    stored = scan_plans.PLANS.get(stored_key(*key), False)
    if stored is False:
        return False, None
    if stored is None:
        return True, None
    return True, Plan(tuple(Part(a, width, None if b is None else _barrier(scan_plans.BARRIERS[b])) for a, width, b in stored))


def _barrier(barriers: str | None) -> re.Pattern[str] | None:
    if not barriers:
        return None
    if barriers not in _BARRIERS:
        _BARRIERS[barriers] = re.compile("[" + barriers + "]")
    return _BARRIERS[barriers]


def stored_form(p: Plan | None) -> tuple[tuple[tuple[str, ...], int, str | None], ...] | None:
    """A plan as kldcard.lint.scan_plans stores it (the barrier by its character class's contents)."""
    if p is None:
        return None
    return tuple((x.anchors, x.width, x.barrier.pattern[1:-1] if x.barrier is not None else None) for x in p.parts)


class _Unsupported(Exception):
    pass


def plan(pattern: re.Pattern[str]) -> Plan | None:
    """The pattern's anchors, width and barrier class; None when it cannot be windowed."""
    key = (pattern.pattern, pattern.flags)
    if key not in _PLANS:
        if len(_PLANS) > 4096:  # patterns built per card (dataset names) must not grow it forever
            _PLANS.clear()
        found, stored = _stored(key)
        if found:
            _PLANS[key] = stored
            return stored
        try:
            tree = _parser.parse(pattern.pattern, pattern.flags)
            flags = tree.state.flags
            data = tree.data
            branches = data[0][1][1] if len(data) == 1 and data[0][0] is C.BRANCH else [data]
            parts = [_part(b, flags) for b in branches]
            if any(x is None for x in parts):
                parts = [_part(data, flags)]
            grouped: dict[tuple[int, str], list[Part]] = {}  # one part per (width, barriers): fewer passes
            for x in parts:
                if x is not None:
                    grouped.setdefault((x.width, x.barrier.pattern if x.barrier else ""), []).append(x)
            merged = tuple(
                Part(_minimal({a for x in g for a in x.anchors}), g[0].width, g[0].barrier) for g in grouped.values()
            )
            _PLANS[key] = Plan(merged) if merged and all(x is not None for x in parts) else None
        except _Unsupported:
            _PLANS[key] = None
    return _PLANS[key]


def _minimal(anchors: set[str]) -> tuple[str, ...]:
    """A match holding "kld" holds "kl": the shorter one alone finds the same places."""
    return tuple(sorted(a for a in anchors if not any(b != a and b in a for b in anchors)))


_BARRIERS: dict[str, re.Pattern[str] | None] = {}


def _part(items: list, flags: int) -> Part | None:
    anchors = _anchors(items, flags)
    if not anchors:
        return None
    accepted: set[str] = set()
    _accepted(items, flags, accepted)
    barriers = "".join(re.escape(c) for c in sorted(set(_ASCII) - accepted))
    return Part(_minimal(anchors), _width(items), _barrier(barriers))


_LEAVES = {C.LITERAL, C.NOT_LITERAL, C.IN, C.ANY}
_ATOMIC = getattr(C, "ATOMIC_GROUP", object())  # (?>...) and possessive repeats: Python 3.11+
_REPEATS = {C.MAX_REPEAT, C.MIN_REPEAT, getattr(C, "POSSESSIVE_REPEAT", C.MAX_REPEAT)}
_ZERO = {C.AT, C.ASSERT, C.ASSERT_NOT}


def _width(items: list) -> int:
    total = 0
    for op, av in items:
        if op in _LEAVES:
            total += 1
        elif op is C.AT:
            pass
        elif op is C.BRANCH:
            total += max(_width(b) for b in av[1])
        elif op is C.SUBPATTERN:
            total += _width(av[3])
        elif op is _ATOMIC:
            total += _width(av)
        elif op in _REPEATS:
            lo, hi, body = av
            w = _width(body)
            total += INF if hi == C.MAXREPEAT and w else hi * w
        elif op in (C.ASSERT, C.ASSERT_NOT):
            direction, body = av
            total += _width(body) if direction == 1 else 0  # a lookahead reads on from where it stands
        else:
            raise _Unsupported(op)
        total = min(total, INF)
    return total


_LEAF_CACHE: dict[tuple[str, int], frozenset[str]] = {}


def _leaf_accepts(op: object, av: object, flags: int) -> frozenset[str]:
    """The ASCII characters one character-consuming item accepts, by compiling it alone."""
    key = (repr((op, av)), flags)
    if key not in _LEAF_CACHE:
        state = _parser.State()
        state.flags = flags
        sub = _parser.SubPattern(state, [(op, av)])
        compiled = _compiler.compile(sub, flags)
        _LEAF_CACHE[key] = frozenset(compiled.findall(_ASCII))
    return _LEAF_CACHE[key]


def _accepted(items: list, flags: int, out: set[str]) -> None:
    for op, av in items:
        if op in _LEAVES:
            out.update(_leaf_accepts(op, av, flags))
        elif op is C.BRANCH:
            for b in av[1]:
                _accepted(b, flags, out)
        elif op is C.SUBPATTERN:
            _accepted(av[3], (flags | av[1]) & ~av[2], out)
        elif op is _ATOMIC:
            _accepted(av, flags, out)
        elif op in _REPEATS:
            _accepted(av[2], flags, out)
        elif op in (C.ASSERT, C.ASSERT_NOT):
            _accepted(av[1], flags, out)
        elif op is not C.AT:
            raise _Unsupported(op)


def _anchor_char(code: int, flags: int) -> str | None:
    """The folded character a literal contributes to an anchor, or None when folding cannot be trusted
    (a cased non-ASCII letter under Unicode case-insensitive matching, e.g. µ/μ are equivalent)."""
    c = chr(code)
    if code < 128:
        return c.lower()
    if c.lower() == c.upper() or not (flags & re.IGNORECASE) or flags & re.ASCII:
        return fold(c) if len(fold(c)) == 1 else None
    return None


def _better(a: set[str] | None, b: set[str] | None) -> set[str] | None:
    if a is None or not a:
        return b
    if b is None or not b:
        return a
    # Longer literals are rarer, up to a point; each literal costs one scan of the text.
    return a if (min(5, *map(len, a)), -len(a)) >= (min(5, *map(len, b)), -len(b)) else b


def _literals(items: list, flags: int) -> set[str] | None:
    """The folded strings a literal-only sequence or alternation of them matches, or None."""
    out = {""}
    for op, av in items:
        if op is C.LITERAL and _anchor_char(av, flags) is not None:
            out = {s + _anchor_char(av, flags) for s in out}  # type: ignore[operator]
        elif op is C.BRANCH:
            parts = [_literals(b, flags) for b in av[1]]
            if any(x is None for x in parts):
                return None
            out = {s + t for s in out for x in parts for t in x}  # type: ignore[union-attr]
        elif op is C.SUBPATTERN and not av[1] and not av[2]:
            inner = _literals(av[3], flags)
            if inner is None:
                return None
            out = {s + t for s in out for t in inner}
        elif op is C.IN and (chars := _class_chars(av, flags)) is not None:
            out = {s + c for s in out for c in chars}
        else:
            return None
        if len(out) > 64:
            return None
    return out


def _class_chars(av: list, flags: int) -> set[str] | None:
    """The folded characters a small class such as ``[HBA]``, ``[- ]`` or ``\\d`` (ASCII mode) matches,
    or None: a negated class, one that may match a non-ASCII character, or more than 10 of them."""
    for op, arg in av:
        if op is C.NEGATE:
            return None
        if op is C.CATEGORY and not flags & re.ASCII:
            return None  # \\d, \\w, \\s match non-ASCII characters in Unicode mode
        if op is C.LITERAL and arg >= 128 or op is C.RANGE and arg[1] >= 128:
            return None
    chars = {c.lower() for c in _leaf_accepts(C.IN, av, flags)}
    return chars if 0 < len(chars) <= 10 else None


def _anchors(items: list, flags: int) -> set[str] | None:
    """Folded literals of which every match of the sequence ``items`` contains one (None: no such set).

    Consecutive literals and literal-only alternations form one set of strings ("p(?:50|90)" gives
    p50, p90); zero-width items keep their neighbours adjacent; any other item ends the run and
    offers its own set (a group, a branch if every branch has one, a repeat of at least one)."""
    best: set[str] | None = None
    run = {""}
    for op, av in items:
        lits = _literals([(op, av)], flags) if op in (C.LITERAL, C.BRANCH, C.SUBPATTERN, C.IN) else None
        if lits is not None and len(run) * len(lits) <= 64:
            if len(lits) > 1 and "" not in run:
                best = _better(best, run)  # the run so far may beat its many extensions
            run = {s + t for s in run for t in lits}
            continue
        if op in _ZERO:  # zero-width: the literals on either side stay adjacent
            continue
        if op in _REPEATS and av[0] >= 1 and (body := _literals(av[2], flags)) is not None and len(run) * len(body) <= 64:
            if "" not in run:
                best = _better(best, run)
            run = {s + t for s in run for t in body}  # its first repetition continues the run, then it ends
        best = _better(best, run if "" not in run else None)
        run = {""}
        cand: set[str] | None = None
        if op is C.BRANCH:
            parts = [_anchors(b, flags) for b in av[1]]
            cand = set().union(*parts) if all(x is not None for x in parts) else None  # type: ignore[arg-type]
        elif op is C.SUBPATTERN:
            cand = _anchors(av[3], (flags | av[1]) & ~av[2])
        elif op is _ATOMIC:
            cand = _anchors(av, flags)
        elif op in _REPEATS and av[0] >= 1:
            cand = _anchors(av[2], flags)
        best = _better(best, cand)
    return _better(best, run if "" not in run else None)
