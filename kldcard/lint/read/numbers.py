"""Numbers as people write them on cards: decimal points and decimal commas, thin, narrow and
non-breaking spaces as thousands separators, ``1.2e-3``, ``1,2·10⁻³``, ``0.021 ± 0.0004``, percentages.

Data first: the separators and the superscript digits are tables; :func:`parse_number` reads one
number's text, :data:`NUMBER` finds them in a cell or sentence. Samples (from real cards and tool
output) are in tests/test_lint_read_forms_numbers.py.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

# Characters cards put between digit groups: comma, point, apostrophe, spaces (plain, no-break U+00A0,
# narrow no-break U+202F, thin U+2009).
GROUP_SPACES = " \u00a0\u202f\u2009"
SUPERSCRIPT = str.maketrans("⁰¹²³⁴⁵⁶⁷⁸⁹⁻⁺", "0123456789-+")
MINUS = str.maketrans({"−": "-", "–": "-"})  # U+2212 minus sign; an en dash before a digit
TIMES_TEN = re.compile(r"\s*(?:[·×x*]|\\cdot|\\times)\s*10\s*(?:\^|\*\*)?\s*\{?([⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+|[-+−]?\d+)\}?")
# A power of ten written alone, its mantissa left out ("on the order of 10^-3", "10⁻⁴", "10**-5", "10^{-3}"): plain
# grammar of numbers. Only a negative exponent makes it a divergence-sized value (KLD_VALUE); "10^6" is a count.
BARE_POWER = re.compile(r"^10\s*(?:(?:\^|\*\*)\s*\{?(?P<e>[-+−]?\d+)\}?|(?P<s>[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+))$")


def _power(m: re.Match[str]) -> int:
    return int((m.group("e") or m.group("s")).translate(SUPERSCRIPT).translate(MINUS))

# Units of time a log prints beside its numbers ("0.18 seconds per pass", "2.5 ms", "ETA 0.40 minutes"): a number
# followed by one is a timing, whatever KL line it stands on (regular-expression text, read by the claim finders)
TIME_UNITS = r"seconds?|secs?|ms|minutes?|mins?|hours?|hrs?"

# One number as written: digits with "." or "," (decimal or grouping) and group spaces, an optional
# exponent (e-notation or "·10⁻³"), an optional percent sign. Not part of a word or version.
NUMBER = re.compile(
    r"(?<![\w.,/\-])[-−]?(?:\d{1,3}(?:[ \u00a0\u202f\u2009,.]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?|[.,]\d+)"
    r"(?:[eE][-+−]?\d+|\s*(?:[·×]|\\cdot|\\times)\s*10\s*(?:\^|\*\*)?\s*\{?(?:[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+|[-+−]?\d+)\}?)?"
    r"(?:\s*%)?(?![\w.]|,\d)"
)


# A number that can be a divergence: a decimal (point or comma: "0.0231", "0,1137", "12,5") with an
# optional exponent ("1.2e-3", "1,2·10⁻³"), or an integer with a negative exponent ("4e-5", "4×10⁻⁶"); not an integer, not a grouped count ("204,800"), not a
# version (v0.2.8), size (5.0bpw), model name (Qwen3.5, Llama-3.1-8B), section (§5.5) or percentage. A word of an alphabet
# (Latin, Greek, Cyrillic) glued to it makes it part of a name; a CJK character does not: Chinese,
# Japanese and Korean write particles and words right against a number ("平均KLDは0.0459です", "为0.005").
ALPHABETIC = r"A-Za-z0-9_\u00c0-\u00d6\u00d8-\u00f6\u00f8-\u024f\u0370-\u03ff\u0400-\u04ff"  # not × (U+00D7), ÷ (U+00F7)
# Values joined by slashes, one per compared thing ("mean KLD 0.164/0.172", "KL 0.0025 / 0.0041 / 0.0025", "KL 散度只有
# 0.03/0.11", "max/mean KL 0.003784/0.000485"): a slash with a decimal on each side. Not a fraction or ratio of counts
# ("3/4", "49/49"), a date ("2026/11/17"), a path ("runs/0.5") or a size glued to its unit ("7.0/8.0bpw"): a slash
# elsewhere keeps the number out. One grammar for the whole list (SLASH_LIST) and for each of its values (KLD_VALUE).
SLASH = r"[ \t]*/[ \t]*"
# the exponent of a power of ten written with a caret or two stars ("10^-4", "10**-5", "10^{-3}"), and a negative one
# in either way ("10⁻³" too): a bare power of ten is a KLD value only when it is below one
_POWER = r"(?:\^|\*\*)\{?[-+−]?\d+\}?"
_NEGATIVE_POWER = r"(?:⁻[⁰¹²³⁴⁵⁶⁷⁸⁹]+|(?:\^|\*\*)\{?[-−]\d+\}?)"
# the sign between a mantissa and its power of ten: "·", "×", LaTeX's, and in ASCII text "x" or "*" ("1.2x10^-3",
# "5 * 10^-4"), which only a power of ten after them makes a multiplication ("1.2x lower" is a factor)
_TIMES = (r"[ \u00a0\u202f]?(?:[·×]|\\cdot|\\times|[xX*](?=[ \u00a0\u202f]?10(?:\^|\*\*|[⁻⁺⁰¹²³⁴⁵⁶⁷⁸⁹])))"
          r"[ \u00a0\u202f]?")
# A unit only a divergence (or an entropy) is given in, after a whole number ("35 mbits", "508 mbits", "12 millinats",
# "0 nats"): the unit makes the integer a value, the way a negative exponent does. Bits alone stay out ("4 bits" is a
# quantization's width); thousandths of a bit or a nat, and nats, are units of information only.
_KL_UNIT = r"[ \t\u00a0\u202f]?(?:(?:m|milli-?)(?:bits?|nats?)|nats?)(?![" + ALPHABETIC + r"])"
_DECIMAL = r"-?(?:\d+[.,]\d+|\.\d+)(?:[eE][-+]?\d+)?"
_NEXT_IN_LIST = r"/(?=[ \t]*" + _DECIMAL + r"(?![" + ALPHABETIC + r"%]|\.\d))"  # a slash, then a whole decimal
_AFTER_DECIMAL_SLASH = "|".join(r"(?<=[.,]\d{%d}/)" % k for k in range(1, 9))  # glued: "0.164/" before the value
_AFTER_DECIMAL_SLASH += "|" + "|".join(r"(?<=[.,]\d{%d}[ \t]/)" % k for k in range(1, 9))  # "0.164 /0.172"
SLASH_LIST = re.compile(r"(?<![" + ALPHABETIC + r".\-/§])" + _DECIMAL + r"(?:" + SLASH + _DECIMAL + r")+(?![" + ALPHABETIC + r"%/]|\.\d)")
KLD_VALUE = re.compile(
    r"(?<![" + ALPHABETIC + r".\-§])(?:(?<!/)|" + _AFTER_DECIMAL_SLASH + r")"
    r"(?:10" + _NEGATIVE_POWER + r"|[-−]?(?:\d+\.\d+|\.\d+|0,\d+|[1-9]\d*,(?:\d{1,2}|\d{4,})(?![\d,])"
    r"|\d+(?=[eE][-−]\d|" + _TIMES + r"10" + _NEGATIVE_POWER + r"|" + _KL_UNIT + r"))"
    r"(?:[eE][-+−]?\d+|" + _TIMES + r"10(?:[⁻⁺]?[⁰¹²³⁴⁵⁶⁷⁸⁹]+|" + _POWER + r"))?)"
    r"(?![" + ALPHABETIC + r"%]|/(?!" + _NEXT_IN_LIST[1:] + r")|\.\d|-(?!\d*\.\d)\w)"  # (a range "0.002-0.004": its first end is a number)
)


def _mantissa(text: str) -> float:
    """A number without exponent; ``,``/``.`` read as decimal or grouping the way the text implies."""
    t = text.translate(MINUS).strip()
    for ch in GROUP_SPACES:
        t = t.replace(ch, "")
    t = t.replace("'", "")
    if "," in t and "." in t:  # both: the last one is the decimal separator
        if t.rfind(",") > t.rfind("."):
            t = t.replace(".", "").replace(",", ".")
        else:
            t = t.replace(",", "")
    elif "," in t:
        head, _, tail = t.rpartition(",")
        # one comma followed by exactly three digits after a non-zero integer part is grouping
        # ("204,800"); otherwise it is a decimal comma ("0,1137", "12,5")
        if t.count(",") > 1 or (len(tail) == 3 and head.lstrip("-") not in ("", "0")):
            t = t.replace(",", "")
        else:
            t = head + "." + tail
    elif t.count(".") > 1:  # "1.234.567": points as grouping
        t = t.replace(".", "")
    return float(t)


def parse_number(text: str) -> tuple[float, bool]:
    """(value, is_percent) of one number's text; ValueError when it is not one."""
    t = text.strip()
    percent = t.endswith("%")
    if percent:
        t = t[:-1].strip()
    m = BARE_POWER.match(t.lstrip("~≈"))
    if m is not None:  # "10^-3": a mantissa of one
        return 10.0 ** _power(m), percent
    m = TIMES_TEN.search(t)
    if m is not None:
        exp = int(m.group(1).translate(SUPERSCRIPT).translate(MINUS))
        return _mantissa(t[: m.start()]) * 10.0**exp, percent
    low = t.translate(MINUS).lower()
    if "e" in low:
        mant, _, exp = low.partition("e")
        return _mantissa(mant) * 10.0 ** int(exp), percent
    return _mantissa(t), percent


