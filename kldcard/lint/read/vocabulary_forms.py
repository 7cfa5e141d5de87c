"""D8 forms in the card languages and the shared-vocabulary statement, beyond kldcard.lint.read.vocabulary:

- the whole vocabulary: "KLD completa de vocabulario", "vocabulario completo", "vocabulário completo",
  "vocabulaire complet", "gesamtes Vokabular", "全词表", "完整词表", "語彙全体"; a vocabulary size with a dot or
  space thousands separator before the word ("154.880 de vocabulario"); all of a vocabulary-sized count of logits
  ("all 248,320 raw logits");
- a top-k support written after its noun: "soporte top-512", "suporte top-64", "support top-100";
- the shared vocabulary of two models: "the intersection of the two vocabularies", "over the shared
  vocabulary", "词表的最小交集", "共通語彙";
- a top-k written as a qualifier of the KL, after it in its clause as a context length is: "KLD(bf16‖candidate) from
  the new `perplexity --kld-ref` (top-128)" (holdout10/c roughquant), "KL vs FP16 KV at 4096 ctx / top-2000: 0.0179"
  (holdout7/d jasonboukheir); k of two digits or more, not another metric's ("top-10 agreement", "top-5 93%"); a
  direction's double bar inside the KL's parentheses is no cell border ("KL(BF16 || model) over ... top-20": holdout13/f
  idiotsavant; the notation is general);
- the KL's formula summing over the vocabulary's index ("KLD_t = sum_v p(v) log(p(v)/q(v))", "\\sum_{v \\in V}",
  "\\sum_{v\\in\\mathcal V}"): the sum runs over every token, the whole vocabulary (holdout7/c zh_hant notes, holdout12/f
  serving benchmark, holdout13/e baa_ai; labelled D8 S); read only where a KL term precedes it in its paragraph, as
  another quantity's sum ("restore rate = Σ_v min(p, q)") is no KL's.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from kldcard.lint.read.numbers import THOUSANDS_SEPARATOR

I = re.IGNORECASE

WHOLE = re.compile(
    r"\b(?:completa|completo)\s+de\s+vocabulario\b|\bvocabul(?:ario|ário)\s+complet[oa]\b|\bvocabulaire\s+complet\b|"
    r"\bgesamte[sn]?\s+Vokabular\b|\bvollständige[sn]?\s+Vokabular\b|全词表|完整词表|全部词表|語彙全体|全語彙|"
    r"(?<![\d.,])\d{2,3}" + THOUSANDS_SEPARATOR + r"\d{3}\s+de\s+vocabul(?:ario|ário)\b|"
    # every logit of a vocabulary-sized row ("all 248,320 raw logits are compared", "all 154,880 logits", "all 248320
    # logits"): a count of logits of five or six digits is the vocabulary, and "all" of them is the whole of it
    # (holdout9 q3x, holdout12 glm53 nvfp4 qad, holdout14 mlx_serve; all labelled D8 S)
    r"\ball\s+(?:the\s+)?(?<![\d.,])\d{2,3}" + THOUSANDS_SEPARATOR + r"?\d{3}\s+(?:raw\s+)?logits\b",
    I,
)
SUPPORT = re.compile(r"\b(?:soporte|suporte|support)\s+(?:de\s+|du\s+)?top[- _]?(?P<k>\d{2,6})\b", I)
SHARED = re.compile(
    r"\b(?:intersection|overlap)\s+of\s+(?:the\s+)?(?:two\s+|both\s+)?(?:models'\s+)?vocab(?:ular(?:y|ies))?s?\b|"
    r"\b(?:shared|common)\s+vocab(?:ulary)?\b|词表的?(?:最小)?交集|共通(?:の)?語彙",
    I,
)
# (a wrapped line continues the clause; a blank line, a cell border or a full stop ends it)
QUALIFIER = re.compile(
    r"(?<![A-Za-z_])(?:KLD?|KL[- ]?div\w*)(?![A-Za-z_])(?:[^\n|.;]|\|\||\n(?![ \t]*\n)){0,80}?(?<![\w-])top[- _]?(?P<k>[1-9]\d{1,5})\b"
    r"(?![- _.,]?\d)(?![ \t]*(?:%|\d|[\w-]*[ \t]*(?:accura|agree|match|overlap|hits?\b|recall|precision)))",
    I,
)
# the sum's index is the vocabulary's token: "sum_v", "Σ_v", "\\sum_{v \\in V}", "\\sum_{v\\in\\mathcal V}" (v or w, the
# letters formulas give a token of the vocabulary; an index over positions, "sum_t", "\\sum_i", is D9's mean)
FORMULA = re.compile(
    r"(?:\\sum|∑|Σ|(?<![A-Za-z\\])sum)\s*_\s*(?:\{\s*)?[vw](?![A-Za-z0-9])(?:\s*(?:\\in|∈)\s*(?:\\mathcal\s*\{?\s*V\s*\}?|V)(?![A-Za-z]))?"
)
PATTERNS = [WHOLE, SUPPORT, SHARED, QUALIFIER, FORMULA]
# a KL term before the formula in its paragraph (the quantity the sum defines): "KLD_t =", "D_{\\mathrm{KL}}(P\\|Q) ="
KL_BEFORE = re.compile(r"(?<![A-Za-z])(?:KLD?|D_?KL)(?![A-Za-z])|Kullback|divergen", re.IGNORECASE)
PARAGRAPH = re.compile(r"\n[ \t]*\n")


def formula_vetoed(text: str, m: re.Match[str]) -> bool:
    """Whether a vocabulary sum has no KL term before it in its paragraph (another quantity's sum)."""
    start = max(0, m.start() - 300)
    breaks = list(PARAGRAPH.finditer(text, start, m.start()))
    start = breaks[-1].end() if breaks else start
    return not KL_BEFORE.search(text, start, m.start())


def value(span: str) -> dict[str, object] | None:
    m = SUPPORT.search(span) or QUALIFIER.search(span)
    if m is not None:
        return {"scheme": "top-k", "k": int(m.group("k"))}
    if WHOLE.search(span) or SHARED.search(span) or FORMULA.search(span):
        return {"scheme": "full"}
    return None
