"""KL terms and statistic words in the languages cards are written in (data; samples from real
cards in tests/test_lint_read_tools.py).

English terms ("KLD", "KL divergence", "KL-div", "Kullback-Leibler", "D_KL", "KL(") are the claim
finder's base pattern, and they cover every language that writes "KL" or "Kullback-Leibler" in
Latin letters next to its own word (Spanish "divergencia KL", French "divergence KL", German
"KL-Divergenz", Portuguese "divergência KL", Chinese "KL散度", Japanese "KLダイバージェンス",
Korean "KL 발산"). What is listed here is what that misses: the names without those letters, and
"KL" joined by a hyphen to a word in another script.
"""

from __future__ import annotations

# language -> terms for KL divergence that the base pattern does not match (regular-expression text)
KL_TERMS: dict[str, tuple[str, ...]] = {
    "zh": ("相对熵", "相對熵"),  # relative entropy
    "ja": ("カルバック[・･]?ライブラー",),  # Kullback-Leibler in katakana
    "ko": ("쿨백[-‐ ]?라이블러",),
    "ru": ("[Кк]ульбак", "KL-дивергенц", "КЛ-дивергенц"),
    "de": ("KL-Divergenz",),  # "KL-div" then "enz": the base pattern wants a word end
}

# statistic -> its words in the card languages (English is the claim finder's STAT_LABEL)
STATISTIC_WORDS: dict[str, tuple[str, ...]] = {
    "mean": ("平均", "media", "medio", "promedio", "moyenne", "moyen", "Mittelwert", "mittlere", "[Сс]реднее", "[Сс]редняя",
             "média", "médio", "평균"),
    "median": ("中位数", "中央値", "mediana", "médiane", "медиана", "Медиана", "중앙값"),
}


# A training run's settings in the card languages, as English's "coefficient", "penalty", "reward", "learning rate" in
# claims_patterns.TRAINING_CONTEXT: a KL beside one is the run's term or its value, not a measured divergence ("Hệ số KL
# mới ... KL = 0,1", "再加上 KL 惩罚", "a recompensa colapsa"). A correlation coefficient is none ("相关系数", "相関係数").
TRAINING_WORDS: dict[str, tuple[str, ...]] = {
    "zh": ("(?<!相关)(?<!相關)系数", "(?<!相關)係數", "惩罚", "懲罰", "奖励", "獎勵", "学习率", "學習率"),
    "ja": ("(?<!相関)係数", "ペナルティ", "報酬", "学習率"),
    "ko": ("(?<!상관 )(?<!상관)계수", "페널티", "보상", "학습률"),
    "es": ("coeficiente(?! de correlaci)", "penalización", "recompensa", "tasa de aprendizaje"),
    "pt": ("coeficiente(?! de correla)", "penalidade", "penalização", "recompensa", "taxa de aprendizado", "taxa de aprendizagem"),
    "fr": ("pénalité", "récompense", "taux d'apprentissage"),
    "de": ("Koeffizient", "Strafterm", "Belohnung", "Lernrate"),
    "it": ("coefficiente(?! di correlazione)", "penalità", "ricompensa", "tasso di apprendimento"),
    "ru": ("коэффициент(?! корреляц)", "штраф", "награда", "скорость обучения"),
    "vi": ("hệ số(?! tương quan)", "phần thưởng", "tốc độ học"),
}

