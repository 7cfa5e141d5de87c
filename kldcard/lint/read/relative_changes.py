"""Relative changes of a KLD written with a verb of change (issue 28, claim detection; R4 of
tests/data/real_cards/labels.yaml), beyond claims_patterns.RELATIVE:

- the term, then the verb: "held-out KL fell ~89-91%", "mean KLD dropped by 12%", "the KLD rose 2.5x";
- the verb, a few words, the term, then "by" and the amount, across a line break: "lowers held-out forward KLD
  relative to the published NVFP4 by 10.00%", "cuts the turbo3 mean KLD by a third";
- the verb, the term and a factor: "cuts KLD 6x";
- the amount, the term, then the noun of change: "causes a 4.4x KLD increase";
- the languages that put the verb after the amount (Korean, Japanese: "Maximum KLD는 `51%` 줄었다", "KLDが30%減少")
  or right before it (Chinese: "KL 散度降低了 51%", or a noun of change: "KL散度降幅最高达70%"), the term first, a
  particle between (read.terms.CHANGE_*);
- the languages that write the verb between the term and a preposition of amount ("la KLD baja un 30%", "die KLD sinkt
  um 30 %", "KL снизилась на 30%"), or the verb, its object the term, then the preposition ("reduce la KLD en un
  30%", "réduit la KLD de 30 %", "снижает KL на 30%"). These compile without re.ASCII: their words are not ASCII, and
  French writes a no-break space before "%".

The claim is at the amount (its line, R3/R5). Not a target or a training objective (the sentence's
claims_patterns.TRAINING_CONTEXT rules it out, as for RELATIVE). Samples in tests/test_lint_claim_detection.py."""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.terms import (
    CHANGE_AFTER_AMOUNT,
    CHANGE_AFTER_TERM,
    CHANGE_BEFORE_AMOUNT,
    CHANGE_BEFORE_TERM,
    CHANGE_NOUN_BEFORE_AMOUNT,
    APPROXIMATELY,
    CHANGE_PREPOSITIONS,
    KL_WORD,
    STATISTIC_WORDS,
    TRAINING_COURSE,
    alternation,
)

I = re.IGNORECASE | re.ASCII
_TERM = KL_WORD
# the term with its own word in a language that writes one after "KL" ("KLダイバージェンス", "KL 발산", "KL散度",
# "KL-дивергенция")
_LOCAL_TERM = KL_WORD + r"(?:[\s-]*(?:ダイバージェンス|발산|散度|дивергенц\w*))?"
_AMOUNT = r"[*_`]*[~≈]?(?P<num>\d+(?:[.,]\d+)?)(?:\s*[–-]\s*\d+(?:[.,]\d+)?)?\s*(?:%|[x×])"
# a percentage in Unicode mode, where \s takes the no-break space before "%" ("30\u202f%")
_WIDE_AMOUNT = r"[*_`]*[~≈]?(?P<num>\d+(?:[.,]\d+)?)\s*%"
_PREPOSITIONS = r"(?:(?:" + alternation(CHANGE_PREPOSITIONS) + r")\s+){0,2}"
# the articles and statistic words that may stand around the term in those languages ("senkt die mittlere KLD")
_ARTICLES = r"la|el|los|las|a|o|as|os|le|les|die|der|den|das|the"
_STAT = "mean|" + alternation({"mean": STATISTIC_WORDS["mean"]})  # the card languages' "mean" (read.terms)
# an amount that is a share of a set, not a change: "sube en el 5% de los tokens", "cai em 95% dos prompts"
_NOT_SHARE = r"(?!\s*(?:de|dos|das|des|der|of)\b)"
# a fraction in words or digits, or a factor ("cuts the KL divergence ... by a factor of 1/3"): plain grammar
_FRACTION = (r"(?P<frac>(?:a\s+|one\s+)?(?:third|quarter|half)|two[- ]thirds|three[- ]quarters|"
             r"(?:a\s+)?factor\s+of\s+[~≈]?\d+(?:\.\d+)?(?:/\d+)?(?![\d.,]\d)|\d{1,2}/\d{1,2}(?![\d/]))\b")
# the participles a status line writes after its subject ("KL divergence reduced ~2×") count as these verbs
# (and their present tense, plain grammar: "the mean next-token KL divergence falls by 35-44%")
_DOWN_UP = (r"fell|dropped|decreased|declined|shrank|rose|increased|grew|jumped|improved|worsened|went\s+(?:up|down)|reduced|lowered|halved|"
            r"falls|drops|decreases|declines|shrinks|rises|increases|grows|jumps|improves|worsens|goes\s+(?:up|down)")
