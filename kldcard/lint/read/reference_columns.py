"""D1 named by where it stands rather than by a comparison word: the reference as a table's column, and the
reference word of the Romance card languages beside a dtype.

- a column of a table headed by the reference's role, in a table whose rows hold a KL term: "| Metric | This model |
  Original model (org/name) |" over a "KL divergence" row, "| Quant | Base | ... |" under a KL caption
  (:data:`HEADER_CELL`); the same header flattened to one line of space-separated cells, with the KL row right
  under it: "Metric This model Original model (org/name)" / "KL divergence 0.12 0 (by definition)"
  (:data:`FLAT_HEADER`); a header's role cell above a KL row that gives that column "0 (by definition)", in any
  layout (:data:`BY_DEFINITION`). A table that names no KL term compares another metric (read.reference_scope vetoes it);
- the Spanish / Portuguese / French "reference" word on either side of a dtype: "logits de referencia BF16",
  "los logits de referencia en BF16", "el modelo fp16 de referencia", "logits de référence F16" (:data:`ROMANCE`).

Such a reference is ``incomplete`` unless the cell or the phrase carries a repo id, a revision and a dtype.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

I = re.IGNORECASE

# the role of the reference in a column header, with what it names in parentheses ("Original model (org/name)",
# "Original model ([name](https://huggingface.co/org/name))", "Base (BF16)")
_ROLES = ("original", "base", "baseline", "reference", "parent", "unmodified", "unquantized")
_TAIL = r"(?:[ \t]+(?:model|checkpoint|weights))?(?:[ \t]*\((?:[^()\n|]|\([^()\n|]*\)){1,160}\))?"
ROLE = r"(?:" + "|".join(_ROLES) + r")" + _TAIL
CAPITALISED_ROLE = r"(?-i:" + "|".join(w.capitalize() for w in _ROLES) + r")" + _TAIL  # as a header cell is written
# a pipe table's header row (the line above its |---| separator), the role in any cell but the first
HEADER_CELL = re.compile(
    r"^[ \t]*\|?[^|\n]*\|(?:[^|\n]*\|)*?[ \t]*\**(?P<ref>" + ROLE + r")\**[ \t]*\|[^\n]*\n[ \t]*\|?[ \t]*:?-{3,}", I | re.MULTILINE
)
# a header flattened to one line ("Metric This model Original model (org/name)"): no sentence punctuation before the
# role, the role capitalised as a header cell and ending the line, and a KL row of numbers right under it
KL_ROW = r"[ \t]*(?:KLD?|KL[- ]?div\w*|Kullback\w*)\b[^\n]*\d"
FLAT_HEADER = re.compile(
    r"^(?:(?![.:;!?][ \t])[^\n|:;!?])*?(?<=\S)[ \t]+(?P<ref>" + CAPITALISED_ROLE + r")[ \t]*\n"
    r"(?:[^\n]*\S[^\n]*\n){0,3}?" + KL_ROW,
    I | re.MULTILINE,
)
# the column whose KL the table gives as zero by definition ("KL divergence | 0.16 | 0 *(by definition)*", the row
# Heretic's card writes) is the reference, whatever the layout keeps of the table: the header's role cell names it
# ("Original model (org/name)", "Base model") wherever it stands in its line, with the KL row up to four lines below
# (a header flattened with its cells in another order: holdout11/a groxaxo; a table quoted in a diff, each line
# prefixed and numbered: holdout9/a coder3101). The lines are bounded, so a long line is read in linear time.
BY_DEFINITION = re.compile(
    r"^(?=[^\n]{0,300}\n)[^\n]*?(?<![\w-])(?P<ref>" + CAPITALISED_ROLE + r")(?![\w-])[^\n]*\n"
    r"(?:[^\n]{0,300}\n){0,3}?[^\n]{0,60}?(?:KLD?|KL[- ]?div\w*|Kullback\w*)\b[^\n]{0,200}?(?<![\w.])0[ \t*_]*\(by definition\)",
    I | re.MULTILINE,
)
# a dtype beside the Romance reference word: "de referencia (en) BF16", "fp16 de referencia", "BF16 de référence"
_DTYPE = r"(?:BF16|FP16|F16|FP32|F32|bfloat16|float16|float32)"
_REF_WORD = r"(?:de|da|do)[ \t]+r[eé]f[eé]r[eê]n(?:cia|ce|cias|ces)"
ROMANCE = re.compile(
    r"\b" + _REF_WORD + r"[ \t]+(?:(?:en|em|in)[ \t]+)?(?P<ref>" + _DTYPE + r")(?![\w-]|\.\w)|"
    r"(?<![\w.\-])(?P<ref2>" + _DTYPE + r")[ \t]+" + _REF_WORD + r"\b",
    I,
)
PATTERNS = [HEADER_CELL, FLAT_HEADER, BY_DEFINITION, ROMANCE]