def parse_int(text: str) -> int | None:
    """A count as written ("204,800", "204 800", "250k", "1.2M", "~250,000"); None when not one."""
    t = text.strip().lstrip("~≈").strip()
    scale = 1
    if t[-1:] in "kK":
        scale, t = 1000, t[:-1].strip()
    elif t[-1:] == "M":
        scale, t = 1_000_000, t[:-1].strip()
    if not t or not t[0].isdigit():
        return None
    try:
        if scale == 1:
            digits = t
            for ch in GROUP_SPACES + ",.'":
                digits = digits.replace(ch, "")
            return int(digits) if digits.isdigit() else None
        return int(round(_mantissa(t) * scale))
    except ValueError:
        return None


def decimals_half_ulp(text: str) -> float:
    """Half a unit in the last printed digit of a number's text: the rounding it allows."""
    t = text.strip().rstrip("%").strip()
    bare = BARE_POWER.match(t)
    if bare is not None:  # "10^-3": an order of magnitude, half of it either way
        return 0.5 * 10.0 ** _power(bare)
    m = TIMES_TEN.search(t)
    exp = 0
    if m is not None:
        exp, t = int(m.group(1).translate(SUPERSCRIPT).translate(MINUS)), t[: m.start()]
    elif "e" in t.lower():
        t, _, e = t.lower().partition("e")
        exp = int(e.translate(MINUS))
    sep = max(t.rfind("."), t.rfind(","))
    digits = len(t) - sep - 1 if sep >= 0 and not (t.count(",") == 1 and t.rfind(",") == sep and len(t) - sep - 1 == 3 and t[:sep].lstrip("-") not in ("", "0")) else 0
    return 0.5 * 10.0 ** (-digits + exp)


