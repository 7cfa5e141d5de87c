"""D7, the KL direction: the ways cards write which distribution is P in KL(P ‖ Q), beyond
evidence_patterns.D7's "KL(P ‖ Q)", "forward KL" and "teacher-to-student".

- a KL formula under any name and separator: "KLD(BF16-teacher ‖ quant)", "KL-div(ref, cand)",
  "D_KL[p_ref || p_q]", "KL(base→quant)";
- the sides named by their roles: "from the reference to the quantized model", "teacher → student";
- the code that computes it: ``F.kl_div(log_q, log_p)`` / ``torch.nn.functional.kl_div`` (PyTorch's
  ``input`` is the candidate's log-probabilities, ``target`` the reference: KL(target ‖ input));
- a per-token log-ratio: "log p_official(t*) - log p_arm(t*)", "mean(target_logprob − baseline_logprob)"
  (the first log-probability is P's: the expectation is over its tokens);
- the words in other languages ("正向KL", "逆KL", "divergencia KL directa", "KL inverse", "Vorwärts-KL").

:func:`classify` gives the direction a span of these patterns states ("forward" = KL(P_ref ‖ P_cand),
"reverse", or "as-written" when the sides' roles cannot be told); samples in tests/test_lint_read_d789.py.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.claims_patterns import TRAINING_CONTEXT
from kldcard.lint.read import direction_forms
from kldcard.lint.read.terms import KL_WORD, REF_ROLE

I = re.IGNORECASE

# the sides of a formula by their role (a word of the side's name; "p"/"q" as the textbook writes them)
# (a single letter is a side only by itself: "p", not the "p" of "p_q" or the "q" of "q8")
REF_WORDS = r"ref\w*|base(?:line)?\w*|bf16|fp16|f16|fp32|f32|orig\w*|teacher|official|parent|full\w*|unquant\w*|[po](?!\w)|参照|参考|基准|原始|元"
CAND_WORDS = r"q(?!\w)|quant\w*|cand\w*|test|student|new|arm|approx\w*|compressed|pruned|量子化|量化|候补|候補"
PREFIX = r"^\W*(?:log[_ ]?)?(?:[PQ]_)?\{?"  # "p_ref", "log_q", "P_{teacher}"
REF_SIDE = re.compile(PREFIX + r"(?:" + REF_WORDS + r")(?![a-z0-9])", I)
CAND_SIDE = re.compile(PREFIX + r"(?:" + CAND_WORDS + r")(?![a-z0-9])", I)

# (Markdown escapes a bar inside a table cell, "KL(ref \\|\\| ours)", and LaTeX writes the double bar "\\|": "D_{\\mathrm{KL}}(P\\|Q)")
SEP = r"(?:‖|\|\||∥|\\\|\\\||\\\||→|->|,)"
SIDE = r"[^()\[\]\n‖∥|,]{1,40}?"
# a KL formula whose name the base pattern does not take ("KLD(", "KL-div(", "D_KL[", LaTeX's "D_{\\mathrm{KL}}(") or whose sides are
# joined by an arrow ("KL(base→quant)"); a record key's prefix may stand before it ("mean_kld(f32 kernel || fp64 oracle)")
FORMULA = re.compile(
    r"(?<![A-Za-z])(?:D_?KL|KL(?:D|[- ]?div(?:ergence)?)?)\}*\s*(?:[\(\[]\s*(?P<a>" + SIDE + r")\s*(?P<sep>" + SEP + r")\s*"
    r"(?P<b>" + SIDE + r")\s*[\)\]])",
    I,
)
# roles joined by an arrow or "to": "teacher → student", "from the reference to the quantized model"
ROLE_REF = REF_ROLE
ROLE_CAND = r"(?:student|candidate|cand|quant(?:ized|ised)?|compressed|test)"
ROLES = re.compile(
    r"\b(?P<a>" + ROLE_REF + r"|" + ROLE_CAND + r")\s*(?:→|->|⟶)\s*(?P<b>" + ROLE_REF + r"|" + ROLE_CAND + r")\b|"
    r"\bfrom\s+the\s+(?P<c>reference|teacher|original|base|baseline|quantized|candidate|student)(?:\s+(?:model|distribution|logits))?"
    r"\s+to\s+the\s+(?P<d>reference|teacher|original|base|baseline|quantized|candidate|student)\b",
    I,
)
# PyTorch: kl_div(input, target) = KL(target ‖ input), input the candidate's log-probabilities
TORCH = re.compile(r"(?:\bF|\bfunctional|\bnn\.functional)\.kl_div\s*\(\s*(?P<a>[^,()\n]{1,40}),\s*(?P<b>[^,()\n]{1,40})", I)
# a per-token log-ratio: the first log-probability is the distribution the expectation runs over
LOGRATIO = re.compile(
    r"\blog\s*[\(_ ]?\s*(?:p|q)_?\{?(?P<a>\w{1,20})\}?\s*\(\s*[^()\n]{0,12}\)\s*\)?\s*[-−–]\s*log\s*[\(_ ]?\s*(?:p|q)_?\{?(?P<b>\w{1,20})\}?\s*\(|"
    r"\b(?P<c>[a-z]\w{0,20}?)_log_?probs?\s*[-−–]\s*(?P<d>[a-z]\w{0,20}?)_log_?probs?\b",
    I,
)
# the words, English and the card languages (forward = KL(P_ref ‖ P_cand))
WORDS = re.compile(
    r"\b(?P<f>forward|reverse|inverse)[- ]" + KL_WORD + r"|\b" + KL_WORD + r"[- ]\(?(?P<g>forward|reverse)\)?(?![\w-])|"
    r"(?P<h>正向|前向|順方向|逆方向|逆向|反向|逆)\s*" + KL_WORD + r"|"
    r"\b(?:divergencia|divergência|divergence)\s+(?:KL|de\s+Kullback[- ]Leibler)\s+(?P<i>directa|direta|directe|inversa|inverse|reversa)\b|"
    r"\b" + KL_WORD + r"\s+(?P<j>directa|direta|directe|inversa|inverse|reversa)\b|"
    r"\b(?P<k>Vorwärts|Rückwärts|umgekehrte)[- ]" + KL_WORD + r"|(?P<l>прям|обратн)\w*\s+(?:KL|КЛ)",
    I,
)
REVERSE_WORDS = ("reverse", "inverse", "逆", "反向", "inversa", "reversa", "rückwärts", "umgekehrte", "обратн")

PATTERNS = [FORMULA, ROLES, TORCH, LOGRATIO, WORDS, *direction_forms.PATTERNS]  # and the other ways definitions say it


def _sides(a: str, b: str) -> str:
    """The direction of KL(a ‖ b) from its sides' roles."""
    if REF_SIDE.match(a) or (CAND_SIDE.match(b) and not REF_SIDE.match(b)):
        return "forward"
    if REF_SIDE.match(b) or CAND_SIDE.match(a):
        return "reverse"
    return "as-written"


