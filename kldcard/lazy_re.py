"""``re`` with patterns compiled on first use. A module switches by its import line alone
(``from kldcard import lazy_re as re``): ``re.compile`` then returns a :class:`LazyPattern`, which keeps
``pattern`` (and ``flags`` where re's follow from the given ones) and compiles on the first other attribute
(``search``, ``finditer``, ...); the rest of ``re`` passes through. Why: a one-card ``kldcard lint`` compiled some 200 patterns at import, about 40% of its
start-up, and used a fifth of them (issue 28).

A match's ``.re`` is the compiled pattern, never the lazy one: ask ``m.re is X.compiled`` (``m.re is X`` is
always false; tests/test_lazy_re.py fails on it). ``==``, ``hash`` and ``in`` compare by the compiled
pattern, as for ``re.Pattern``; ``isinstance(X, re.Pattern)`` holds, so ``re``'s own functions take a lazy
pattern too. Equal (pattern, flags) share one compiled object, as ``re``'s cache gives at import time."""

from __future__ import annotations

import re as _re
from re import *  # noqa: F403  (IGNORECASE, escape, Match, error, ... unchanged)
from re import __all__ as _re_all

__all__ = [*_re_all, "LazyPattern"]

_COMPILED: dict[tuple[type, str | bytes, int], _re.Pattern] = {}
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
        if compiled is None:  # setdefault: two threads compiling at once still share one object
            if len(_COMPILED) > 4096:  # patterns built per card (dataset names) must not grow it forever
                _COMPILED.clear()
            compiled = _COMPILED.setdefault(key, _re.compile(self.pattern, self._flags))
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