# A grouped integer as the readers' regular expressions find it ("2,048", "2.048", "131 072", and with a no-break,
# narrow or thin space): one grammar for the count readers (context, position_counts, positions, vocabulary_forms),
# whose four copies had drifted apart. Regular-expression text: THOUSANDS_SEPARATOR is one separator, for a reader
# that writes its own digit groups ("de vocabulario" takes exactly two or three digits, then one group). No
# apostrophe ("1'024"): parse_int reads it, but no reader finds it and no card in the corpora writes it.
THOUSANDS_SEPARATOR = r"[,.\u202f\u00a0\u2009 ]"
THOUSANDS = r"\d{1,3}(?:" + THOUSANDS_SEPARATOR + r"\d{3})+"
# The grouped integer in the readers that take fewer separators, on purpose:
# - English grouping only ("29,955 targets", "top-151,936 logits"): in their phrases a "." is a decimal point or a
#   version ("1.5 tokens", "4.1 8B"), and a space stands between two numbers ("32 512-token windows");
COMMA_THOUSANDS = r"\d{1,3}(?:,\d{3})+"
# - a separator that binds the digits (a comma, a period or a no-break space; not a plain or thin space, which as often
#   stand between two numbers): a context length or a window count ("2.048", "2 048" with a no-break space).
BOUND_THOUSANDS = r"\d{1,3}(?:[,.\u202f\u00a0]\d{3})+"
# (context_labels.LENGTH takes none: a "," there separates a list's items.)


# A count out of a total ("15/15", "24 / 100", "136/141"): the part and the whole (groups 1 and 2 where it is written),
# on one line, not glued to another number, decimal or fraction ("1/2/3", "0.5/1"). Its readers say what may follow it:
# position_forms.FRACTION (a top-1 agreement, no count of another noun), evidence_patterns.OUT_OF (a score, no name).
OUT_OF = r"(?<![\d/.,])(\d{1,7})[^\S\n]*/[^\S\n]*(\d{1,7})(?![\d/])"
