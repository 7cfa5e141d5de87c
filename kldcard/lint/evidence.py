"""Per-card disclosure evidence: for each of the nine disclosures, stated / inferred / missing.

Evidence is searched in the whole body (prose, tables, command lines and pasted logs), because cards
put their protocol anywhere. Each pattern may be vetoed by its sentence: a quantizer version is not
the runtime that produced the logits, an imatrix corpus is not the evaluation text, a training KL
penalty is not a direction. Patterns are compiled once at import; see disclosure-patterns.md §2 for
the phrasings they cover.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any, Literal

from kldcard.lint.claims import TRAINING_CONTEXT, Claim
from kldcard.lint.markdown import Doc
from kldcard.lint.scan import finditer
from kldcard.lint.tool_defaults import Tool, defaults, recognise

Status = Literal["stated", "inferred", "missing"]
# ASCII: case-insensitive matching with Unicode case folding is ~3x slower, and every keyword here
# is ASCII (μ, ‖, × and Δ are matched literally either way).
I = re.IGNORECASE | re.ASCII
M = re.IGNORECASE | re.MULTILINE | re.ASCII

# ---- sentence vetoes --------------------------------------------------------------------------
CALIBRATION = re.compile(r"imatrix|importance matrix|calibrat|校准", I)
EVAL_WORDS = re.compile(r"\bKLD\b|\bKL\b|KL[- ]div|\beval|measur|\bscor|\btest|perplexity", I)
QUANTIZER = re.compile(
    r"quantiz\w*\s+(?:was\s+|were\s+)?(?:performed\s+|done\s+)?(?:using|with)\b|for quantization|\bmade (?:with|using)\b|"
    r"made these quants|quants? (?:were\s+)?(?:made|created|produced)|converted (?:to|with|using|from)\b|\bt/s\b|"
    r"tok(?:ens)?/s|\bspeed|\bruns? on\b|at about \d|\bquants? of \S+ (?:using|made with|created with)\b|\bconver(?:sion|ter)\b",
    I,
)
# A conditional or a rule of thumb describes no measurement ("If a quant's imatrix contains Wikipedia
# ...", "perplexity, typically on Wiki-test with 512-token context windows").
HYPOTHETICAL = re.compile(r"^[\s>*+\-]*(?:if|when|suppose)\b|\b(?:typically|usually|generally|in general|might|could)\b", I)
NEGATED = re.compile(r"\b(?:did not|didn't|do not know|unknown|not (?:check|disclosed|known)|different calibration)", I)


CALIBRATION_SOURCE = re.compile(r"(?:imatrix|calibration|calibrated)\s+(?:\w+\s+){0,3}?(?:from|on|with|using|:)\s*[`'\"(\[]*$", I)


def _calibration_only(sentence: str) -> bool:
    return bool(CALIBRATION.search(sentence)) and not EVAL_WORDS.search(sentence)


def _not_eval_text(doc: Doc, sentence: str, m: re.Match[str]) -> bool:
    """Veto for D3: the sentence is only about calibration, or the match is the calibration source."""
    return (
        _calibration_only(sentence)
        or bool(HYPOTHETICAL.search(sentence))
        or (sentence.lstrip().startswith("|") and not EVAL_WORDS.search(sentence))  # a benchmark-score row
        or bool(CALIBRATION_SOURCE.search(doc.text[max(0, m.start() - 60) : m.start()]))
    )


# ---- D1 reference -----------------------------------------------------------------------------
REF_TOKEN = (
    r"(?:BF16|FP16|F16|F32|FP32|bfloat16|float16|float32|FP8|F8|INT8|Q8_0|Q6_K|original|unquantized|"
    r"full[- ]precision|teacher|\d+(?:\.\d+)?\s*bpw|[\w.\-]+/[\w.\-]+)"
)
REF_NOUN = r"(?:\s+(?:model|checkpoint|weights|GGUF|baseline|original|reference|safetensors|quant))?"
REF_PHRASE = rf"(?P<ref>(?:the\s+|a\s+|an\s+|our\s+)?(?:[\w.\-]+\s+){{0,3}}?{REF_TOKEN}{REF_NOUN})"
D1 = [
    re.compile(
        r"\b(?:vs\.?|versus|against|compared (?:to|with)|relative to|drifts? from|differs? from|deviates? from|close\w* (?:is it )?to|"
        r"(?:fidelity|faithful\w*|closeness) to|compar\w*\s+(?:(?:mean|median)\s+)?(?:KLD|KL[- ]?div\w*)\s+(?:to|with))\s+"
        + REF_PHRASE,
        I,
    ),
    re.compile(r"\b(?:between|compared)\s+[^.;]{0,80}?\s+(?:and|with|to|against)\s+" + REF_PHRASE, I),
    re.compile(r"\b(?:D_?)?KL\s*\(\s*(?:p|P|π)?_?\{?(?P<ref>bf16|fp16|f16|fp32|f32|fp8|teacher|base|orig\w*)\b", I),
    # "Reference: x", "- **Reference**: `x`", "**Baseline:** x", and a labelled table row "| Reference | x |"
    re.compile(r"\b(?:reference|baseline|base)\s*(?:model|checkpoint)?\s*\**\s*:\s*\**\s*(?P<ref>(?:[^\n.;,]|\.(?=\w)){2,120})", I),
    re.compile(r"^\|?[ \t]*\**(?:reference|baseline)(?:\s+(?:model|checkpoint))?\**[ \t]*\|[ \t]*(?P<ref>[^|\n]{2,120})\|", M),
    re.compile(r"\b(?:the\s+)?(?:reference|baseline|base)(?:\s+model)?\s+(?:is|was)\s+(?P<ref>(?:[^\n.;,]|\.(?=\w)){2,120})", I),
    re.compile(r"\b(?:base|reference|ref)\s+logits\s+(?:\w+\s+){0,3}?from\s+(?P<ref>(?:the\s+)?[^\n.,;]{2,50})", I),
    re.compile(r"(?P<ref>(?<![\w.\-])[\w.\-]+\s+(?:checkpoint|model|weights|quant|GGUF)),?\s+which\s+serves\s+as\s+(?:our|the)\s+reference", I),
    re.compile(rf"\b(?:teacher|reference|base(?:line)?)(?:\s+model)?\s+(?:ran|runs|was run|is run)\s+in\s+(?P<ref>{REF_TOKEN})", I),
    re.compile(r"\bmodel\s+[AB]\s+is\s+the\s+(?P<ref>(?:BF16|FP16|F16|F32|FP32|FP8|original|unquantized|reference)[^\n.,;]{0,30})", I),
    re.compile(
        r"\b(?:D_?)?KL\s*\(\s*(?!(?:[pq]|ref|reference|test|quant|cand\w*|[ab]|[pq]_\w+)\s*(?:‖|\|\||∥))"
        r"(?P<ref>[\w.\-]{2,40})\s*(?:‖|\|\||∥)",
        I,
    ),
    re.compile(rf"(?:与|和|相对于|对比)\s*(?P<ref>{REF_TOKEN})[^，。,.]{{0,12}}?(?:相比|对比|比较)", I),
    re.compile(r"\bsource:\s*(?P<ref>[\w.\-]+/[\w.\-]+@[0-9a-f]{7,40})", I),
    re.compile(r"--kl-divergence-base\s+(?P<ref>\S+)", I),
    re.compile(
        r"(?P<ref>(?<![\w.\-/`])`?[\w.\-/]{2,80}`?(?:\s+(?:model|checkpoint|weights|GGUF))?)\s+as\s+(?:the|a|our)\s+"
        r"(?:KLD\s+|KL\s+)?(?:baseline|reference)\b",
        I,
    ),
    re.compile(r"\bKL(?:[- ]?div(?:ergence)?)?\s*\(\s*(?:[\w.\-]{1,20}\s*,\s*)?(?P<ref>BF16|FP16|F16|FP32|F32|bfloat16|orig\w*)\s*[,)]", I),
    re.compile(r"\bfull[- ](?P<ref>(?:BF16|FP16|F16|bfloat16|precision)\s+(?:model|weights|checkpoint|GGUF|safetensors))\b", I),
    re.compile(r"\bbaseline\s+`?(?P<ref>(?:BF16|FP16|F16|FP32|F32|bfloat16|float16)\b(?:`?/`?(?:BF16|FP16|F16))?)", I),
    # a table's own reference row: "| original | 751 | ... | — |", "Original | 597.1 GB | ...", "| f16 | None | ... | - |"
    re.compile(r"^\|?[ \t]*\**(?P<ref>original|unquantized)\**[ \t]*\|", M),
    re.compile(r"^\|?[ \t]*\**(?P<ref>BF16|FP16|F16|FP32|F32)\**[ \t]*\|[^\n]*?\|[ \t]*[-—–][ \t]*\|", M),
]
QUANTIZED_REF = re.compile(
    r"(?<![A-Za-z0-9])(?:FP8|F8|INT8|INT4|Q\d_(?:0|1|K)\w*|IQ\d\w*|\d+(?:\.\d+)?\s*bpw|NVFP4|MXFP4|AWQ|GPTQ)"
    r"(?![A-Za-z0-9])|\b(?:highest|largest|best)\s+(?:pure\s+)?quant",
    I,
)

# ---- D2 runtime -------------------------------------------------------------------------------
ENGINE = (
    r"(?:llama\.cpp|ik_llama\.cpp|llama-cpp-python|exllamav[23]|vLLM|SGLang|transformers|mlx-lm|mlx_lm|mlx|"
    r"PyTorch|torch|hipfire|TensorRT-LLM|TGI|Ollama|llama-perplexity|llama-server|llama-cli)"
)
VERSION = r"(?:v?\d+\.\d+(?:\.\d+)?\b(?!\s*(?:GB|GiB|MB|%|bpw))|b\d{3,5}\b|build\s*:?\s*\d+|release\s+b?\d+|main-b\d+\S*|commit\s+[0-9a-f]{7,40})"
HARDWARE = (
    r"\b(?:RTX\s*(?:PRO\s*)?\d{4}\w*|GTX\s*\d{3,4}|[HBA]\d{3}\b|H200|GH200|A6000|L40S?|MI\d{3}X?|"
    r"RX\s*\d{4}\s*XTX?|M[1-4]\s*(?:Pro|Max|Ultra)\b|EPYC\s*\d{4}\w*|Ryzen\s*\d\s*\d{4}\w*|Xeon\s*\w+|"
    r"(?:a|one|two|\d+x)\s+(?:single\s+)?(?:RTX\s*)?(?:3090|4090|5090|3080|4080)(?:\s?Ti)?\b)"
)
D2 = [
    re.compile(rf"\b{ENGINE}\b[^.;|]{{0,25}}?{VERSION}", I),
    re.compile(r"^[ \t]*build:\s*\d+\s*\([0-9a-f]{6,}\)|\bbuild\s*:?\s*b?\d{4,5}\b", M),
    re.compile(HARDWARE, I),
]

# ---- D3 evaluation text -----------------------------------------------------------------------
D3 = [
    re.compile(
        r"\b(?:wiki\.test(?:\.raw)?|wikitext-?2?(?:-raw-v1)?|WT2|wiki2|c4\s+(?:validation|val)|FLORES(?:-?200)?|"
        r"ShareGPT|FineWeb(?:-Edu)?|text_en_\w+|pg-?19|MT-Bench|Arena-Hard|(?:the\s+)?Pile|Wikipedia|RedPajama|"
        r"SlimPajama|Dolma|LAMBADA|HumanEval|GSM8K|C-Eval|CMMLU|GPQA(?:[- ]Diamond)?|wiki\.utf8)\b|验证集|测试集|评测集",
        I,
    ),
    re.compile(
        r"(?<![~\d,.])[~\d][\d,.]*\s*[kKM]?\s+tokens?\s+across|(?<![\d,])\b\d[\d,]*\s+(?:held-out\s+)?(?:\w+\s+)?(?:documents|sequences|"
        r"conversations|samples|prompts|texts|passages|articles|examples|questions)\s+(?:of|from|in)\b|"
        r"\beval(?:uation)?\s+(?:text|set|file|corpus|data)\s*(?::|=|is\b|was\b|from\b|of\b|\()|\b(?:test|validation|held-out|dev)\s+(?:set|split|file|data)\b|"
        r"\btext file\b|(?<![\w.\-])[\w.\-]+\.(?:txt|raw|jsonl|parquet)\b|\btokens\s+(?:of|from)\s+(?:the\s+)?[A-Z]|"
        r"(?<![\d.,])\b[\d.,]+\s*[kKM]?[- ]tokens?\s+(?:mix|sample|subset|corpus|set)\b|"
        r"\b(?:my|our)\s+(?:own\s+)?(?:eval(?:uation)?|test|held-out)\s+(?:set|text|data|file|corpus)\b",
        I,
    ),
]

# ---- D4 calibration ---------------------------------------------------------------------------
D4_NONE = re.compile(
    r"\b(?:no|without)\s+(?:imatrix|importance matrix|calibration(?:\s+data)?)\b|\bstatic quants?\b|\bdata-free\b|"
    r"needs? no calibration|no calibration data",
    I,
)
CALIBRATED_ON = re.compile(r"\s+(?:on|with|using|from|against)\b", I)
D4_WORD = re.compile(r"\b(?:imatrix|importance matrix|calibrat\w*)\b|校准", I)
DATASET_HINT = re.compile(
    r"(?<!\S)\S+\.(?:txt|parquet|json|jsonl|dat)\b|(?<![\w.\-])(?!(?-i:[A-Z]{1,5}/[A-Z]{1,5})\b)[\w.\-]+/[\w.\-]+|\]\(|wiki\.train|wikitext|pile-val|ultrachat|c4\b|"
    r"groups_merged|\bdefault\b|built-in|(?<![\d.,*])\d[\d.,*]*\s*[KkM]?\s*(?:tokens?|samples|rows|chunks)\b|(?<!\d)\d+\*\d+|"
    r"(?<!\d)\d+\s*条|样本",
    I,
)

# ---- D5 context length ------------------------------------------------------------------------
D5 = [
    re.compile(r"(?:^|[\s`(])(?:-c|--ctx-size|--context)\s+\d{2,6}\b|\bn_ctx\s*=?\s*\d{2,6}|\bctx[_ ]?(?:size)?\s*=?\s*\d{3,6}\b", I),
    re.compile(r"\b(?:\d{1,3},\d{3}|\d{3,6})[- ](?:token|tok)s?\s+(?:contexts?|windows?|rows?|chunks?|sequences?|segments?)\b", I),
    re.compile(r"\b\d+\s*(?:[a-z]+\s+)?[×x]\s*\d{3,6}\s*tokens\b", I),
    re.compile(r"\bcontext(?:\s+length|\s+size|\s+window)?\s+(?:of\s+)?\d{3,6}\b|\b\d{3,6}\s+context\b", I),
    re.compile(r"\b(?:windows?|rows?|chunks?|sequences?|documents?|contexts?)\s+of\s+(?:\d{1,3},\d{3}|\d{3,6})\s+tokens\b", I),
    re.compile(r"\b\d{3,6}\s*ctx\b|\(\s*(?:\d{1,3},\d{3}|\d{3,6})\s+tokens\b|\bstride\s*[=:]?\s*\d{2,6}\b", I),
    re.compile(
        r"\btruncated to \d{3,6} tokens|\bmax_seq\w*\s*=?\s*\d{3,6}|\bctx\d{3,6}\b|"
        r"\bseq(?:uence)?[_ ]?len(?:gth)?\s*[=:]?\s*\d{3,6}\b|\brows?\s*[×x]\s*\d{3,6}\b",
        I,
    ),
]

# ---- D6 positions -----------------------------------------------------------------------------
D6 = [
    re.compile(r"(?<![\d,.])\b\d[\d,.]*\s*[kKM]?\s+(?:total\s+|scored\s+)?(?:token\s+)?positions\b|\bscored positions\b", I),
    re.compile(r"\ball positions\b|\bevery position\b|\bpositions?\s+(?:with|after|beyond)\b|\bsecond half of each\b", I),
    re.compile(
        r"--chunks\s+\d+|\b\d++\s*(?:[×x]\s*\d{3,6}[- ]token\s+|(?:(?!(?:with|of|and|in|non-\w+)\b)[\w.\-]{1,40}\s+){0,3}?)"
        r"chunks?\b|\bleft context\b|\b\d+\s+(?:rows|windows|sliding windows|contexts)\b",
        I,
    ),
    re.compile(r"\b(?:two|three|four|five|six|eight|ten|twenty)\s+chunks\b", I),  # "four chunks"
    re.compile(r"\bprefill only\b|\bprompt tokens only\b|\b(?:response|prompt)[- ]only\b", I),
]

# ---- D7 direction -----------------------------------------------------------------------------
D7 = [
    re.compile(r"\b(?:D_?)?KL\s*\(\s*[^()\n]{1,40}?(?:‖|\|\||∥)\s*[^()\n]{1,40}?\)", I),
    re.compile(r"\bKL(?:[- ]?div(?:ergence)?)?\s*\(\s*[A-Za-z]\w{0,6}\s*,\s*[A-Za-z]\w{0,6}\s*\)", I),
    re.compile(r"\b(?:forward|reverse)\s+KL\b|\bJSD\b|Jensen[- ]Shannon|\bkld_direction\b", I),
    re.compile(r"\bteacher[- ]to[- ]student\b|\breference[- ]to[- ](?:candidate|quant)\b", I),
]
ARROW = re.compile(r"\(\s*(\w{1,12})\s*(?:→|->)\s*(\w{1,12})\s*\)")

# ---- D8 vocabulary ----------------------------------------------------------------------------
D8 = [
    re.compile(r"\bfull(?:[- ][\d,]+(?:-token)?)?\s+vocab(?:ulary)?\b|(?<![\d,])\b[\d,]{5,}-token vocabulary\b", I),
    re.compile(
        r"\bno top-?k\b|\btop-?\d+\s+(?:prompt\s+)?(?:log-?probs?|logprobs?|log-probabilit\w+|tokens)\b|"
        r"logprobs\w*\s*=\s*\d+|\btop_logprobs\w*\s*\d+|\btop-?\d+\s+only\b|\bno truncation\b|\btruncat\w*\s+(?:the\s+)?vocab|\b\d{2}-nat\b|"
        r"\bnat floor\b|\bstorage floor\b|\bsparse top-?k\b",
        I,
    ),
]

# ---- D9 aggregation ---------------------------------------------------------------------------
D9 = [
    re.compile(
        r"\btoken[- ]mean\b|\bmacro[- ]mean\b|\bmean of per-\w+|\bper-(?:token|sequence|window|document) mean\b|"
        r"\b\d{2}(?:\.\d)?% CI\b|\bconfidence interval|\bbootstrap\b|\bstandard error|\bSEM\b|standard deviation|"
        r"\beffective sample size\b|"
        r"\bp(?:50|90|95|99|99\.9)\b|\bpercentiles?\b|\bmedian\b|\b(?:averaged|mean|average) over\b",
        I,
    ),
]

# ---- flags --------------------------------------------------------------------------------------
EVAL_FROM_CALIBRATION = [
    re.compile(
        r"(?:KLD|KL[- ]div\w*|\beval\w*|measur\w*|\bscor\w*|\btest\s+(?:set|file|text))[^.]{0,80}?"
        r"(?:same|drawn from|generated from|taken from|sampled from|subset of|part of|portion of)[^.]{0,40}?"
        r"(?:calibration|imatrix)",
        I,
    ),
    re.compile(
        r"(?:calibration|imatrix)[^.]{0,80}?(?:(?:re-?)?used|doubles?)\s+(?:as|for)\s+(?:the\s+)?(?:eval|KLD|test)|"
        r"(?:imatrix|calibration)[^.]{0,40}mixed into (?:the )?(?:eval|test)",
        I,
    ),
]
SEPARATION = re.compile(r"\b(?:not|no|separate|exclud\w*|disjoint|without|held[- ]out)\b", I)

NAMES = {
    1: "reference checkpoint",
    2: "runtime environment",
    3: "evaluation text",
    4: "calibration data",
    5: "context length",
    6: "sampled positions",
    7: "KL direction",
    8: "vocabulary truncation",
    9: "aggregation",
}


@dataclass(frozen=True)
class Evidence:
    """What the card says about one disclosure. ``offset`` is a body offset (None when missing)."""

    disclosure: int
    status: Status
    offset: int | None = None
    text: str = ""  # the matched text, or the tool default when inferred
    tool: str | None = None


@dataclass(frozen=True)
class Flag:
    kind: str  # "quantized-reference" | "eval-from-calibration"
    offset: int
    text: str


@dataclass
class CardEvidence:
    disclosures: dict[int, Evidence]
    flags: list[Flag] = field(default_factory=list)
    tool: Tool | None = None


# A veto reads the match's sentence, clipped to this many characters either side: a pasted page
# without full stops is one "sentence", and reading all of it per match would be quadratic.
SENTENCE_CLIP = 1000


def _sentence(doc: Doc, m: re.Match[str]) -> str:
    s, e = doc.sentence_at(m.start())
    return doc.text[max(s, m.start() - SENTENCE_CLIP) : min(e, m.end() + SENTENCE_CLIP)]


def _first(doc: Doc, patterns: list[re.Pattern[str]], veto: Any = None) -> re.Match[str] | None:
    """The earliest match of any pattern whose sentence the veto does not reject."""
    best: re.Match[str] | None = None
    for pattern in patterns:
        for m in finditer(pattern, doc.scanned):
            if best is not None and m.start() >= best.start():
                break
            if veto is not None and veto(_sentence(doc, m), m):
                continue
            best = m
            break
    return best


def _d4(doc: Doc) -> re.Match[str] | None:
    def veto(sentence: str, m: re.Match[str]) -> bool:
        if doc.text[max(0, m.start() - 2) : m.start()] == "--" or HYPOTHETICAL.search(sentence):
            return True
        if m.group(0).lower() == "calibrated" and not CALIBRATED_ON.match(doc.text, m.end()):
            return True
        return bool(NEGATED.search(sentence)) or not DATASET_HINT.search(sentence)

    none = _first(doc, [D4_NONE])
    named = _first(doc, [D4_WORD], veto)
    found = [m for m in (none, named) if m is not None]
    return min(found, key=lambda m: m.start()) if found else None


def _d7(doc: Doc) -> re.Match[str] | None:
    m = _first(doc, D7, lambda s, _: bool(TRAINING_CONTEXT.search(s)))
    if m is not None:
        return m
    arrows = list(finditer(ARROW, doc.scanned))  # "(q→o)" next to "(o→q)": both directions, labelled
    pairs = {(a.group(1), a.group(2)) for a in arrows}
    both = [a for a in arrows if (a.group(2), a.group(1)) in pairs]
    return both[0] if both else None


def assess(doc: Doc, claims: list[Claim], metadata: dict[str, Any] | None = None) -> CardEvidence:
    """Disclosure evidence for a card whose body is ``doc`` and whose KLD claims are ``claims``."""
    calib_only = lambda s, _m: _calibration_only(s) or bool(HYPOTHETICAL.search(s))  # noqa: E731
    found: dict[int, re.Match[str] | None] = {
        1: _first(doc, D1),
        2: _first(doc, D2, lambda s, _m: bool(QUANTIZER.search(s))),
        3: _first(doc, D3, lambda s, m: _not_eval_text(doc, s, m)),
        4: _d4(doc),
        5: _first(doc, D5, calib_only),
        6: _first(doc, D6, calib_only),
        7: _d7(doc),
        8: _first(doc, D8),
        9: _first(doc, D9, lambda s, _m: bool(TRAINING_CONTEXT.search(s))),
    }
    result: dict[int, Evidence] = {}
    for n, m in found.items():
        if m is not None:
            result[n] = Evidence(n, "stated", m.start(), m.group(0).strip())
    labelled = next((c for c in claims if c.labelled), None)
    if labelled is not None and (9 not in result or labelled.offset < (result[9].offset or 0)):
        result[9] = Evidence(9, "stated", labelled.offset, labelled.text)
    if 4 not in result and metadata and _metadata_calibration(metadata):
        result[4] = Evidence(4, "stated", None, "front matter datasets: " + _metadata_calibration(metadata))
    tool = recognise(doc.scanned)
    if tool is not None:
        for n, default in defaults(tool).items():
            if n not in result:
                result[n] = Evidence(n, "inferred", tool.offset, default, tool.name)
    for n in NAMES:
        result.setdefault(n, Evidence(n, "missing"))
    return CardEvidence(dict(sorted(result.items())), _flags(doc), tool)


def _metadata_calibration(metadata: dict[str, Any]) -> str:
    datasets = metadata.get("datasets")
    items = datasets if isinstance(datasets, list) else [datasets]
    hits = [str(d) for d in items if isinstance(d, str) and re.search(r"calib|imatrix", d, re.I)]
    return ", ".join(hits)


DATASET_NAME = re.compile(r"(?<![\w.\-/])[\w.\-]+/(?P<short>[\w.\-]*[A-Za-z][\w.\-]*)|(?<![\w.\-])[\w\-]+\.(?:txt|parquet|jsonl?)\b")


MAX_DATASET_NAMES = 32
TRAIN_SPLIT = re.compile(r"\btrain(?:ing)?\b|wiki\.train", I)
HELD_OUT_SPLIT = re.compile(r"\b(?:test|validation|valid|val|dev|held-out)\b|wiki\.test", I)


def _shared_dataset(doc: Doc) -> list[Flag]:
    """Eval text named with the same dataset as the calibration ("calibration: 512 samples of
    NeelNanda/pile-10k" and "KLD over 512 pile-10k samples")."""
    names: set[str] = set()
    sentences = [doc.text[s:e] for s, e in doc.sentences]
    train_split = False  # "imatrix from Salesforce/wikitext train" vs an eval on its test split
    for sentence in sentences:
        if CALIBRATION.search(sentence):
            train_split |= bool(TRAIN_SPLIT.search(sentence))
            for m in DATASET_NAME.finditer(sentence):
                names.add(m.group(0).lower().rstrip("."))
                short = (m.group("short") or "").rstrip(".")
                if len(short) >= 4:
                    names.add(short.lower())
    if not names:
        return []
    # An alternation is tried name by name at each position: cap it (real cards name a few datasets)
    kept = sorted(names, key=len, reverse=True)[:MAX_DATASET_NAMES]
    found = re.compile("|".join(rf"(?<![\w.\-/]){re.escape(n)}(?![\w\-])" for n in kept), I)
    out = []
    for (s, _e), sentence in zip(doc.sentences, sentences):
        if CALIBRATION.search(sentence) or SEPARATION.search(sentence) or not EVAL_WORDS.search(sentence):
            continue
        if train_split and HELD_OUT_SPLIT.search(sentence):
            continue
        m = found.search(sentence)
        if m is not None:
            out.append(Flag("eval-from-calibration", s + m.start(), sentence.strip()))
    return out


def _flags(doc: Doc) -> list[Flag]:
    flags: list[Flag] = []
    for pattern in D1:
        for m in finditer(pattern, doc.scanned):
            q = QUANTIZED_REF.search(m.group("ref"))
            if q is not None:
                flags.append(Flag("quantized-reference", m.start(), m.group(0).strip()))
    for pattern in EVAL_FROM_CALIBRATION:
        for m in finditer(pattern, doc.scanned):
            if not SEPARATION.search(_sentence(doc, m)):
                flags.append(Flag("eval-from-calibration", m.start(), m.group(0).strip()))
    flags.extend(_shared_dataset(doc))
    flags.sort(key=lambda f: f.offset)
    seen: set[tuple[str, int]] = set()
    unique = []
    for f in flags:  # one flag per kind per line of text
        key = (f.kind, doc.line_index(f.offset))
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique
