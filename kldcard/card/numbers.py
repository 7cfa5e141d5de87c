"""Deterministic number and text formatting shared by the card section, the card metadata and the fixer.

The body section and the ``model-index`` metrics print the *same string* for every number, so that a
reader (or the linter) comparing them finds them equal digit for digit. Every string produced here is
also a float under both YAML 1.1 (PyYAML) and YAML 1.2 (the Hub): plain decimals, or a dotted mantissa
with a signed exponent (``2.130e-05``); never ``1e-3``, which PyYAML loads as a string.
"""

from __future__ import annotations

import math
from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.errors import InputError

# Below this magnitude a fixed 6-decimal format would print 0.000000 for a real, measurable
# divergence (identical weights on two engines give ~1e-10 nats), so switch to scientific notation.
_SCI_BELOW = 1e-3


def _finite(x: float, what: str) -> float:
    if not isinstance(x, (int, float)) or isinstance(x, bool):
        raise InputError(f"{what}: expected a number, got {type(x).__name__}")
    if not math.isfinite(x):
        raise InputError(f"{what}: value {x!r} is not finite; a card cannot carry it")
    return float(x)


def fmt_nats(x: float, what: str = "value") -> str:
    """A divergence in nats: ``0.021346`` (6 decimals) or ``2.130e-05`` below 1e-3. Zero is ``0.000000``."""
    x = _finite(x, what)
    if x == 0.0:
        return "0.000000"
    if abs(x) < _SCI_BELOW:
        return f"{x:.3e}"
    return f"{x:.6f}"


def fmt_percent(fraction: float, what: str = "value") -> str:
    """A fraction in [0, 1] as a percentage with three decimals, without the sign: ``99.512``.

    ``100.000`` and ``0.000`` are kept for exactly 1 and 0: a candidate that disagrees once in a
    million positions shows ``99.999``, not a perfect score.
    """
    f = _finite(fraction, what)
    out = f"{f * 100.0:.3f}"
    if out == "100.000" and f < 1.0:
        return "99.999"
    if out in ("0.000", "-0.000") and f > 0.0:
        return "0.001"
    return "0.000" if out == "-0.000" else out


def fmt_int(n: int) -> str:
    """Integers with thousands separators, as cards print token counts: ``151,936``."""
    return f"{n:,}"


def fmt_plain(x: float) -> str:
    """A float without unit conventions (levels, floors): shortest round-trip repr, dotted."""
    s = repr(float(x))
    if "e" in s and "." not in s.split("e")[0]:
        mant, exp = s.split("e")
        s = f"{mant}.0e{exp if exp[0] in '+-' else '+' + exp}"
    return s


# ---------------------------------------------------------------------------------------------
# Markdown
# ---------------------------------------------------------------------------------------------

_MD_ESCAPES = {
    "\\": "\\\\",
    "|": "\\|",
    "<": "&lt;",
    ">": "&gt;",
    "*": "\\*",
    "`": "\\`",
}
_NEWLINES = re.compile(r"\r\n|\r|\n|\u2028|\u2029|\x85")


def md_cell(value: object) -> str:
    """Text made safe for one Markdown table cell (and for inline prose).

    ``|`` would end the cell and a newline the row; ``<``/``>`` could open HTML (or fake a
    ``<!-- kldcard:end -->`` marker); ``*`` and backticks would start emphasis or code spans.
    Newlines become ``<br>`` so a multi-line value stays in its cell.
    """
    text = "" if value is None else str(value)
    text = "".join(_MD_ESCAPES.get(ch, ch) for ch in text)
    return _NEWLINES.sub("<br>", text)


def fmt_of_n(part: float, n: int, what: str = "value") -> str:
    """``287 of 305``: a count out of ``n``. A count above ``n`` is never printed as more than ``n``
    without saying why (see :func:`fmt_n_eff`); here it is an error, since only an estimate can exceed n."""
    if part > n:
        raise InputError(f"{what}: {part:g} of {n} is more than all of them")
    return f"{fmt_int(round(part))} of {fmt_int(n)}"


N_EFF_ABOVE_N = ("capped at n: the block bootstrap estimates {raw}, more than n, because neighbouring positions "
                 "diverge in opposite directions (negative autocorrelation)")


def fmt_n_eff(n_eff: float, n: int) -> str:
    """An effective sample size out of ``n`` positions: ``287 of 305``. An estimate above ``n``
    (negatively autocorrelated positions; infinite when the block standard error is 0) reads ``305 of
    305`` followed by the reason, never ``333 of 305``."""
    if not (n_eff <= n):  # also inf and nan
        raw = "unbounded" if not math.isfinite(n_eff) else fmt_int(round(n_eff))
        return f"{fmt_int(n)} of {fmt_int(n)} ({N_EFF_ABOVE_N.format(raw=raw)})"
    return fmt_of_n(n_eff, n)
