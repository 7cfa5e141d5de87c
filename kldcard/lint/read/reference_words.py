"""D1 by the comparison words of the card languages other than English: the reference is what a KL number is
compared against, as :mod:`kldcard.lint.read.comparison` reads "vs X" / "compared to X", written with the
word the language uses. A general grammar (the translation of "vs"), read with the same vetoes as "vs"
(:func:`kldcard.lint.read.comparison.phrase_vetoed`: a number, another metric, a quantized rival), and, like
"vs", only in a sentence with a KL term. Such a reference is ``incomplete`` unless the phrase carries a repo id,
a revision and a dtype. Labelled authors who write each form (two-author rule):

- the word before the reference (:data:`BEFORE`): Spanish / Portuguese "respecto a(l)", "frente a", "contra"
  (gaztrab, voodooquant, llamacode, brandonmusic, the Portuguese flash_next report), and the same word in French ("par rapport à", "contre"),
  German ("gegenüber", "im Vergleich zu") and Russian ("против", "относительно", "по сравнению с"): the
  translation of "vs", general grammar;
- the word after the reference (:data:`AFTER`): Japanese "X と比べ(て/た/ると)", "X に対する/に対して" (ja_mlxturbo,
  ja_r9700, ja_mi25), Korean "X 대비" (ko_ainews; the Korean postposition for "vs", general grammar);
- Chinese "相对 BF16", "相对原始权重的" (:data:`RELATIVE`; zh_digest_cmp170hx, zh_digest_titwitmuffbiscuit,
  zh_digest_gladkos, zh_lecture_sparkinfer, zh_digest_atomicchat; "相对于" is comparison.CJK);
- the Chinese frame around it (:data:`FRAME`): "与/和 X 相比" (blind3_chinese, zh_tyloquant, zh_lecture_sparkinfer),
  "和 X 的 KL" (zh_zhihu, zh_survey_strata, zh_opd_distillation);
- the Chinese baseline noun after a name (:data:`BASELINE_NOUN`): "main 基线", "main 分支 @78a41cc 的基线引擎",
  "Unsloth Dynamic（UD）基线" (zh_gdec, zh_tyloquant).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read import comparison

I = re.IGNORECASE

# a phrase of up to five words after the word, ended by punctuation (ASCII or CJK) or the end of the line
_WORD = r"[^\s,;:()\[\]|=<>。，、；：（）]+"
_PHRASE = rf"(?P<ref>{_WORD}(?:[ \t]+{_WORD}){{0,4}})"
BEFORE = re.compile(
    r"(?:\b(?:con\s+)?respecto\s+(?:a(?:l)?|de)\s+|\bfrente\s+a(?:l)?\s+|\bem\s+relação\s+a[o]?\s+|\bcontra\s+|"
    r"\bpar\s+rapport\s+(?:à|au|aux)\s+|\bcontre\s+|"
    r"\bgegenüber\s+|\bim\s+Vergleich\s+zu[mr]?\s+|"
    r"(?<![А-Яа-яЁё])(?:против|относительно|по\s+сравнению\s+со?)\s+)" + _PHRASE,
    I,
)
# Latin-script names right before a CJK postposition ("自前 dense と比べた", "full 16-bit KV cache 대비"), with a
# parenthesis the author put between them ("llama.cpp BF16 reference（FP16 KV、batch 64）と比べ")
_LATIN = r"[A-Za-z0-9_.\-/`@+]+"
AFTER = re.compile(
    r"(?<![A-Za-z0-9_.\-/`@+])(?P<ref>" + _LATIN + r"(?:[ \t]+" + _LATIN + r"){0,3})[ \t]*(?:[（(][^）)\n]{0,80}[）)])?[ \t]*"
    r"(?:と比べ|と比較し|に対する|に対して|대비)",
)
# Chinese writes no spaces: the reference is a name in Latin script (after a short CJK qualifier, "原始 BF16") or a
# short CJK noun ended by 的 ("相对原始权重的平均 KLD"), never the rest of the clause
RELATIVE = re.compile(
    r"(?:相对|相對|相较|相較)(?![于於])\s*(?P<ref>(?:[\u4e00-\u9fff]{1,6}\s*)?" + _LATIN + r"(?:[ \t]+" + _LATIN + r"){0,2}|"
    r"[\u4e00-\u9fff]{2,8}?(?=的))"
)
# "与/和 X 相比" (compared with X) and "和 X 的 KL" (the KL with X: zh_zhihu, zh_survey_strata, zh_opd_distillation)
FRAME = re.compile(
    r"(?:与|和|跟|與)\s*(?P<ref>[^，。、；：,;\n]{1,40}?)\s*(?:相比|比较|比較|(?:之间|之間)?的\s*(?:平均\s*)?(?=KL))"
)
BASELINE_NOUN = re.compile(
    r"(?<![A-Za-z0-9_.\-/`@])(?P<ref>[A-Za-z`][\w.\-/`@]*(?:[ \t]+[\w.\-/`@]+){0,2}?)[ \t]*(?:的)?(?:基线|基線)"
)
PATTERNS = [BEFORE, RELATIVE, AFTER, FRAME, BASELINE_NOUN]

# the article of the card language before the phrase, dropped before the vetoes read it ("la referencia", "die")
ARTICLE = re.compile(r"^(?:la|el|los|las|le|les|l'|o|os|as|der|die|das|dem|den|un|una|une)\s+", I)


def reference(m: re.Match[str]) -> str:
    """The named reference of a match, without its article."""
    return ARTICLE.sub("", m.group("ref").strip())


def vetoed(sentence: str, m: re.Match[str]) -> bool:
    """Whether a match names no reference of a KL number: no KL term in its sentence, or a phrase that is a number,
    another metric or a rival (the vetoes of "vs", read.comparison), or a value given right after it ("frente a X = 0.1")."""
    if not comparison.KL.search(sentence):
        return True
    if m.re is BEFORE.compiled and comparison.VALUE_AFTER.match(m.string, m.end()):
        return True
    return comparison.phrase_vetoed(reference(m))
