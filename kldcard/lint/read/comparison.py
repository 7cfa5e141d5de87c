"""D1 by the shape of a comparison: the reference is whatever a KL number is compared against, however it
is named. :mod:`kldcard.lint.read.reference` and evidence_patterns.D1 know the reference by its name (a dtype,
"original", a repo id); cards as often name it by what it is in their own experiment ("KL divergence against
the same setup with no bonus", "block path against cell path", "f16 used as baseline for logits",
"going from BF16 KV to Q8 KV", "between train distribution and golden distribution"). Such a reference is
``incomplete`` (no repo, revision or dtype) unless the phrase carries them.

- a comparison word and the phrase after it, in a sentence with a KL term: "KLD vs no-bonus", "against
  the stock build" (:data:`VERSUS`);
- the phrase used as the baseline or the reference: "f16 used as baseline", "the bf16 run serves as the
  reference" (:data:`USED_AS`);
- an unquantized side of a change: "going from BF16 KV to Q8 KV", "from FP16 to Q4_K_M" (:data:`FROM_TO`);
- the KL's own preposition: "KL divergence from the BF16 model", "mean KLD to the bf16 original" (:data:`KL_FROM`), also
  hyphenated into one word: "KLD-to-f16", "KL-to-teacher" (:data:`KL_HYPHEN`), or the role first in the compound:
  "source-to-candidate KL", "source-logit KL" (:data:`ROLE_COMPOUND`);
- the Chinese comparison words: "相对于 BF16", "以 BF16 为基准" (:data:`CJK`);
- the role assigned: "teacher = BF16 checkpoint" (:data:`ROLE_IS`), a reference column beside a KL column (:data:`COLUMN`);
- the reference's own KL written as zero: "(BF16 = 0)", a row "| bf16 | 0 |" under a KL header (:data:`ZERO`);
- a reference labelled by its short name: "KLD (ref: BF16)", "ref=fp16" (:data:`REF_LABEL`);
- the model an edit was made from: "an abliterated `org/name`", "a decensored version of org/name"
  (:data:`EDITED_FROM`: the original of an abliterated model is its KL's reference);
- a golden side (a logit check's reference): "golden logits", "the golden distribution" (:data:`GOLDEN`).

The phrase after a comparison word is no reference when it is a number ("0.028 vs 0.029"), another
metric or axis ("KLD vs PPL", "against size", "vs bpw"), or a quantized candidate compared with another
("Q4_K_M vs Q5_K_M": two candidates side by side) (:func:`veto`).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.markdown import line_run
from kldcard.lint.read.terms import KL_MENTION, KL_WORD, REF_ROLE

I = re.IGNORECASE

KL = re.compile(KL_MENTION, I)
# a phrase of up to six words after a comparison word, ended by punctuation or by a word that starts another part of
# the sentence (a preposition, a verb, a conjunction); a wrapped line continues it unless the next line is a new item
STOP = r"(?:in|on|at|with|for|of|from|by|under|over|across|using|via|gives?|gave|is|was|are|were|has|had|shows?|yields?|and|or|but|which|that|when|where|while|to|as)"
GAP = r"(?:[ \t]+|[ \t]*\n[ \t]*(?![-*+>#|]))"
WORD = r"[^\s,;:()\[\]|=<>]+"
PHRASE = rf"(?P<ref>(?:(?:the|a|an|its|our|their){GAP})?(?!{STOP}\b){WORD}(?:{GAP}(?!{STOP}\b){WORD}){{0,5}})"
VERSUS = re.compile(r"\b(?:vs\.?|versus|against|compared\s+(?:to|with)|relative\s+to)" + GAP + PHRASE, I)
USED_AS = re.compile(
    r"(?P<ref>(?<![\w.\-/`])`?[\w.\-/]{2,60}`?(?:\s+[\w.\-]+){0,2}?)\s+(?:is\s+|was\s+)?(?:used|taken|kept|chosen|serves?|served)\s+as\s+"
    r"(?:the\s+|a\s+|our\s+)?(?:KLD\s+|KL\s+|logits?\s+)?(?:baseline|reference)\b",
    I,
)
FROM_TO = re.compile(
    r"\bfrom\s+(?P<ref>(?:the\s+)?(?:BF16|FP16|F16|FP32|F32|bfloat16|float16|float32|full[- ]precision|unquantized)(?:\s+[\w-]+)?)\s+to\s+\S",
    I,
)
# the KL's own preposition: "KL divergence from the BF16 model", "mean KLD to the bf16 original" (vetoed as VERSUS)
# (with what it is taken of between, "KL of the S adapter to base": the preposition of a divergence D(P ‖ Q), "of P
# to/from Q", general grammar; after a KL term, not the bare word "divergence", which names other metrics too)
KL_FROM = re.compile(r"(?<![A-Za-z_])(?:(?:" + KL_WORD + r")(?:\s+of\s+(?:the\s+|an?\s+|its\s+)?[A-Za-z][\w.\-]*(?:\s+(?!" + STOP + r"\b)[A-Za-z][\w.\-]*){0,2}?)?|divergence)\s+(?:from|to)" + GAP + PHRASE, I)
# ... and the same joined into one hyphenated word: "mean KLD-to-f16 0.164", "KL-to-teacher", "a KLD-vs-F16 battery"
# (localai, true2456, zoo_ashq1, quantize_budget: general grammar of English compounds)
KL_HYPHEN = re.compile(r"(?<![A-Za-z_])(?:KLD?|KL-?div\w*)-(?:to|vs|from)-(?P<ref>[A-Za-z0-9_.]*[A-Za-z0-9](?:-(?!based\b)[A-Za-z0-9_.]+)*)", I)
# ... and the reference's role first in a compound before the KL term: "source-to-candidate KL", "source-logit KL"
# (holdout12/d experiment_016, holdout13/d gemma_signed: the model the logits are taken from, its name given where the
# text calls it the source); a role with no name is ``incomplete``, as a "KLD-to-f16" compound
ROLE_COMPOUND = re.compile(
    r"(?<![\w-])(?P<ref>source|" + REF_ROLE + r")"
    r"(?:-to-[A-Za-z][\w.]{0,30}|-logits?)[ \t]+(?:" + KL_WORD + r")(?![\w-])",
    I,
)
# Chinese: the comparison word before the reference ("相对于 BF16", "相较于FP16") or around it ("以 BF16 为基准")
REF_WORD = r"(?:BF16|FP16|F16|FP32|F32|bfloat16|float16|FP8|Q8_0|原始模型|原模型|原版模型|[\w.\-]+/[\w.\-]+)"
CJK = re.compile(
    r"(?:相对于|相對於|相较于|相較於|对比|對比|对照|對照)\s*(?P<ref>" + REF_WORD + r")|以\s*(?P<ref2>" + REF_WORD + r")\s*(?:为|為)\s*(?:基准|基準|参考|參考|基线|基線)",
    I,
)
# an assignment of the reference's role: "teacher = BF16 checkpoint", "reference=org/name"
ROLE_IS = re.compile(r"(?<![\w-])(?:teacher|reference|ref|baseline)\s*=\s*(?P<ref>[^\s,;)\]|][^,;)\]|\n]{1,60})", I)
# a table's reference column beside a KL column: "| Quant | Mean KLD | Reference |"
COLUMN = re.compile(r"^\|[^\n]*\|[ \t]*\**(?P<ref>reference|baseline|ref\.?|base model|reference model)\**[ \t]*\|", I | re.MULTILINE)
# the reference's own KL written as zero: "KLD ↓ (BF16 = 0)", a table row "| bf16 | 0 |" under a KL header; the row's
# name may be a file or a model carrying the dtype ("AD-BF16", "Qwen3-8B-BF16.gguf") in one of its first three cells
# ("| Qwen3-0.6B | BF16 | 0.000 |": a model column before the precision column)
ZERO = re.compile(
    r"(?P<ref>(?<![\w.\-])(?:BF16|FP16|F16|FP32|F32|bfloat16|float16|original|unquantized))\s*=\s*0(?:[.,]0+)?(?![\d.,])|"
    r"^\|?(?:[^|\n]*\|){0,2}?[ \t]*\**(?P<row>[\w.\-]*?(?<![A-Za-z0-9])(?:BF16|FP16|F16|FP32|F32|bfloat16|float16|original|unquantized)"
    r"(?![A-Za-z0-9])[\w.\-]*)\**(?:[ \t]*\([^)\n]{0,30}\))?[ \t]*\|"
    r"(?:[^|\n]*\|)*?[ \t]*\**0(?:[.,]0+)?\**[ \t]*\|",
    I | re.MULTILINE,
)
# ... or the reference's row with no KL of its own, a dash under the KL column: "| BF16 | 71.07 | — (reference) |",
# "| bf16 (original) | 17.9 GB | — |", "| original | 751 | — |" (a table layout: thedrainflorist, glyd, beastrank,
# scion, neurosenko, orcasaq2, llmkube ...; :func:`dash_under_kl` reads the column); the cell's words are bounded, as
# a prose line of many "vs BF16" would otherwise be scanned once per BF16 (quadratic)
DASH_ROW = re.compile(
    r"^[ \t]*\|?(?:[^|\n]*\|){0,2}?[ \t]*\**(?P<row>[\w.\- ]{0,40}?(?<![A-Za-z0-9])(?:BF16|FP16|F16|FP32|F32|bfloat16|float16|original|unquantized)"
    r"(?![A-Za-z0-9])[\w.\- ]{0,40}?)\**(?:[ \t]*\([^)\n]{0,30}\))?[ \t]*\|[^\n]*$",
    I | re.MULTILINE,
)
DASH = re.compile(r"^[ \t*_]*(?:—|–|-{1,2}|n/a)(?:[ \t]*\([^)\n]{0,20}\))?[ \t*_]*$", I)
# a reference labelled by its short name: "KLD (ref: BF16)", "ref=fp16 logits"
REF_LABEL = re.compile(r"(?<![\w-])ref\s*[:=]\s*[*_`]*\s*(?P<ref>[^\s,;|)\]*`]{2,80})", I)
# the model an edit or a quantization was made from (its KL is taken against it, as the Hub's base_model with
# base_model_relation: quantized): "an abliterated `google/gemma-4-12B-it`", "a decensored version of Qwen/Qwen3-8B",
# "GGUF quants of org/name", "a quantized version of org/name"
EDITED_FROM = re.compile(
    r"\b(?:abliterat\w*|decensor\w*|uncensor\w*|de-?censor\w*|quants|quantizations?|quantisations?|quantized\s+(?:version|variant)s?|"
    r"quantised\s+(?:version|variant)s?|GGUFs|GGUF\s+quants|EXL[23]\s+quants)\s+(?:(?:version|variant|copy|edit)\s+of\s+|of\s+)?(?:the\s+)?"
    r"(?P<ref>`?(?<![\w.\-/])[A-Za-z0-9][\w.\-]*/[\w.\-]*[A-Za-z][\w.\-]*`?)",
    I,
)
# ... and a teacher's, the model a distillation or a fidelity check scores against ("the teacher logits", "the same
# teacher row", "the teacher's distribution"; not "teacher-forced", a way of decoding)
GOLDEN = re.compile(
    r"\b(?P<ref>(?:golden|teacher(?:'s)?)\s+(?:logits?|distributions?|outputs?|reference|model|checkpoint|runs?|rows?|fixtures?|cache|pass|panel))\b",
    I,
)
LOGITS = re.compile(r"\blogits?\b|\blogprobs?\b", I)
PATTERNS = [VERSUS, KL_FROM, KL_HYPHEN, ROLE_COMPOUND, USED_AS, FROM_TO, CJK, ROLE_IS, COLUMN, ZERO, DASH_ROW, REF_LABEL, EDITED_FROM, GOLDEN]

# what a comparison word puts against a KL number that is not a model: a number, another metric, an axis
NOT_REFERENCE = re.compile(
    r"^(?:the\s+|a\s+|an\s+|its\s+|our\s+|their\s+)?(?:[~≈<>±+\-−]?\s*\d|"
    r"(?:PPL|perplexity|size|file\s+size|bpw|bits?|bytes|speed|throughput|latency|tok(?:ens)?/s|t/s|memory|VRAM|disk|"
    r"accuracy|scores?|top[- ]?\d|same[- ]top|agreement|benchmarks?|MMLU|time|depth|context|ctx|length|layers?|"
    r"threshold|target|budget|gate|limit|bound|floor|noise|naive|random|chance|expected|previous|last|earlier|other|each|"
    r"competing|alternative|rival|" + KL_WORD + r"|ΔPPL|delta|quality|compression|ratio|cost|price|compute|bits per weight|"
    r"positions?|steps?|tokens?|index|temperature|sequence|seq|batch|epochs?|iterations?|sparsity|rank|group\s+size|"
    r"number|count|percent|bits-per-weight|quant(?:ization)?\s+level|level)(?![\w-]))",
    I,
)
# a quantized candidate anywhere in the phrase (two quants side by side: "vs bartowski's Q3_K_M", "vs `f16/q4_0`")
CANDIDATE = re.compile(r"(?<![A-Za-z0-9])(?:(?:UD-)?I?Q[1-7]_\w+|I?Q[1-7](?![\w.])|[1-7]\s*-?bits?\b|[1-7](?:\.\d+)?\s*bpw|NVFP4|MXFP4|AWQ|GPTQ|EXL[23])", I)
# a value ("unsloth's 0.61"), several things ("X and Y"), or a plural head ("the competing versions"): other candidates
# values side by side: "5.51 vs `f16/q4_0` = 0.0040", "KL=0.07 vs E2B KL=0.35" (a value given to the phrase)
VALUE_AFTER = re.compile(r"[*_`]*\s*[=:]\s*[*_`]*[~≈]?\d|\s+(?:and|or|&)\s")  # or a list: "vs X and Y"
# ... or alternatives joined by slashes ("vs attention/SnapKV/H2O": three names, never one repo id)
OTHERS = re.compile(r"\d[.,]\d|^[^\s/]+/[^\s/]+/[^\s/]+|(?:versions|quants|models|builds|methods|variants|formats|engines|runs|"
                    r"implementations|configurations|configs|kernels|backends|checkpoints)$", I)


# a role with no name: a placeholder in a compound ("KLD-vs-ref") or a row label ("| INT4 vs REF |", "vs the ref", "vs
# REF.", "vs reference model"), no reference named
BARE_ROLE = re.compile(r"[*_`\s]*(?:the\s+|a\s+|our\s+)?(?:ref|reference|base|baseline)(?:\s+model)?[*_`\s.,;:!)]*", I)


def bare_role(ref: str) -> bool:
    return bool(BARE_ROLE.fullmatch(ref))


def veto(sentence: str, m: re.Match[str]) -> bool:
    """Whether a match of :data:`PATTERNS` names no reference of a KL number."""
    ref = (m.groupdict().get("ref") or m.groupdict().get("ref2") or m.groupdict().get("row") or "").strip()
    if m.re is ZERO.compiled and m.group("row"):  # a table row: the KL term stands in the table's header
        return not KL.search(table_header(m.string, m.start()))
    if m.re is DASH_ROW.compiled:
        return not dash_under_kl(m)
    if m.re is GOLDEN.compiled or m.re is EDITED_FROM.compiled:
        return False
    if (m.re is not COLUMN.compiled and not KL.search(sentence) and not (m.re is USED_AS.compiled and LOGITS.search(sentence))
            and not (m.re is VERSUS.compiled and row_label_under_kl(m) and not bare_role(ref))):
        return True  # "f16 used as baseline for logits": the logits a KL is taken on
    if m.re is COLUMN.compiled:  # the KL column stands in the same header row
        return not KL.search(m.group(0)) and not KL.search(m.string[m.end() : m.string.find("\n", m.end())])
    if m.re is KL_HYPHEN.compiled:  # a bare role is the compound's placeholder ("KLD-vs-ref is the rank column"), no reference
        return phrase_vetoed(ref) or bare_role(ref)
    if m.re is VERSUS.compiled or m.re is KL_FROM.compiled:
        text = m.string
        if m.re is VERSUS.compiled and CONTEST.search(text, max(0, m.start() - 20), m.start()):
            return True  # "the head-to-head against X": X is a rival in a contest, not the reference
        return bool(VALUE_AFTER.match(text, m.end())) or phrase_vetoed(named(text, m, ref))
    return False


# the phrase's value, run into it with no "=" or ":" ("KLD vs baseline 0.000000", "KLD vs stock build 0.0012"): the
# figure belongs to the KL, not to the name, and is dropped before the vetoes read the name (general grammar of a
# figure after its label; a rival's own figure, "against unsloth's 0.61" or after a measured one, stays for the vetoes)
TRAILING_VALUE = re.compile(r"(?<!['’]s)[*_`]*[ \t]+[~≈]?\d*[.,]\d+[*_`]*$")


def named(text: str, m: re.Match[str], ref: str) -> str:
    """The phrase without its own trailing figure, unless the clause gave a measured figure before the comparison word
    (then the figure is a rival's, "0.0171 ... vs INT8 0.0249", and stays for the vetoes)."""
    if not TRAILING_VALUE.search(ref) or _figure_before(text, m.start()):
        return ref
    return TRAILING_VALUE.sub("", ref) or ref


CONTEST = re.compile(r"\bhead[- ]to[- ]head[ \t]*$", I)


def phrase_vetoed(ref: str) -> bool:
    """Whether the phrase a comparison word puts against a KL number is no reference: a KL term, a number, another
    metric or axis, a quantized candidate, or several things (also read by read.reference_words, in other languages)."""
    bare = ref.replace("`", "")  # a code span is the author's typography ("a `2e-2` threshold" is a number)
    return bool(KL.search(ref)) or len(ref) < 2 or bool(NOT_REFERENCE.match(bare) or CANDIDATE.search(ref) or OTHERS.search(ref))


# a comparison that belongs to a size or a speed: "27.9% of the cache size vs fp16", "2.1x faster than / vs BF16"
OF_SIZE = re.compile(r"\b(?:size|memory|VRAM|footprint|bytes|disk|faster|slower|speed|throughput|t/s|tok/s|GB|GiB|MB|bpw)\b[^.\n]{0,12}$", I)


def of_size(text: str, m: re.Match[str]) -> bool:
    """Whether a comparison word at ``m`` compares a size or a speed (the words right before it), not a KL."""
    before = text[max(0, m.start() - 30) : m.start()]
    return bool(OF_SIZE.search(before)) and not KL.search(before)


# the phrase's own value right after it: "vs q8_0's 0.0023", "against unsloth's 0.61" (a rival's figure, not a reference)
RIVAL_VALUE = re.compile(r"[*_`]*(?:'s|’s)[*_`]*\s+[~≈]?\d")


# a bare figure right after the named phrase ("vs FP8 0.0265"), which is a rival's only where the clause already gave the
# measured figure before the comparison word ("reads KLD 0.0168 / top-1 95.5%, compared vs FP8 0.0265": value against
# value, general grammar); "KLD vs BF16 0.0012" with no figure before it is the reference and its value
BARE_VALUE = re.compile(r"[*_`]*[ \t]+[~≈]?\d*\.\d")
FIGURE_BEFORE = re.compile(r"\d\.\d+\b[^.;:\n]*$")
WORD = re.compile(r"\s*(?:vs\.?|versus|against|compared\s+(?:to|with|vs\.?))\s+", re.IGNORECASE)


def rival_value(text: str, m: re.Match[str]) -> bool:
    """Whether the phrase a comparison word names at ``m`` is followed by its own figure ("vs q8_0's 0.0023", or a bare
    figure after a measured one: "0.0168 ... vs FP8 0.0265")."""
    if RIVAL_VALUE.match(text, m.end()):
        return True
    if not BARE_VALUE.match(text, m.end()) or not WORD.match(m.group(0)):
        return False
    return _figure_before(text, m.start())


def _figure_before(text: str, pos: int) -> bool:
    """Whether the clause before ``pos`` gives a measured figure: from the line's last cell border, and from its last KL
    term ("KL vs HF bf16 0.0004" names the reference of that value)."""
    start = max(text.rfind("\n", 0, pos), text.rfind("|", 0, pos)) + 1
    terms = list(KL.finditer(text, start, pos))
    return bool(FIGURE_BEFORE.search(text, terms[-1].end() if terms else start, pos))


def _cells(line: str) -> list[str]:
    return line.strip().strip("|").split("|")


def dash_under_kl(m: re.Match[str]) -> bool:
    """Whether the row ``m`` (of :data:`DASH_ROW`) has a dash in every column its table's header heads with a KL term,
    and there is at least one such column: the row is the reference the other rows' KL is taken against."""
    header = _cells(table_header(m.string, m.start()))
    row = _cells(m.group(0))
    cols = [i for i, h in enumerate(header) if KL.search(h)]
    return bool(cols) and len(row) > cols[-1] and all(DASH.match(row[i]) for i in cols)


# a table row labelled by the pair it compares, "| TP3 vs layer-split | 0.0242 |", "| candidate vs BF16 | ... |": its KL
# term stands in the header, not in the row (holdout16/d sparkinfer "| TP3 vs llama ref |", holdout-2 and holdout-7 rows of
# the same shape); a bare role there ("| INT4 vs REF |", real-dev rmas_int4) names none, as in a compound
FIRST_CELL = re.compile(r"[ \t]*\|[^|\n]{0,80}")


def row_label_under_kl(m: re.Match[str]) -> bool:
    """Whether ``m`` stands in the first cell of a table row whose header (of the same table: no blank line between)
    names a KL term."""
    text = m.string
    start = text.rfind("\n", 0, m.start()) + 1
    if not FIRST_CELL.fullmatch(text[start : m.start()]):
        return False
    header = table_header(text, start)
    # the table: the lines above up to an empty one (not one of spaces), read as far as table_header looks
    lo, _ = line_run(text, start, start, _not_empty, HEADER_WINDOW, 0)
    return bool(header) and header in text[max(lo, start - HEADER_WINDOW) : start] and bool(KL.search(header))


def _not_empty(line: str) -> bool:
    return line != ""


SEPARATOR = re.compile(r"^[ \t]*\|?[ \t]*:?-{3,}", re.MULTILINE)
HEADER_WINDOW = 4000  # characters above a row searched for its table's header (lines walked: no more than these)


def table_header(text: str, pos: int) -> str:
    """The header line of the table holding offset ``pos`` (the line above its separator), or ""."""
    seps = [s for s in SEPARATOR.finditer(text, max(0, pos - HEADER_WINDOW), pos)]
    if not seps:
        return ""
    s = seps[-1].start()
    start = text.rfind("\n", 0, max(0, s - 1)) + 1
    return text[start:s]
