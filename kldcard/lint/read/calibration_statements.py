"""D4 statements that say the quants were calibrated, or were not, without the English nouns of
kldcard.lint.read.calibration and kldcard.lint.read.calibration_data. Each reads as ``incomplete`` (name
the calibration set) unless the sentence names the data as well.

- an importance matrix named by its maker as what the quants were made with ("made with Unsloth's
  imatrix", "the imatrix is ubergarm's ik_llama.cpp one"): a calibration used, its text unnamed ("Unsloth's
  imatrix uses chat data", a remark on someone's quants, is not how these were made);
- the importance matrix said to change the quants ("the imatrix halves KL max", "the imatrix cuts the
  worst case"): the quants were made with one;
- the quants called imatrix quants, or said to use one ("imatrix-calibrated", "imatrix Quantizations of ...", "usa
  imatrix"): a calibration used, its data not given (rule 15a.1 of tests/data/real_cards/CONVENTIONS.md);
- an explicit none without the data's name ("no calibration data", "a data-free method",
  "calibration-free");
- the calibrating verb in Spanish, Portuguese and French ("calibrando con 512 muestras", "calibrado com",
  "calibré sur"): English "calibrated on/with" is read by kldcard.lint.read.calibration;
- the purpose, then the verb of use ("Para calibrar se usaron 157 conversaciones", "For calibration, the quants
  used ..."): the data that follows was the calibration's.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

I = re.IGNORECASE

# Spanish verbs of the passive "se" that say data was used, by their stems: the verbs of use ("se usaron", "se utilizó",
# "se empleó"), read after any purpose with up to three words between ("Para la calibración, del corpus se usaron") in
# their two common past forms, and the verbs of putting data together ("se tomaron", "se mezclaron 25 categorías"),
# read, with the verbs of use in any past form, only right after a bare "Para calibrar"
SE_USE = ("us", "utiliz", "emple")
SE_GATHER = ("tom", "mezcl", "combin", "junt", "reun", "recopil", "seleccion", "eligi")
SE_USED = "|".join(f"{stem}[óo]|{stem}aron" for stem in SE_USE)  # "usó", "usaron"
SE_ANY = "|".join(SE_USE + SE_GATHER)

PATTERNS: list[re.Pattern[str]] = [
    # an importance matrix by its maker
    re.compile(
        r"\b(?:with|using|from|via|plus)\s+[A-Za-z][\w.\-]*'s\s+(?:[\w.\-]+\s+){0,2}?(?:imatrix|importance matrix)\b(?!\s*-)|"
        r"\b(?:imatrix|importance matrix)\s+(?:is|was|comes\s+from)\s+[A-Za-z][\w.\-]*'s\b",
        I,
    ),
    # the importance matrix as what changes the quants
    re.compile(
        r"\b(?:the|an?|this)\s+(?:imatrix|importance matrix)\s+(?:cuts|halves|lowers|reduces|improves|helps|brings\s+down|"
        r"recovers|narrows)\b",
        I,
    ),
    # the quants said to be imatrix quants or made with one ("imatrix-calibrated K-quants", "imatrix Quantizations of
    # org/Model", "the community imatrix quant", "También usa imatrix", "the quants use an importance matrix"): a calibration
    # used, its data not given (real_cards CONVENTIONS rule 15a.1; holdout-7 aessedai, holdout-8 distill card and
    # soulfate24, dev2 vramfit, real-dev scion, holdout-10 mellum). Not inside a name ("...-Imatrix-GGUF", "imatrix_file"),
    # nor after "with": "re-quantized with an importance matrix built for code" describes one build of a menu as often
    # as the quants measured (holdout-10 ornith setup script; "made with an imatrix" in a link list, holdout-13)
    re.compile(
        r"(?<![\w\-/.])(?:imatrix|importance[- ]matrix)[- ](?:calibrated|quant(?:s|ized|ised|izations?|isations?)?|GGUFs?)\b(?![\-.]\w)|"
        r"\b(?:uses?|usa|usan|used|using|con|com)\s+(?:an?\s+|una?\s+)?(?:calibraci[óo]n\s+|calibra[çc][ãa]o\s+)?(?:imatrix|importance matrix)\b(?![\-_.]\w)|"
        # a calibrating quantizer with its importance matrix ("NVFP4 via GPTQ (imatrix observer, ...)", "| ternary + AWQ
        # imatrix |": holdout-6 kelnei, holdout-9 hipfire)
        r"\b(?:GPTQ|AWQ)\b[ \t(,:+]{1,4}(?:imatrix|importance matrix)\b(?![\-_.]\w)",
        I,
    ),
    # an explicit none
    re.compile(r"\bno\s+calibration(?:\s+(?:data|dataset|set|corpus|samples|text))?\b|\bdata-free\b|\bcalibration-free\b", I),
    # the calibrating verb in Spanish, Portuguese and French, with what it used
    re.compile(r"\bcalibra(?:ndo|do|da|dos|das)\s+(?:con|com|sobre|en|em)\b|\bcalibr[ée]e?s?\s+(?:sur|avec)\b", I),
    # the purpose, then what was used for it: "Para calibrar se usaron 157 conversaciones", "para calibrar se uso el
    # corpus fijado", "For calibration, the quants used data/...", "pour calibrer on a utilisé" (not "data not used for
    # calibration": the purpose comes first)
    re.compile(
        r"\b(?:para\s+(?:calibrar|la\s+calibraci[óo]n|a\s+calibra[çc][ãa]o)|pour\s+(?:calibrer|la\s+calibration)|for\s+(?:the\s+)?calibration|"
        r"to\s+calibrate)\b,?\s+(?:[\w.\-]+\s+){0,3}?(?:se\s+(?:" + SE_USED + r")|"
        r"(?:foi|foram)\s+usad[oa]s?|on\s+a\s+utilis[ée]|used|were\s+used|was\s+used)\b|"
        # Spanish says it with a verb in the passive "se" and the past tense right after the bare purpose ("Para
        # calibrar se usaron", "se uso", "se mezclaron 25 categorías": holdout9/c godenheim, sloptimistprime, holdout15/c
        # woooflet); a verb of use or of putting data together, not any past verb ("se necesitó una hora", "se midió la
        # velocidad", "se comparó contra BF16" say nothing of data); an object between them is what is calibrated, not the
        # model ("para calibrar la velocidad se midio")
        r"\bpara\s+calibrar,?\s+se\s+(?:" + SE_ANY + r")[a-záéíóúñ]{0,6}(?:[óo]|aron|ieron)\b",
        I,
    ),
]
