"""D3: more ways cards write the evaluation text without a corpus name the main patterns know
(appended to :data:`kldcard.lint.read.eval_text.PATTERNS`, so the sentence must speak of a measurement and
:func:`kldcard.lint.read.eval_text.vetoed` applies).

- a table whose header has a column of texts ("| Prompt | Category | Tokens | Mean KLD |"): its rows name
  the texts scored (the header's row must be followed by the separator row);
- a named panel or population with a version or a kind joined by a hyphen ("the fidelity-v5 population",
  "short-panel", "mixed-panel"): a text kept for the measurement, named but without a source;
- the texts described in Spanish, Portuguese and French ("sobre secuencias fijas de tokens", "en esos mismos
  textos", "12 fragmentos de 512 tokens por texto", "sur les mêmes textes"), as "on the same texts" is
  in English (kldcard.lint.read.eval_text.DESCRIBED);
- a count of text units in Spanish, Portuguese and French ("sobre 256 sesiones fijas", "256 artigos", "20 fragmentos
  de 512 tokens", "11 invites"), as "200 validation documents" in English (:data:`COUNTED`, one of
  kldcard.lint.read.eval_text.DESCRIBED: read as described, not named); not English "sessions" ("replay 25 held-out
  tool-use sessions and score each turn" counts another test's inputs), nor questions in any language (a benchmark's:
  "a separate 200-question MMLU-Pro cross-check", "854 preguntas de ARC-Challenge");
- a text drawn from a file given by its path in backticks ("5,120 tokens of `docs/anthology-weird.md`", "the responses
  (wrong answers) taken from `filtered_problems.json`", "语料取 `common/ngram-cache.cpp`"): :data:`FROM_FILE`, a file
  of any kind, named without its source (the main patterns know text files by their extension: .txt, .jsonl, ...);
- a list item or field labelled as the text in the card languages ("- 文本：`mixed_b`", "- 样本：8 条内置的英文短文本",
  "- Dataset de evaluacion: org/name", "- Conjunto de prompts `org/name`: https://..."): :data:`TEXT_FIELD`, a label that
  says what its value is (eval_text.vetoed asks no measuring word of it, as of "Corpus: `org/name`");
- a count of text units in Japanese, the unit right after the count without a counter word ("10ケース", "31 プロンプト",
  "60 サンプルで評価"): :data:`COUNTED_JA`, as "8 件のプロンプト" with one (kldcard.lint.read.eval_text.DESCRIBED);
- a text given by its length in tokens or bytes, the length joined to the noun as an adjective ("the original 664-token
  prompt", "the same 3x2048-token probe", "the committed 2039-byte English fixture", "同じ256-token fixture"):
  :data:`SIZED`, one of kldcard.lint.read.eval_text.DESCRIBED (real_cards/CONVENTIONS.md, round 21 q1: a count of the
  text's units tells it apart). Not a window, chunk or context ("2048-token windows": a setting, D5's and D6's), nor a
  text of another step (a speed run's "256-token prompt | 1.9 s", a calibration's: eval_text.vetoed).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.numbers import COMMA_THOUSANDS, THOUSANDS

I = re.IGNORECASE

PATTERNS: list[re.Pattern[str]] = [
    # a header cell naming the texts, in a Markdown table's header row
    re.compile(
        r"(?<=\|)[ \t]*\**(?:prompts?|prompt\s+(?:set|name|id)|texts?|corpus|corpora|dataset|eval(?:uation)?\s+text|textos?|"
        r"テキスト|プロンプト|文本|提示词|语料)\**[ \t]*(?=\|)(?=[^\n]*\n[ \t]*\|[ \t]*:?-{2,})",
        I,
    ),
    # a named, versioned population or panel; a hyphenated panel
    re.compile(
        r"\b[A-Za-z][\w.]*-v\d[\w.]*\s+(?:population|panel|suite|corpus|prompt\s+set)\b|\b(?:short|long|mixed|mini|full|fixed)-panel\b",
        I,
    ),
    # the texts described in Spanish, Portuguese and French
    re.compile(
        r"\b(?:sobre|en|em|con|com|sur|avec)\s+(?:(?:los|las|esos|esas|estos|estas|unos|unas|os|as|esses|essas|les|des|ces)\s+)?"
        r"(?:mism[oa]s\s+|mesm[oa]s\s+|mêmes\s+)?(?:textos|secuencias|sequências|documentos|textes|séquences)\b|"
        r"\bpor\s+texto\b|\bpar\s+texte\b",
        I,
    ),
    # units of a text drawn from a file by its path in backticks (the unit first, "of" or "from", then the path);
    # Chinese "语料取 / 语料来自" (the corpus taken from)
    re.compile(
        r"(?:\b(?:tokens|texts?|prompts|responses|answers|samples|passages|documents|excerpts)\s+(?:\([^()\n]{1,40}\)\s+)?"
        r"(?:(?:taken|drawn|sampled|read|extracted)\s+)?(?:of|from)\s+|语料(?:取自|取|来自|为)\s*)"
        # (not a tokenizer's, a model config's or a chat template's file: "all tokens of `tokenizer.json`")
        r"`(?![\w.\-/]{0,120}(?:tokenizer|config|template|vocab|merges|\.jinja))[\w.\-/]{1,120}\.[A-Za-z]{1,8}`",
        I,
    ),
    # a list item or field labelled as the text, with its value (at the line's start; the label, then a colon or a quoted name)
    re.compile(
        r"^[ \t]*(?:[-*+][ \t]+)?\**(?:文本|样本|语料|提示词|テキスト|dataset\s+de\s+evaluaci[óo]n|corpus\s+de\s+evaluaci[óo]n|"
        r"conjunto\s+de\s+(?:prompts|textos|datos\s+de\s+evaluaci[óo]n))\**[ \t]*(?:[:：][ \t]*|(?=[`'\"]))"
        # (not a value that withholds the text or is a default: "未公开", "非公開", "no publicado", "使用默认聊天模板")
        r"(?![ \t]*(?:未公开|未公開|非公開|不公开|暂不公开|no\s+publicad|not\s+(?:published|public|disclosed)|n/?a\b|ninguno|none\b)|[^\n]{0,12}(?:默认|デフォルト|default|por\s+defecto))"
        r"[^\n]{1,120}",
        I | re.MULTILINE,
    ),
]
TEXTS_COLUMN, VERSIONED_PANEL, DESCRIBED_ROMANCE, FROM_FILE, TEXT_FIELD = PATTERNS

# a whole count (as the card languages write it: "256", "2.048", "2 048": read.numbers.THOUSANDS) of text units; not samples or sequences,
# which count a calibration's or a batch's rows as often as a text
COUNTED = re.compile(
    r"(?<![\w.,])(?:" + THOUSANDS + r"|\d+)(?![.,]\d)\s+(?:[^\W\d_][\w-]*\s+){0,2}?"
    r"(?:sesiones|sess[õo]es|fragmentos|fragments|art[íi]culos|artigos|invites|"
    r"consignes|textos|textes|documentos|conversaciones|conversas|di[áa]logos|dialogues|p[áa]rrafos|par[áa]grafos|paragraphes)\b",
    I,
)

# a text by its length: a count of tokens or bytes joined by a hyphen, up to three words, then a noun of one text (a
# grid of them, "3x2048-token"; the count whole, after no letter: "同じ256-token fixture" is read, "v2-token" is not)
SIZED = re.compile(
    r"(?<![A-Za-z0-9.,_\-])(?:\d{1,3}\s?[x\u00d7]\s?)?(?:" + COMMA_THOUSANDS + r"|\d+)(?:\s?[kK])?-(?:token|tok|byte)\s+"
    r"(?:[\w`'.\-]{1,40}\s+){0,3}?(?:prompts?|probes?|fixtures?|slices?|sequence|traces?|passages?|excerpts?|continuation)(?![A-Za-z])"
    r"(?!\s+(?:length|len|limit|size)s?\b)",  # "a 4096-token sequence length" is a setting (D5's), not a text
    I,
)

# a count of text units in Japanese: the count, then the loan-word unit (cases, prompts, samples) with no counter word
COUNTED_JA = re.compile(r"(?<![A-Za-z0-9.,_])(?:" + COMMA_THOUSANDS + r"|\d+)\s?(?:ケース|プロンプト|サンプル)")