def _role(word: str) -> str:
    return "ref" if re.fullmatch(ROLE_REF, word, I) else "cand"


def classify(span: str) -> str | None:
    """The direction a span found by :data:`PATTERNS` states; None when none of them reads it."""
    m = WORDS.search(span)
    if m is not None:
        word = next(g for g in m.groups() if g).lower()
        return "reverse" if any(word.startswith(w.lower()) for w in REVERSE_WORDS) else "forward"
    m = TORCH.search(span)
    if m is not None:  # kl_div(input, target) is KL(target ‖ input)
        return _sides(m.group("b"), m.group("a"))
    m = LOGRATIO.search(span)
    if m is not None:
        a, b = (m.group("a"), m.group("b")) if m.group("a") else (m.group("c"), m.group("d"))
        return _sides(a, b)
    m = ROLES.search(span)
    if m is not None:
        a, b = (m.group("a"), m.group("b")) if m.group("a") else (m.group("c"), m.group("d"))
        ra, rb = _role(a), _role(b)
        return "as-written" if ra == rb else ("forward" if ra == "ref" else "reverse")
    m = FORMULA.search(span)
    if m is not None:
        return _sides(m.group("a").strip(), m.group("b").strip())
    return direction_forms.classify(span)  # sums, expectations, "as P", "of Q from P", symmetric, CJK brackets


ARROW = re.compile(r"->|→|⟶")


def names_a_role(*sides: str) -> bool:
    """Whether one of the sides names a distribution's role (reference or candidate, "p"/"q"/"o")."""
    return any(REF_SIDE.match(s.strip()) or CAND_SIDE.match(s.strip()) for s in sides)


def is_formula(m: re.Match[str]) -> bool:
    """Whether a :data:`FORMULA` match is one: a "KLD (O6, test 3)" parenthesis is a label (with a comma, one
    side must name the reference and the other the candidate), and so is "KL divergence (BF16 → AWQ)" (an
    arrow after a space: which side is P is ambiguous, tests/data/real_cards/labels.yaml D7).

    An arrow names a direction of KL only between roles (the labels' rule: a single arrow is ambiguous): between
    two names that are no role it is a step of the work ("KL(0->m)": mode 0 to mode m; "kl_div (hf->tt) | kl_div
    (tt->hf)": the two conversions), and an arrow from a role to the same role ("BF16 → BF16") is a row's label."""
    if m.re is ROLES.compiled and m.group("a") and _role(m.group("a")) == _role(m.group("b")):
        return False
    if m.re is direction_forms.BOTH_WAYS.compiled and ARROW.fullmatch(m.group("s")):
        return names_a_role(m.group("x"), m.group("y"))
    if m.re is not FORMULA.compiled:
        return True
    if m.group("sep") in ("→", "->"):  # "KL(base→quant)" is a formula; "KL divergence (BF16 → AWQ)" a label (ambiguous)
        return not re.match(r"[\w-]*\s", m.group(0)) and names_a_role(m.group("a"), m.group("b"))
    if m.group("sep") != ",":
        return True
    a, b = m.group("a").strip(), m.group("b").strip()
    if len(a) > 24 or len(b) > 24:
        return False
    roles = [bool(REF_SIDE.match(s)) for s in (a, b)], [bool(CAND_SIDE.match(s)) for s in (a, b)]
    return (roles[0][0] and roles[1][1]) or (roles[0][1] and roles[1][0])  # one side each: KL(p_ref, p_q)


def in_words(text: str) -> str | None:
    """The direction a short text states (a front-matter metric name: "mean KL(target ‖ model)"), or None."""
    for p in PATTERNS:
        m = p.search(text)
        if m is not None and is_formula(m):
            return classify(m.group(0)) or "as-written"
    return None


def in_training(sentence: str, m: re.Match[str]) -> bool:
    """Whether the statement around ``m`` speaks of training (a penalty, a policy, a loss: the KL is no measurement's);
    in a table row only the match's own cell counts, as a "Policy" column beside a "Mean KL(ref || cand)" header names
    the row's settings, not an RL policy (table layout)."""
    if sentence.lstrip().startswith("|"):
        at = sentence.find(m.group(0))
        if at >= 0:
            left = sentence.rfind("|", 0, at)
            right = sentence.find("|", at + len(m.group(0)))
            sentence = sentence[left + 1 : right if right >= 0 else len(sentence)]
    return bool(TRAINING_CONTEXT.search(sentence))
