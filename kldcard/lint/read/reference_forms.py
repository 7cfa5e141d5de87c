"""D1 forms beyond kldcard.lint.read.reference, each tied to the KL by its structure:

- the KL formula's argument that carries a reference role: "D_KL(P_golden || Q_model)", "KL(p_bf16 ‖ p_q)",
  "KL(p_teacher, p_student)" (whichever side it stands on, the role word names the reference; "P_ref" is a
  placeholder of the direction, not a reference);
- the reference stated as a copula in the card languages: "the reference is the unquantized BF16 file",
  "Referenz ist die unquantisierte Fassung von ...", "la referencia es ...", "la référence est ...", "参考分布取自 ...",
  "参照は ...", and inverted with a short name first: "Q8_0 is the reference";
- the model an edit was made from, written as a Markdown link: "a decensored version of [org/name](url)"
  (kldcard.lint.read.comparison.EDITED_FROM reads the plain and the code-span forms);
- a KL term's pair whose first side is a reference role: "KL divergence between original and HF-loaded model",
  "the KL between the teacher and the student" (evidence_patterns.D1's "between X and Y" reads the second side only);
- the teacher said to be shared by the compared runs, beside a KL: "Same source, same teacher, same slice:" over a KLD
  table, "Same FP8 dynamic own-base teacher" in a list of what the runs share (read.comparison.GOLDEN reads the teacher
  before its noun: "the same teacher row").
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.terms import KL_MENTION, KL_WORD, REF_ROLE

I = re.IGNORECASE

# roles that say which model or logits ("golden", "teacher", "bf16"); a bare "ref"/"base" is the formula's
# placeholder for the direction ("KL(P_ref ‖ P_q)"), which names no reference
ROLE = r"(?:golden|teacher|orig(?:inal)?|bf16|fp16|f16|fp32|f32|full)"
# an argument, LaTeX subscripts included ("P_{teacher}", "p_{\\text{bf16}}": the notation of a formula, any author)
ARG = r"[A-Za-z][\w.\-{}\\]{0,30}"
FORMULA = re.compile(
    r"(?<![A-Za-z])(?:D_?\{?KL\}?|" + KL_WORD + r")\s*[(\[]\s*(?:(?P<ref>" + ARG + r"?" + ROLE + r"[\w.\-}]*)\s*(?:\|\||‖|∥|,)\s*" + ARG +
    r"|" + ARG + r"\s*(?:\|\||‖|∥|,)\s*(?P<ref2>" + ARG + r"?" + ROLE + r"[\w.\-}]*))\s*[)\]]",
    I,
)
COPULA = re.compile(
    r"\b(?:the\s+)?(?:reference|baseline)\s+(?:model\s+)?(?:is|was|=)\s+(?P<ref>(?:the\s+)?[^\s.,;][^.;\n]{2,80})|"
    r"\bReferenz(?:modell)?\s+(?:ist|war)\s+(?P<ref2>[^.;\n]{3,80})|"
    r"\b(?:la\s+)?referencia\s+(?:es|fue)\s+(?P<ref3>[^.;\n]{3,80})|"
    r"\b(?:la\s+)?référence\s+(?:est|était)\s+(?P<ref4>[^.;\n]{3,80})|"
    r"\b(?:a\s+)?referência\s+(?:é|foi)\s+(?P<ref5>[^.;\n]{3,80})|"
    # Chinese / Japanese: "参考分布取自 …", "参考为 …", "参照は …", "基準は …" (ja_mlxturbo, ja_flash_next, ja_vllm_mxfp4,
    # zh_ninfer, zh_value99)
    r"(?:参照|参考|基準|基准)(?:分布|模型|モデル|logits|ロジット)?\s*(?:は|为|為|是|取自|来自|來自)\s*(?P<ref6>[^。；;\n]{2,80})",
    I,
)
# ... and inverted, a short name first: "Q8_0 is the reference" (dev2 pxa_pxq), "Master is the reference path" (dev2
# nvfp4_activation), "`bf16-*` is the reference" (holdout8 qwen38_35b), "B is reference" (holdout15 gptoss_20b): at a
# sentence's or a clause's start, so that "this document is the reference on ..." is not read
NAMED_FIRST = re.compile(
    r"(?:^|(?<=[.;:(])|(?<=[.;:(][ \t]))(?!(?:this|that|it|which|what|there|here|who|one|each)\b)(?P<ref>`?[A-Za-z0-9][\w.\-*/]{0,40}`?)"
    r"[ \t]+(?:is|was)[ \t]+(?:the[ \t]+|our[ \t]+)?(?:reference|baseline)\b"
    # ... not the reference of another thing: "PyTorch is the reference implementation of the KL kernel", "vLLM is the
    # baseline for the speed table" (the noun or "for" after the word names what it is the reference of)
    r"(?![ \t]+(?:implementation|kernel|code|design|paper|post|docs?|for|of|on|in|speed|throughput|latency|timings?)\b)",
    I | re.MULTILINE,
)
EDIT = r"(?:abliterat\w*|decensor\w*|uncensor\w*|quantized|quantised|fine-?tuned)"
LINKED_EDIT = re.compile(
    r"\b" + EDIT + r"\s+(?:version|variant|copy|edit)\s+of\s+\[`?(?P<ref>[A-Za-z0-9][\w.\-]*/[\w.\-]*[A-Za-z][\w.\-]*)`?\]\(", I
)
# a KL term right before its pair, the reference role first: "KL divergence between original and HF-loaded model"
# (holdout9/b automodel_pr1951 and automodel_pr1932, one test's message), "the KL divergence between the original and
# the converted checkpoint" (holdout10/d torchtitan), "KL divergence between baseline and steered" (holdout16/d
# sae_circuit); labelled D1 S with 1 (CONVENTIONS round 21: a role tied to the KL). Two sides neither of which is a
# role ("between trainer and rollout") name no reference
ROLE_PAIR = re.compile(
    KL_WORD + r"(?:[ \t]+(?:divergence|values?|scores?))?[ \t]+between[ \t]+(?:the[ \t]+)?"
    r"(?P<ref>(?:unmodified|unquantized|unedited|" + REF_ROLE + r")(?:[ \t]+(?:model|logits|weights|checkpoint|distribution|outputs?))?)"
    r"[ \t]+and[ \t]",
    I,
)
# the teacher the compared runs share: the KL of each is taken against it (holdout9/b hipfire_pr596 "Same source, same
# teacher, same slice:" over the KLD table; holdout4/b unnamed_dsv4_flash "Same FP8 e4m3 dynamic own-base teacher" in the
# list of what the runs share; written so also by prismaquant holdout5/b, hipengine holdout8/b, thedrainflorist holdout3
# and distil_sn97 holdout14/d with a noun after it, all D1 S). Not "teacher-forced", a way of decoding
# (not "the same tokenizer as the teacher": what is the same is another thing; nor "same teacher-student recipe")
SAME_TEACHER = re.compile(r"\bsame[ \t]+(?P<ref>(?:(?!as\b)[\w.\-]+[ \t]+){0,5}?teacher)\b(?![- ]forc|-?[ \t]*student)", I)
# a training objective's sentence: the KL between teacher and student is what distillation minimises, not a measurement
OBJECTIVE = re.compile(r"\b(?:minimi[sz]\w*|objective|loss|optimi[sz]\w*|trained?\b|training|distillation\s+(?:loss|objective))", I)
PATTERNS = [FORMULA, COPULA, NAMED_FIRST, LINKED_EDIT, ROLE_PAIR, SAME_TEACHER]
KL = re.compile(KL_MENTION, I)
# the reference of another thing: "the baseline is 40 tok/s", "reference is a stub"
NOT_MODEL = re.compile(r"^(?:the\s+)?(?:[~≈<>]?\d|implementation\b|code\b|paper\b|post\b|docs?\b)", I)


def vetoed(sentence: str, m: re.Match[str]) -> bool:
    """A copula in a sentence or paragraph that names no KL ("the baseline is the old kernel's speed")."""
    if m.re is SAME_TEACHER.compiled:
        return not KL.search(sentence) and not _kl_nearby(m)
    if m.re is ROLE_PAIR.compiled:
        return bool(OBJECTIVE.search(sentence))
    if m.re is COPULA.compiled or m.re is NAMED_FIRST.compiled:
        ref = next((g for g in m.groups() if g), "")
        return bool(NOT_MODEL.match(ref)) or not KL.search(sentence) and not _kl_nearby(m)
    return False


def _kl_nearby(m: re.Match[str]) -> bool:
    """A KL term in the paragraph around the match (the copula often sits in the sentence before the table)."""
    text = m.string
    lo = text.rfind("\n\n", 0, m.start())
    hi = text.find("\n\n", m.end())
    hi2 = text.find("\n\n", hi + 2) if hi >= 0 else -1  # and the block right after (the table it introduces)
    return bool(KL.search(text, max(lo, 0), hi2 if hi2 >= 0 else len(text)))
