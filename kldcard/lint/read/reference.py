"""D1 (reference) statements beyond kldcard.lint.evidence_patterns.D1: the reference named by its role
or written as an assignment, which the reading reports as ``incomplete`` until a repo id, revision and
dtype are given (issue 28: "a reference named without revision or dtype", never "does not state").

- an assignment: "base = the logits with f16 KV", "base = `--kv-dtype bf16`", a row labelled "(base)";
- the original by its role: "the original BF16 output distribution", "the original HF model", "the
  unmodified model's predictions", and the same in the card languages ("元のモデル", "オリジナル",
  "modelo sin editar", "modelo original", "modèle d'origine", "Originalmodell");
- a reference after "match(es)" ("matches the locked stock ... reference");
- a comparison word before a logits or model file in a sentence with a KL term ("KLD vs `NX2-Q6K.kld`");
- with a KL term in the sentence: the parent by its role ("KLD vs parent"), a command's reference option
  ("--reference runs/bf16-capture", "--baseline-model $BF16"), the reference side of an arrow ("KL-div (q→fp16)").
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read import comparison, reference_columns, reference_forms, reference_words
from kldcard.lint.read.terms import KL_MENTION, KL_WORD
from kldcard.lint.read.tools import exllamav3

I = re.IGNORECASE

ROLE_NOUN = r"(?:model|checkpoint|weights|output distribution|distribution|logits|outputs?)"
PATTERNS: list[re.Pattern[str]] = [
    re.compile(r"\bbase\s*=\s*(?P<ref>`[^`\n]{2,80}`|(?:the\s+)?[^\s,;)][^,;)\n]{1,60})", I),
    re.compile(r"[(（]\s*(?P<ref>base|baseline|reference)\s*[)）]\s*\|", I),
    re.compile(
        rf"\b(?:the|its|their|our)\s+(?P<ref>(?:original|unmodified|unedited|unquantized)\s+(?:[\w.\-/]+\s+){{0,2}}?{ROLE_NOUN})(?:'s)?\b",
        I,
    ),
    re.compile(r"(?P<ref>元のモデル|オリジナル|原版模型|modelo (?:sin editar|original|base)\b|modèle d'origine|modèle original|Originalmodell|Ausgangsmodell)", I),
    re.compile(
        r"\bmatch(?:es|ed|ing)?\s+(?P<ref>the\s+(?:[\w.\-/'*`]+\s+){0,6}?(?:reference|original|unmodified model|unquantized model))\b", I
    ),
    re.compile(r"\b(?:vs\.?|versus|against)\s+(?P<ref>`?[\w.\-/~]+\.(?:kld|logits|gguf|safetensors)\b`?)", I),
]
CODE_SPAN_REF = PATTERNS[-1]
# beside a KL term only (:func:`veto`): the parent by its role ("KLD vs parent"), a command's reference option
# ("--reference runs/bf16", "--baseline-model $BF16"), the reference side of an arrow ("KL-div (q→fp16)")
KL_ONLY: list[re.Pattern[str]] = [
    re.compile(r"\b(?:vs\.?|versus|against|relative to)\s+(?:the\s+|its\s+)?(?P<ref>parent(?:\s+(?:model|checkpoint|weights))?)\b", I),
    re.compile(r"(?<![\w-])--(?:reference|ref|baseline(?:[-_]model)?|base[-_]model|teacher(?:[-_]model)?)(?:[= ]+)"
               r"(?P<ref>[\"']?[^\s`'\"-][^\s`'\"]{1,200})", I),
    re.compile(KL_WORD + r"\s*\(\s*[\w.\-]+\s*(?:→|->)\s*(?P<ref>BF16|FP16|F16|FP32|F32|bfloat16|float16|teacher|base|original)\s*\)", I),
]
PATTERNS += KL_ONLY
PATTERNS += comparison.PATTERNS  # the reference by the shape of a comparison (read.comparison)
PATTERNS += reference_forms.PATTERNS  # a KL formula's reference argument, a copula, a linked edit (read.reference_forms)
PATTERNS += reference_columns.PATTERNS  # a reference column of a KL table, the Romance reference word (read.reference_columns)
PATTERNS += reference_words.PATTERNS  # the comparison words of the card languages: "相对 BF16", "X 대비", "respecto a" (read.reference_words)
PATTERNS += [exllamav3.REFERENCE_OPTION]  # model_diff's model B, the reference of what it prints (read.tools.exllamav3)
KL = re.compile(KL_MENTION, I)
# "the original paper / post / discussion ..." is not a model
NOT_MODEL = re.compile(r"^\s*(?:paper|post|discussion|PR|issue|article|author|repo|code|thread|idea|question|text|prompt)s?\b", I)


def veto(sentence: str, m: re.Match[str], after: str) -> bool:
    """True when the match is not a statement of the KLD's reference (``after``: the text right after it)."""
    if re.made_by(m, comparison.PATTERNS):
        return comparison.veto(sentence, m)
    if re.made_by(m, reference_words.PATTERNS):
        return reference_words.vetoed(sentence, m)
    if re.made_by(m, reference_forms.PATTERNS):
        return reference_forms.vetoed(sentence, m)
    if re.made_by(m, reference_columns.PATTERNS):  # tied to its table by structure (read.reference_scope checks the table's KL)
        return False
    if m.re is exllamav3.REFERENCE_OPTION.compiled:  # the KL tool's own option: model_diff is the program it follows
        return not exllamav3.option_of_model_diff(m.string, m.start())
    if m.re is CODE_SPAN_REF.compiled or re.made_by(m, KL_ONLY):
        return not KL.search(sentence)
    return bool(NOT_MODEL.match(after))