# the noun of a change after the term, then its amount ("Relative KL reduction ≈31 %", "KLD increase: +12%")
_NOUN = r"reduction|decrease|drop|increase|improvement"
# the English words of an approximate or a small amount ("by roughly 30%", "by approx. 30%", "reduction of nearly 2x",
# "by only 1.2%"; read.terms.APPROXIMATELY)
_ABOUT = r"(?:(?:only|just|merely)\s+)?(?:(?:" + alternation({"en": APPROXIMATELY["en"]}) + r")\s+)?"
_VERB = r"reduces?|reduced|lowers?|lowered|cuts?|improves?|improved|increases?|increased|raises?|raised|halves|halved"

CHANGES = (
    re.compile(_TERM + r"(?:[\s*_`]+[\w-]+){0,2}?[\s*_`]+(?:" + _DOWN_UP + r")\s+(?:by\s+)?" + _ABOUT + _AMOUNT, I),
    re.compile(r"\b(?:" + _VERB + r")\s+(?:[\w-]+\s+){0,3}?" + _TERM + r"[^.;:]{0,60}?\bby\s+" + _ABOUT + "(?:" + _AMOUNT + "|" + _FRACTION + ")", I),
    re.compile(r"\b(?:" + _VERB + r")\s+(?:the\s+)?(?:mean\s+|median\s+)?" + _TERM + r"\s+" + _AMOUNT, I),
    re.compile(_TERM + r"[\s*_`]+(?:" + _NOUN + r")[\s*_`:=]*(?:of\s+|by\s+)?" + _ABOUT + r"[+−-]?" + _AMOUNT, I),
    # the amount first, then the term and the noun of change ("causes a 4.4x KLD increase", "a 12% mean KL reduction")
    re.compile(r"(?<![\w.])" + _AMOUNT + r"\s+(?:(?:mean|median)\s+)?" + _TERM + r"[\s*_`]+(?:" + _NOUN + r")\b", I),
    # the term, a topic or subject particle, the amount, then the verb (Korean, Japanese; general grammar of the languages)
    re.compile(_LOCAL_TERM + r"[\s*_`]*(?:[은는이가도]|[はがも])?[\s*_`]*" + _AMOUNT + r"[*_`]*\s*(?:정도|가량|ほど|程度|近く)?\s*(?:"
               + alternation(CHANGE_AFTER_AMOUNT) + ")", I),
    # the term, the verb, then the amount (Chinese: "KL 散度降低了 51%", "KLD 下降约 30%")
    re.compile(_TERM + r"(?:\s*散度)?[\s*_`]*(?:" + alternation(CHANGE_BEFORE_AMOUNT) + r")了?\s*(?:约|大约|近|將近|将近)?\s*" + _AMOUNT, I),
    # the term, a noun of the change's size, then the amount (Chinese: "KL散度降幅最高达70%")
    re.compile(_TERM + r"(?:\s*散度)?[\s*_`]*(?:" + alternation(CHANGE_NOUN_BEFORE_AMOUNT) + r")\s*(?:最高|最多|高|约|大约|近|将近|將近)?\s*"
               r"(?:达到|达|達|为|為|是)?\s*" + _AMOUNT, I),
    # the term (a statistic word after it), the verb, a preposition, the amount ("la KLD media baja un 30%"); no other
    # word between, so that "la KLD se mantiene baja en un 95%" (an adjective) is not read
    re.compile(_LOCAL_TERM + r"(?:\s+(?:" + _STAT + r"))?\s+(?:" + alternation(CHANGE_AFTER_TERM) + r")\s+" + _PREPOSITIONS
               + _WIDE_AMOUNT + _NOT_SHARE, re.IGNORECASE),
    # the verb, its object the term (an article and a statistic word around it, nothing else: "reduce la latencia del KL
    # en un 30%" changes a latency), a preposition, the amount; or an intransitive verb before its subject ("Mit Rotation
    # sinkt die mittlere KLD um 12 %": German puts the verb second)
    re.compile(r"(?<![^\W\d_])(?:" + alternation({**CHANGE_BEFORE_TERM, "de-v2": CHANGE_AFTER_TERM["de"]}) + r")\s+(?:(?:"
               + _ARTICLES + r")\s+)?(?:(?:" + _STAT + r")\s+)?" + _LOCAL_TERM + r"(?:\s+(?:" + _STAT + r"))?\s+" + _PREPOSITIONS
               + _WIDE_AMOUNT + _NOT_SHARE, re.IGNORECASE),
)


def amount_at(m: re.Match[str]) -> int:
    """Where the amount of a CHANGES match starts (the claim's position)."""
    return m.start("num") if m.group("num") is not None else m.start("frac")


# a training run's course in the sentence: "KL rises 30% per epoch", "la KL baja un 30% durante el entrenamiento"
TRAINING_CURVE = re.compile(r"(?<![^\W\d_])(?:" + alternation(TRAINING_COURSE) + r")(?![^\W\d_])", re.IGNORECASE)


def training_curve(sentence: str) -> bool:
    """Whether a relative change's sentence speaks of a training run's course (its change is a training curve)."""
    return TRAINING_CURVE.search(sentence) is not None