# Verbs of a change in the card languages that write the verb after its amount (Korean, Japanese: "Maximum KLD는 `51%`
# 줄었다", "KLDが30%減少した") or before it (Chinese: "KL 散度降低了 51%"): read.relative_changes, as English "fell 12%".
CHANGE_AFTER_AMOUNT: dict[str, tuple[str, ...]] = {
    "ko": ("줄었", "줄어", "감소", "증가", "늘었", "늘어", "낮아", "높아", "개선", "악화"),
    "ja": ("減少", "増加", "低下", "上昇", "減っ", "増え", "下が", "上が", "改善", "悪化"),
}
CHANGE_BEFORE_AMOUNT: dict[str, tuple[str, ...]] = {
    "zh": ("降低", "减少", "減少", "下降", "增加", "增長", "增长", "上升", "提高", "减小", "減小", "增大"),
}
# The nouns of a change's size (Chinese: "KL散度降幅最高达70%", "KL 增幅约 12%"): the term, the noun, the amount.
CHANGE_NOUN_BEFORE_AMOUNT: dict[str, tuple[str, ...]] = {
    "zh": ("降幅", "减幅", "減幅", "增幅", "降低幅度", "下降幅度", "增加幅度"),
}
# Verbs of a change after the KL term in the languages that write the verb between the term and a preposition of
# amount ("la KLD baja un 30%", "a KLD caiu 30%", "la divergence KL diminue de 30 %", "die KLD sinkt um 30 %",
# "KL снизилась на 30%"): read.relative_changes, as English "fell 12%". Plain grammar of each language.
CHANGE_AFTER_TERM: dict[str, tuple[str, ...]] = {
    "es": ("baja", "bajó", "disminuye", "disminuyó", "cae", "cayó", "desciende", "descendió", "se reduce", "se redujo",
           "sube", "subió", "aumenta", "aumentó", "crece", "creció", "mejora", "mejoró", "empeora", "empeoró"),
    "pt": ("cai", "caiu", "diminui", "diminuiu", "reduz-se", "reduziu-se", "desce", "desceu", "sobe", "subiu", "aumenta",
           "aumentou", "cresce", "cresceu", "melhora", "melhorou", "piora", "piorou"),
    "fr": ("diminue", "a diminué", "baisse", "a baissé", "chute", "a chuté", "recule", "a reculé", "augmente",
           "a augmenté", "progresse", "a progressé"),
    "de": ("sinkt", "sank", "fällt", "fiel", "steigt", "stieg", "verringert sich", "verringerte sich", "reduziert sich",
           "reduzierte sich", "wächst", "wuchs", "verbessert sich", "verschlechtert sich"),
    "ru": ("снизилась", "снизился", "снижается", "уменьшилась", "уменьшился", "уменьшается", "упала", "упал", "падает",
           "выросла", "вырос", "растёт", "растет", "увеличилась", "увеличился", "возросла", "возрос", "снизилось",
           "уменьшилось", "упало", "выросло", "увеличилось", "возросло"),
}
# Verbs that take the KL term as their object, then a preposition and the amount ("reduce la KLD media en un 30%",
# "reduz a KLD em 30%", "réduit la KLD de 30 %", "senkt die KLD um 30 %", "снижает KL на 30%"), as English "cuts KLD
# by 30%".
CHANGE_BEFORE_TERM: dict[str, tuple[str, ...]] = {
    "es": ("reduce", "redujo", "reducen", "disminuye", "disminuyó", "baja", "bajó", "recorta", "recortó", "aumenta",
           "aumentó"),
    "pt": ("reduz", "reduziu", "diminui", "diminuiu", "corta", "cortou", "aumenta", "aumentou"),
    "fr": ("réduit", "a réduit", "diminue", "a diminué", "abaisse", "a abaissé", "augmente", "a augmenté"),
    "de": ("senkt", "senkte", "reduziert", "reduzierte", "verringert", "verringerte", "erhöht", "erhöhte"),
    "ru": ("снижает", "снизил", "снизила", "снизило", "уменьшает", "уменьшил", "уменьшила", "уменьшило", "сокращает",
           "сократил", "сократила", "увеличивает", "увеличил", "увеличила"),
}
# Words of a training run's course: a KL that changes over it is a training curve, not a measured change of a model's
# fidelity ("la KL baja un 30% durante el entrenamiento", "steigt um 30 % pro Epoche"): read.relative_changes.
TRAINING_COURSE: dict[str, tuple[str, ...]] = {
    # the course of the run, not the word "training" alone: a DWQ run's "held-out KL fell ~90%" after its training is a
    # measured fidelity (holdout-3 true2456)
    "en": ("during training", "over training", "per epoch", "each epoch", "every epoch"),
    "es": ("durante el entrenamiento", "por época", "en cada época"),
    "pt": ("durante o treinamento", "durante o treino", "por época", "a cada época"),
    "fr": ("pendant l'entraînement", "pendant l’entraînement", "au cours de l'entraînement", "au cours de l’entraînement",
           "par époque", "à chaque époque"),
    "de": ("beim Training", "während des Trainings", "im Training", "pro Epoche", "je Epoche"),
    "ru": ("в ходе обучения", "во время обучения", "при обучении", "за эпоху", "на каждой эпохе"),
}
# "About" words before an amount: an approximation, not another quantity ("by roughly 30%", "(approx. 0.01", "um ca.
# 30 %", "cerca de 30 %"), as regular-expression text (the abbreviations' dots escaped). One table for the relative
# changes (read.relative_changes), a number's open aside (claim_attach.OPEN_ASIDE) and the abbreviations at which the
# sentence splitter does not end a sentence before an amount (markdown.ABBREVIATIONS_BEFORE_AMOUNT).
APPROXIMATELY: dict[str, tuple[str, ...]] = {
    "en": ("about", "roughly", "approximately", "around", "nearly", "almost", "some", r"approx\.", "circa", r"ca\."),
    "es": ("cerca de", "alrededor de", r"aprox\."),
    "pt": ("cerca de", r"aprox\."),
    "fr": ("environ", "d'environ", "d’environ", r"env\."),
    "de": ("etwa", "rund", r"ca\."),
    "ru": ("примерно", "около", "почти"),
}
# The prepositions and "about" words between such a verb and its amount ("en un", "em", "de", "um etwa", "на").
CHANGE_PREPOSITIONS: dict[str, tuple[str, ...]] = {
    "es": ("en", "un", "el", *APPROXIMATELY["es"]),
    "pt": ("em", "uns", *APPROXIMATELY["pt"]),
    "fr": ("de", *APPROXIMATELY["fr"]),
    "de": ("um", *APPROXIMATELY["de"]),
    "ru": ("на", *APPROXIMATELY["ru"]),
}


