"""``re`` with patterns compiled on first use. A module switches by its import line alone
(``from kldcard import lazy_re as re``): ``re.compile`` then returns a :class:`LazyPattern`, which keeps
``pattern`` (and ``flags`` where re's follow from the given ones) and compiles on the first other attribute
(``search``, ``finditer``, ...); the rest of ``re`` passes through. Why: a one-card ``kldcard lint`` compiled some 200 patterns at import, about 40% of its
start-up, and used a fifth of them (issue 28).

A match's ``.re`` is the compiled pattern, never the lazy one: ask ``m.re is X.compiled`` (``m.re is X`` is
always false; tests/test_lazy_re.py fails on it). ``==``, ``hash`` and ``in`` compare by the compiled
pattern, as for ``re.Pattern``, and so compile every pattern they meet: a reader asks :func:`made_by` instead
(by identity, compiling none). ``isinstance(X, re.Pattern)`` holds, so ``re``'s own functions take a lazy
pattern too. Equal (pattern, flags) share one compiled object for as long as any holds it (a weak memo: no
bound, no clearing, which gave two equal patterns two objects; per-card patterns still go with their card).
``purge`` is ``re``'s, and leaves that memo alone: clearing it would split equal patterns the same way."""

from __future__ import annotations

import re as _re
import threading
import weakref
from collections.abc import Iterable
from re import *  # noqa: F403  (IGNORECASE, escape, Match, error, ... unchanged)
from re import __all__ as _re_all

__all__ = [*_re_all, "LazyPattern", "made_by"]

# (type, pattern, flags) -> compiled, while a lazy pattern (or a match, or re's own cache) holds it: equal patterns
# share one object, which ``m.re is X.compiled`` and made_by rely on
_COMPILED: weakref.WeakValueDictionary[tuple[type, str | bytes, int], _re.Pattern] = weakref.WeakValueDictionary()
_COMPILING = threading.Lock()  # two threads compiling equal patterns at once still share one object
# bound as instance attributes once compiled, so that later calls skip __getattr__
_DELEGATED = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split", "scanner",
              "flags", "groups", "groupindex")


class LazyPattern:
    """A pattern compiled on first use; see the module's docstring."""

    def __init__(self, pattern: str | bytes, flags: int = 0) -> None:
        self.pattern = pattern
        self._flags = flags

    @property
    def __class__(self):  # isinstance(X, re.Pattern) holds (type(X) is still LazyPattern)
        return _re.Pattern

    def __getattr__(self, name: str):
        if name.startswith("__") or name == "_flags":
            raise AttributeError(name)
        if name == "flags" and _plain(self.pattern, self._flags):  # the scan plans key on it before any search
            return self._flags if self._flags & _ASCII else self._flags | _UNICODE  # ints, as re's (not RegexFlag)
        key = (type(self.pattern), self.pattern, self._flags)
        compiled = _COMPILED.get(key)
        if compiled is None:
            new = _re.compile(self.pattern, self._flags)
            with _COMPILING:
                compiled = _COMPILED.setdefault(key, new)
        d = self.__dict__
        d["compiled"] = compiled
        for n in _DELEGATED:
            d[n] = getattr(compiled, n)
        return compiled if name == "compiled" else getattr(compiled, name)

    def __eq__(self, other: object) -> bool:
        return self.compiled == (other.compiled if type(other) is LazyPattern else other)

    def __hash__(self) -> int:
        return hash(self.compiled)

    def __repr__(self) -> str:
        return repr(self.compiled)

    def __copy__(self) -> LazyPattern:
        return self

    def __deepcopy__(self, memo: dict) -> LazyPattern:
        return self

    def __reduce__(self):
        return compile, (self.pattern, self._flags)


_ASCII, _UNICODE = _re.ASCII.value, _re.UNICODE.value
_SIMPLE_FLAGS = (_re.IGNORECASE | _re.MULTILINE | _re.DOTALL | _re.UNICODE | _re.ASCII).value


def _plain(pattern, flags: int) -> bool:
    """Whether re's flags for ``pattern`` are ``flags`` (with UNICODE unless ASCII) without parsing it: a str
    pattern, no flag but I, M, S, U, A given (not both U and A), and none set inline (3.11 takes global inline
    flags only at the start)."""
    return (type(pattern) is str and not flags & ~_SIMPLE_FLAGS
            and flags & (_UNICODE | _ASCII) != _UNICODE | _ASCII
            and (not pattern.startswith("(?") or pattern[2:3] in (":", "P", "=", "!", "<")))


def compile(pattern, flags=0):  # noqa: A001
    if isinstance(flags, _re.RegexFlag):
        flags = flags.value
    if isinstance(pattern, _re.Pattern):  # a lazy one too: as re does, the pattern itself
        if flags:
            raise ValueError("cannot process flags argument with a compiled pattern")
        return pattern
    return LazyPattern(pattern, flags)


def made_by(m: Match, patterns: Iterable[Pattern]) -> bool:  # noqa: F405
    """Whether the match ``m`` was made by one of ``patterns`` (lazy or re's), by identity of the compiled
    object: ``m.re in patterns`` compares by ``==`` and so compiles each lazy pattern it passes. A lazy pattern
    not compiled yet is looked up in the memo (an equal pattern may have made ``m``), never compiled here."""
    made = m.re
    for p in patterns:
        if type(p) is LazyPattern:
            d = p.__dict__
            if d.get("compiled", None) is made or (
                "compiled" not in d and _COMPILED.get((type(p.pattern), p.pattern, p._flags)) is made
            ):
                return True
        elif p is made:
            return True
    return False


def _real(pattern):
    return pattern.compiled if type(pattern) is LazyPattern else pattern


def search(pattern, string, flags=0):
    return _re.search(_real(pattern), string, flags)


def match(pattern, string, flags=0):
    return _re.match(_real(pattern), string, flags)


def fullmatch(pattern, string, flags=0):
    return _re.fullmatch(_real(pattern), string, flags)


def split(pattern, string, maxsplit=0, flags=0):
    return _re.split(_real(pattern), string, maxsplit, flags)


def findall(pattern, string, flags=0):
    return _re.findall(_real(pattern), string, flags)


def finditer(pattern, string, flags=0):
    return _re.finditer(_real(pattern), string, flags)


def sub(pattern, repl, string, count=0, flags=0):
    return _re.sub(_real(pattern), repl, string, count, flags)


def subn(pattern, repl, string, count=0, flags=0):
    return _re.subn(_real(pattern), repl, string, count, flags)
