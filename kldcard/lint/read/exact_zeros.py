"""A KL divergence reported as exactly zero (issue 28, claim detection): written as a comparison a check asserts
("`rollout_corr/k3_kl == 0` — exactly, not within an epsilon"), or in words ("divergência KL exatamente 0", "KL is
exactly zero", "KLD exactamente 0"). A bare integer is no claims_patterns.NUMBER (a decimal), so these zeros were
never read. Forms of two authors (verl's PR, miles' notes) and the plain grammar of "==" and "exactly" in the languages
the corpus holds. Not an assignment ("kl = 0" sets a value; "kl_coef == 0" is a setting: read.metric_keys leaves it
out) nor a bound ("KL < 0"). The claim is at the zero; it carries no number (nothing to compare with a block).
Samples in tests/test_lint_stated_bounds.py and tests/test_lint_read_forms_claims.py."""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.claim_types import Claim
from kldcard.lint.claims_patterns import KLD_TERM
from kldcard.lint.markdown import Doc
from kldcard.lint.read import claim_context
from kldcard.lint.scan import spans_with

I = re.IGNORECASE
_EXACTLY = r"(?:exactly|exactamente|exatamente|exactement|esattamente|genau)"
_ZERO = r"(?P<zero>0(?![\d.,]\d)|zero|cero|z[ée]ro|null)\b"
# after the KL term (its closing code mark, a quote or "is" between): "== 0", "exactly 0", "is exactly zero"
ZERO_AFTER = re.compile(
    r"[`*_\"'”»)\s]{0,3}(?:(?:is|was|stays?|remains?|es|é|est|ist|fica|queda)\s+)?(?:==\s*|" + _EXACTLY + r"\s+)" + _ZERO, I
)
# A result written "KL = 0" in prose, not code: "stays perfect at KL=0", "reload is exact (`max KL = 0`)", "KLD=0." (AutoModel's
# reload PRs, a batch-width fidelity log). A fenced code line's "kl = 0" sets a value; "KL = 0 when p = q" is a definition.
# And a bare zero as one value of a list of metrics ("(agree 0.9995, KL 0)", "(mean KLD 0, same top token 100 %)": two authors).
EQUALS_ZERO = re.compile(r"[ \t]*=[ \t]*(?P<zero>0)(?:\.0+)?(?!\d|[.,]\d|[ \t]*(?:when|if|iff|for|means|whenever)\b|[ \t]*[<>≤≥])|[ \t]+(?P<listed>0)(?=[ \t]*[,;)])", I)
# A computed value reported with a verb of outcome later in the term's sentence ("the KL divergence ... is no longer
# computed correctly: it always comes out as 0", "the KLD turned out to be zero"): plain grammar of reporting a
# result; not a definition ("... comes out as 0 when p = q").
OUTCOME_ZERO = re.compile(
    r"[^.;\n]{0,80}?\b(?:(?:comes?|came|coming)\s+out\s+(?:as|at)|(?:turns?|turned)\s+out\s+to\s+be|(?:ends?|ended)\s+up\s+(?:as|at))\s+"
    r"(?:exactly\s+)?" + _ZERO + r"(?![ \t]*(?:when|if|iff|for|whenever)\b)", I
)
# The term and a second metric given one zero together ("KLD and the max abs diff are both 0", "KLDと最大absolute差は
# ともに0", "KL 和最大误差均为 0"): plain grammar of coordination with "both"; the zero is the KL's value too.
# (A Japanese or Chinese zero runs on into a word, "0だった": no \b after it, only no further digit or Latin letter.)
BOTH_ZERO = re.compile(
    r"\s*(?:and|と|和|及)\s*[^.;:。、，,\n]{1,40}?\s*(?:(?:are|were)\s+both|は(?:ともに|いずれも|どちらも)|(?:均|都)(?:为|是))\s*"
    r"(?P<zero>0(?![\d.,]?\d|[A-Za-z_])|zero\b)(?![^.;\n]{0,40}?\b(?:when|if|iff|whenever|by\s+definition|for\s+(?:identical|equal|the\s+same)|exactly\s+when|only\s+when)\b)",
    I,  # not a definition ("... are both 0 when p = q", "... both 0 by definition for identical distributions")
)

# "Set kl = 0 to switch the term off": a setting. A reported value writes the term as a name (capitals, "KL=0") and no
# verb of setting stands before it.
SETTING_BEFORE = re.compile(r"\b(?:set|sets|setting|use|using|force|forcing|assume|assuming|put)\s+(?:the\s+)?[`*_]*$", I)


def _reported(sentence: str, term: re.Match[str]) -> bool:
    return "KL" in term.group(0) and SETTING_BEFORE.search(sentence, max(0, term.start() - 20), term.start()) is None


def exact_zeros(doc: Doc, skip: set[int]) -> list[Claim]:
    """Claims of an exactly zero KL, one per line, outside the lines in ``skip`` (tool output, lines already claimed)."""
    out: list[Claim] = []
    taken = set(skip)
    for k in spans_with(KLD_TERM, doc.scanned, doc.sentences, doc.sentence_starts):
        start, end = doc.sentences[k]
        sentence = doc.text[start:end]
        if claim_context.training_sentence(sentence):
            continue
        for term in KLD_TERM.finditer(sentence):
            m = ZERO_AFTER.match(sentence, term.end())  # (no slice: a long sentence would be copied per term)
            if m is None and not doc.code[doc.line_index(start + term.end())] and _reported(sentence, term):
                m = EQUALS_ZERO.match(sentence, term.end()) or OUTCOME_ZERO.match(sentence, term.end()) or BOTH_ZERO.match(sentence, term.end())
            if m is None:
                continue
            at = start + (m.start("zero") if m.group("zero") is not None else m.start("listed"))
            line = doc.line_index(at)
            if line not in taken:
                taken.add(line)
                out.append(Claim("sentence", at, sentence.strip(), False))
    return out
