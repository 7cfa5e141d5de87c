"""D7 statements beyond :mod:`kldcard.lint.read.direction`'s formulas and words: which side is P said in the
other ways definitions say it.

- the weighting distribution of a written-out sum or expectation is P: "sum_v p_ref(v) log(p_ref(v)/p_q(v))",
  "E_p[log p - log q] with p the BF16 model", "the expectation is taken under the reference distribution"
  (:data:`WEIGHT`, :data:`UNDER`);
- the roles named as P and Q: "the reference as P and the quant as Q", "P = BF16 model, Q = Q4 model" (:data:`AS_P`);
- the textbook phrase "the KL divergence of Q from P" (= KL(P ‖ Q)): "KL of the quant from the reference" (:data:`OF_FROM`);
- a symmetric KL or both directions averaged: "symmetric KL", "average of both directions" (:data:`SYMMETRIC`);
- a formula in CJK brackets: "KL散度（参考‖量化）" (:data:`CJK_FORMULA`);
- both directions side by side: "| KL(q‖o) | KL(o‖q) |", "BF16->var ... var->BF16" (:data:`BOTH_WAYS`).

:func:`classify` gives "forward" (KL(P_ref ‖ P_cand)), "reverse", "symmetric", "both" or None (sides not told apart).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.terms import KL_WORD

I = re.IGNORECASE

# a side's role by its name (as read.direction's REF_SIDE / CAND_SIDE, which import this module)
REF_SIDE = re.compile(r"^\W*(?:ref\w*|base(?:line)?\w*|bf16|fp16|f16|fp32|f32|orig\w*|teacher|official|parent|full\w*|unquant\w*|参照|参考|基准|原始|元)", I)
CAND_SIDE = re.compile(r"^\W*(?:q(?!\w)|quant\w*|cand\w*|test|student|new|compressed|pruned|量子化|量化|候补|候補)", I)

ROLE = r"(?:reference|ref|teacher|original|base(?:line)?|parent|BF16|FP16|F16|FP32|full[- ]precision|unquantized|quant\w*|candidate|student|compressed|Q\d\w*)"
WEIGHT = re.compile(
    # (the argument may carry its condition, "p_ref(v|context_t)", and × multiply as * and · do: probability notation)
    r"(?:\bsum|Σ|∑)_?\{?\w{0,6}\}?\s*(?P<a>[pq]_?\{?\w{1,12}\}?)\s*\(\s*\w{0,4}(?:\s*\|\s*[\w,]{1,16})?\s*\)\s*[*·×]?\s*(?:\\?log|ln)\b|"
    r"\bE_?\{?(?P<b>[pq](?:_?\{?\w{1,12}\}?)?)\}?\s*\[[^\]\n]{0,40}\][^.\n]{0,20}?\bwith\s+[pq]\s+(?:the\s+|being\s+the\s+)?(?P<c>" + ROLE + r")",
    I,
)
UNDER = re.compile(r"\bexpectation\s+(?:is\s+)?(?:taken\s+)?(?:under|over|with\s+respect\s+to)\s+the\s+(?P<a>" + ROLE + r")(?:\s+(?:model|distribution|logits))?\b", I)
AS_P = re.compile(
    r"\b(?:the\s+)?(?P<a>" + ROLE + r")(?:\s+(?:model|distribution|logits))?\s+as\s+P\b|"
    r"(?<![\w|])P\s*=\s*(?:the\s+)?(?P<b>" + ROLE + r")\b",
    I,
)
OF_FROM = re.compile(
    r"(?<![A-Za-z_])(?:" + KL_WORD + r"|Kullback[- ]Leibler(?:\s+divergence)?)\s+of\s+(?:the\s+)?(?P<q>" + ROLE + r")(?:\s+(?:model|distribution))?"
    r"\s+from\s+(?:the\s+)?(?P<p>" + ROLE + r")\b",
    I,
)
SYMMETRIC = re.compile(r"\bsymmetri[sz]ed\s+" + KL_WORD + r"|\bsymmetric\s+(?:" + KL_WORD + r"|divergence)|\baverage\s+of\s+both\s+directions\b", I)
CJK_FORMULA = re.compile(r"(?:KL散度|KLダイバージェンス|KL\s*발산)\s*[（(]\s*(?P<a>[^‖|∥）)\n]{1,12}?)\s*(?:‖|\|\||∥)\s*(?P<b>[^‖|∥）)\n]{1,12}?)\s*[）)]", I)
# both directions side by side on a line that names KL: two columns or values whose sides swap, joined by the same arrow
# or separator ("| KL(q‖o) | KL(o‖q) |", "Decode BF16->var   Decode var->BF16"; a separator lost to the text's encoding
# is one other character: "KL(qโo) | KL(oโq)")
BOTH_WAYS = re.compile(
    r"(?<![A-Za-z])KLD?(?![A-Za-z])[^\n]{0,120}?(?<![\w.])(?P<x>[A-Za-z][\w.]{0,15}?)\s*(?P<s>->|→|‖|∥|\|\||[^\x00-\x7f\s])\s*"
    r"(?!(?P=x)(?![\w.]))(?P<y>[A-Za-z][\w.]{0,15})(?![\w.])[^\n]{1,120}?(?<![\w.])(?P=y)\s*(?P=s)\s*(?P=x)(?![\w.])",
    re.I,
)
PATTERNS = [WEIGHT, UNDER, AS_P, OF_FROM, SYMMETRIC, CJK_FORMULA, BOTH_WAYS]


def _side(word: str) -> str | None:
    """"ref" or "cand" for a side's name, None when neither."""
    word = word.strip().strip("{}")
    if REF_SIDE.match(word) and not CAND_SIDE.match(word):
        return "ref"
    if CAND_SIDE.match(word) or re.match(r"Q\d", word, I):
        return "cand"
    return None


def _p_is(word: str) -> str | None:
    side = _side(word)
    return None if side is None else ("forward" if side == "ref" else "reverse")


def classify(span: str) -> str | None:
    """The direction a span found by :data:`PATTERNS` states, or None."""
    if SYMMETRIC.search(span):
        return "symmetric"
    m = BOTH_WAYS.search(span)
    if m is not None and m.group("x").lower() != m.group("y").lower():
        return "both"
    m = OF_FROM.search(span)
    if m is not None:  # "KL of Q from P" = KL(P ‖ Q)
        return _p_is(m.group("p"))
    m = CJK_FORMULA.search(span)
    if m is not None:
        a, b = _side(m.group("a")), _side(m.group("b"))
        return "forward" if (a == "ref" or b == "cand") else ("reverse" if (b == "ref" or a == "cand") else None)
    for p in (WEIGHT, UNDER, AS_P):
        m = p.search(span)
        if m is not None:
            word = next(g for g in (m.groupdict().get(k) for k in ("c", "a", "b")) if g)
            if word.lower() in ("p", "q") or re.fullmatch(r"[pq]", word, I):  # a bare letter names no role
                return None
            return _p_is(re.sub(r"^[pq]_?\{?", "", word, flags=I) if re.match(r"[pq]_", word, I) else word)
    return None