def abbreviations(words: dict[str, tuple[str, ...]]) -> tuple[str, ...]:
    """The abbreviations among ``words`` (regular-expression text ending in an escaped dot), without their dot."""
    return tuple(sorted({w[:-2] for ws in words.values() for w in ws if w.endswith(r"\.")}))


# Words that put the reference after them, as English "vs BF16" / "against the F16 GGUF" ("contra BF16",
# "par rapport à F16", "gegenüber BF16", "против FP16"); English's own are evidence_patterns.D1's.
VERSUS_WORDS: dict[str, tuple[str, ...]] = {
    "es": ("frente a", "frente al", "contra", "comparad[oa] con", "respecto a", "respecto al", "en comparación con",
           "en relación (?:a|al|con)"),
    "pt": ("contra", "comparad[oa] (?:com|ao|à)", "em relação a", "em relação ao", "face a", "face ao", "em comparação com",
           "frente a", "frente ao"),
    "fr": ("contre", "par rapport à", "par rapport au", "par rapport aux", "comparée?s? à", "comparée?s? aux?", "face à",
           "face aux?", "relativement à", "relativement au", "vis-à-vis d[eu]"),
    "de": ("gegenüber", "im Vergleich zu", "im Vergleich zum", "verglichen mit", "relativ zu", "relativ zum", "gegen", "zur", "zum"),
    "ru": ("против", "относительно", "по сравнению с", "в сравнении с", "по отношению к"),
}
# Words written right after the reference ("BF16比" = relative to BF16, "BF16参照" = the BF16 reference,
# "F16 基准"), and nouns that are the reference themselves ("参考模型", "原始权重", "参照実装").
REFERENCE_AFTER: dict[str, tuple[str, ...]] = {
    "ja": ("比", "基準", "参照", "原本", "に対する", "に対して", "と比べ", "と比較", "からの"),
    "zh": ("参考", "基准", "基線", "基线", "作为参考", "作為參考"),
    "ko": ("대비", "기준", "에 대한", "과 비교", "와 비교"),
}
REFERENCE_NOUNS: dict[str, tuple[str, ...]] = {
    "zh": ("参考(?:模型|权重|捕获|实现|输出)", "原始(?:模型|权重|權重)", "基准模型", "原模型", "教师模型", "教師模型"),  # teacher model
    "ja": ("参照(?:モデル|実装|出力)", "元モデル", "元の重み", "教師モデル"),
    "ko": ("원본 모델", "기준 모델"),
}
# "N positions" in the card languages (a D6 count): "2,632位置", "128개 위치", "4096 posiciones"
POSITION_WORDS: dict[str, tuple[str, ...]] = {
    "zh/ja": ("位置", "个位置", "個の位置", "トークン位置"),
    "ko": ("개 위치", "위치"),
    "es": ("posiciones",),
    "pt": ("posições",),
    "de": ("Positionen",),
    "ru": ("позиций", "позиции"),
}
# "the full vocabulary" in the card languages (D8): "全語彙", "全词表", "vocabulario completo"
FULL_VOCABULARY: dict[str, tuple[str, ...]] = {
    "ja": ("全語彙", "全ボキャブラリ", "全 ?vocab", "語彙全体", "vocab全体"),  # "全vocab logits": Latin "vocab" in Japanese prose
    "zh": ("全词表", "全詞表", "完整词表", "全部词表", "全词汇", "全部 ?vocab", "完整 ?vocab"),
    "ko": ("전체 어휘", "전체 ?vocab"),
    "es": ("vocabulario completo", "todo el vocabulario"),
    "pt": ("vocabulário completo", "todo o vocabulário"),
    "fr": ("vocabulaire complet", "tout le vocabulaire"),
    "de": ("vollständigen Vokabular", "gesamten Vokabular", "ganzen Vokabular"),
    "ru": ("полный словарь", "полному словарю", "полного словаря", "весь словарь", "всему словарю"),
}


