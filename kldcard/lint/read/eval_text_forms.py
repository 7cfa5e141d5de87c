"""D3: more ways cards write the evaluation text without a corpus name the main patterns know
(appended to :data:`kldcard.lint.read.eval_text.PATTERNS`, so the sentence must speak of a measurement and
:func:`kldcard.lint.read.eval_text.vetoed` applies).

- a table whose header has a column of texts ("| Prompt | Category | Tokens | Mean KLD |"): its rows name
  the texts scored (the header's row must be followed by the separator row);
- a named panel or population with a version or a kind joined by a hyphen ("the fidelity-v5 population",
  "short-panel", "mixed-panel"): a text kept for the measurement, named but without a source;
- the texts described in Spanish, Portuguese and French ("sobre secuencias fijas de tokens", "en esos mismos
  textos", "12 fragmentos de 512 tokens por texto", "sur les mêmes textes"), as "on the same texts" is
  in English (kldcard.lint.read.eval_text.DESCRIBED).
"""

from __future__ import annotations

import re

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
]
TEXTS_COLUMN, VERSIONED_PANEL, DESCRIBED_ROMANCE = PATTERNS
