"""D6 forms bound to the KL term by their structure (not a word anywhere in the text):

- a sample count written "n=256" in a sentence that names the KL ("KLD@n=256", "(gfx1100, kv-q8, n=256):
  ... −38% KLD"): the number of scored samples or windows;
- a bare token count listed among a KL run's settings, after a comma or an opening bracket and before the next one
  ("KL vs the reference — bundled file.pt, 1820 tokens:", "测量（词表 120,832，8 个 token，…）：" over a KL table): the
  tokens the figure is taken over (CONVENTIONS rule 15b.1), in a sentence that names the KL or on a lead-in line over a
  KL table (:data:`LISTED_TOKENS`);
- a top-1 agreement written as a fraction beside its word ("argmax equal on 136/141", "top-1 match 40/40", "agreed on
  127/128 top tokens") in a sentence that names the KL: its whole is the positions compared, those the KL is taken
  over (CONVENTIONS, round 21 q2), not a count of prompts or tasks after it (:data:`TOP1_FRACTION`).

(A count column beside a KL column is :data:`kldcard.lint.read.position_counts.COLUMN`.)

:func:`vetoed` drops a sample count in a sentence without a KL term ("n=3 seeds" of a training run), and a listed
token count that is a window's length ("100 windows (2048 tokens, stride 512)") or a speed run's.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read import clause_stops, context_written, position_counts
from kldcard.lint.read.numbers import COMMA_THOUSANDS, OUT_OF, parse_int
from kldcard.lint.read.sentence_terms import has
from kldcard.lint.read.terms import KL_MENTION

I = re.IGNORECASE

KL = re.compile(KL_MENTION, I)
SAMPLE_N = re.compile(r"(?<![\w.])n\s*=\s*(\d{2,7})\b(?![.,]\d)(?!\s*(?:seeds?|runs?|repeats?|trials?|layers?|bits?|experts?|heads?)\b)", I)
# a list item of its own: a separator before ("," "(" and their CJK forms; not ":", which ends a label such as
# "Vocab: 248,320 tokens"), one after, and nothing but the count and the word for tokens between
LISTED_TOKENS = re.compile(
    r"(?:[,(]\s|[，、（(])\s*~?(" + COMMA_THOUSANDS + r"|\d{1,7})\s*(?:个\s*)?(?:tokens?|トークン|토큰)(?=\s*[,)，、）:：;]|\s*$)", I | re.M
)
# the agreement word, then the fraction a few words on, or the fraction, then the word ("top tokens", "top-1")
# (not "greedy": greedy tokens equal up to a divergence are a generation's, "64/70")
TOP1 = r"(?:top[- ]?1|argmax|arg\s?max|same[- ]top|top\s+tokens?)"
# (a count out of a total, read.numbers.OUT_OF; followed by a noun other than tokens or positions, or by "-bit", it
# counts those: "7/8 languages", "15/16 layers", "7/8 idiomas", "7/8 个语种", "4/8-bit", "48/48 prompts"; only the
# agreement words may follow: "127/128 top tokens")
FRACTION = (OUT_OF + r"(?![.,]\d|-?[^\S\n]*(?!(?:tokens?|positions?|posiciones|posições|top|argmax|same|"
            r"match\w*|agree\w*|coincid\w*|一致)(?![^\W\d_]))[^\W\d_])")
TOP1_FRACTION = re.compile(
    r"\b" + TOP1 + r"\b(?:[^\S\n]+[^\s\d/]{1,14}){0,3}?[^\S\n]+" + FRACTION + r"|" + FRACTION + r"[^\S\n]+(?:[a-z]+[^\S\n]+){0,1}" + TOP1 + r"\b", I
)
PATTERNS = [SAMPLE_N, LISTED_TOKENS, TOP1_FRACTION]
# a fraction of flips or changes counts disagreements at picked positions ("top-1 flips 0/190"), not those compared
DISAGREEMENT = re.compile(r"flip|chang|disagree|mismatch", I)
ITEMS = r"(?:cases?|prompts?|questions?|tasks?|tests?|samples?|examples?|items?)\b"
# what a bracket opens on: a unit whose length the count gives ("sliding windows (2048 tokens, ...)", "context window
# (4096 tokens)"), not a count of scored tokens
LENGTH_OF = re.compile(r"\b(?:windows?|chunks?|sequences?|segments?|rows?|contexts?|prompts?|blocks?)\s*\($", I)
SPEED = context_written.SPEED  # one compiled pattern of the speed words (eval_text_runs uses it too)


def vetoed(text: str, sentence: str, m: re.Match[str]) -> bool:
    if m.re is LISTED_TOKENS.compiled:
        if LENGTH_OF.search(text, max(0, m.start() - 24), m.start() + 1) or has(SPEED, sentence):
            return True
        return not has(KL, sentence) and not position_counts.kl_context(text, m)
    if m.re is TOP1_FRACTION.compiled:
        part, whole = _fraction(m)
        # its clause (read.clause_stops): "greedy_regression.py PASS with top-1 24/24; kl_vs_reference.py ... mean KL"
        # is another check's
        at = sentence.find(m.group(0))
        lo, hi = clause_stops.in_sentence(sentence, at, at + len(m.group(0))) if at >= 0 else (0, len(sentence))
        clause = sentence[lo:hi]
        return (part > whole or whole < 4 or not KL.search(clause) or bool(DISAGREEMENT.search(m.group(0)))
                or bool(re.search(r"(?<![\d,.])%d[- ]" % whole + ITEMS, clause)))  # "in the 48-case check ... 48/48 top-1"
    return not has(KL, sentence)


def _fraction(m: re.Match[str]) -> tuple[int, int]:
    """The part and the whole of a :data:`TOP1_FRACTION` match (its groups are those of the alternative that matched)."""
    part, whole = (int(g) for g in m.groups() if g)
    return part, whole


def read(span: str) -> dict[str, int]:
    m = SAMPLE_N.search(span)
    if m:
        return {"count": int(m.group(1))}
    m = TOP1_FRACTION.search(span)
    if m:
        return {"count": _fraction(m)[1]}
    m = LISTED_TOKENS.search(span)
    n = parse_int(m.group(1)) if m else None
    return {"count": n} if n else {}