def alternation(words: dict[str, tuple[str, ...]]) -> str:
    """The words as one regular-expression alternation (longest first; ties alphabetical, so that the pattern is the
    same in every process and its stored scan plan, kldcard.lint.scan_plans, is found)."""
    return "|".join(sorted({w for ws in words.values() for w in ws}, key=lambda w: (-len(w), w)))


# ---- clauses (plain English grammar): the conjunctions that open another clause after a comma. Two kinds, one
# table: a clause of its own, by addition or contrast (", and the chat set was kept out of calibration", ", whereas
# ..."), and a clause tied to the one before it, by result, relation, cause or concession (", so the noise floor",
# ", which ..."). evidence_vetoes.CLAUSE_BREAK splits a sentence at the first kind only (a tied clause speaks of what
# the clause before it names: it is not split off); claim_terms.CLAUSE_INSIDE takes either as a sign of prose.
CONJUNCTIONS = {"own clause": ("and", "but", "while", "whereas"), "tied clause": ("so", "which", "because", "although", "though")}


# ---- the KL term: one definition for every reader (regular-expression text; the readers compile it with
# re.IGNORECASE, most with re.ASCII). Samples in tests/test_lint_kl_terms.py.
# A KL term as a claim names it: "KLD", "KL-div", "KL divergence", "Kullback-Leibler", "D_KL", "KL(", a bare "KL",
# and the other languages' own (KL_TERMS); not "KLD-QA", "KL-based" or "kld_results.csv". claims_patterns.KLD_TERM
# adds the snake-case metric names ("mean_kld", "kl_div 0.189": read.claim_terms, read.metric_keys).
# The plural names the same values ("Our KLs sit around 1e-9", "KLs of rows 6 to 9: 0.0329, ...": h4 loom, h6 phone quant).
# A hyphenated compound names the reference, not another metric: "mean KLD-to-f16", "KL-to-teacher", "KLD-vs-FP8" (REFERENCE_LINK).
REFERENCE_LINK = r"-(?:to|vs|versus|against)-"
KL_TERM = (
    r"(?<![A-Za-z_])(?:KLD(?![A-Za-z_]|-(?!" + REFERENCE_LINK[1:] + r")[A-Za-z])|KL[- ]?div(?:ergences?)?\b|Kullback[-‐–— ]Leibler|D_?KL\b|"
    r"KL(?=\s*\()|KL\b(?!-(?!" + REFERENCE_LINK[1:] + r"))|KLD?s(?![A-Za-z0-9_]))|" + alternation(KL_TERMS)
)
# A KL term as one word of a phrase pattern: "mean KLD", "forward KL", "KL divergence fell", "2x lower KL-div",
# "正向KL散度" (an ASCII word end, so a CJK word may follow whatever flags the reader compiles it with).
KL_WORD = r"(?:KLD|KL[- ]?div\w*|KL)(?![A-Za-z0-9_])"
# the words for the side a KL is taken against when a text names it by its role or dtype ("teacher → student",
# "source-to-candidate KL"): read.direction's roles and read.comparison's role compounds
REF_ROLE = r"(?:teacher|reference|ref|base(?:line)?|original|parent|BF16|FP16|F16|FP32)"
# The same without a bare "KL", where two letters alone are too weak a sign (a log's "KLD=0.08", "KL-div: 0.1").
KL_NAME = r"(?:KLD|KL[- ]?div\w*)"
# Whether a heading, a cell or a sentence speaks of the divergence at all, in any card language: looser than
# KL_TERM ("divergence", "KL-based", "散度" count), for the disclosure readers' "is this line about KL" tests; a
# metric key's term counts ("avg_kl_div", "kld_mean": only letters bound it).
KL_MENTION = (
    r"(?<![A-Za-z])(?:KLD?|D_?KL)s?(?![A-Za-z])|KL[-_ ]?div|Kullback|divergen|ダイバージェンス|散度|發散|发散|"
    + alternation(KL_TERMS)
)

# Words that put a named tool in the past or take it out ("Until now ... a reference built with
# llama-perplexity", "gone are ... eval_gguf (llama-perplexity + ...)", "no longer uses", "instead of"):
# plain grammar of English; a tool named so is not the one that measured the card's numbers.
FORMER_USE = (r"\buntil\s+now\b|\bpreviously\b|\bformerly\b|\bno\s+longer\b|\bremov(?:ed|al)\b|\bgone\s+(?:are|is)\b|"
              r"\binstead\s+of\b|\bused\s+to\b")
