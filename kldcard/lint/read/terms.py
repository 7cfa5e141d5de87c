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
    "mean": ("平均", "media", "moyenne", "Mittelwert", "[Сс]реднее", "[Сс]редняя", "média", "평균"),
    "median": ("中位数", "中央値", "mediana", "médiane", "медиана", "Медиана", "중앙값"),
}


def alternation(words: dict[str, tuple[str, ...]]) -> str:
    """The words as one regular-expression alternation (longest first)."""
    return "|".join(sorted({w for ws in words.values() for w in ws}, key=len, reverse=True))
