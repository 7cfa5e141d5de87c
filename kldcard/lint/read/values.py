"""The normalised value a piece of evidence carries, per disclosure (keys: :data:`kldcard.lint.reading.VALUE_KEYS`).

Each disclosure reads the evidence's own text (the matched span) and, for what a span rarely holds
by itself (a pinned revision next to a repo id, a count next to "chunks"), the rest of its sentence
(clipped by the caller). Values are as the card writes them, except the canonical names
below (dtypes upper case, engines by their project name, directions as words).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from typing import Any

from kldcard.lint.evidence_patterns import D4_NONE
from kldcard.lint.read.hardware_names import HARDWARE, machine_name
from kldcard.lint.read import calibration as calibration_forms
from kldcard.lint.read import calibration_data
from kldcard.lint.read import context as context_forms
from kldcard.lint.read import direction as more_direction
from kldcard.lint.read import engine_names
from kldcard.lint.read import percent_labels
from kldcard.lint.read import eval_text as eval_text_forms
from kldcard.lint.read import positions as position_forms
from kldcard.lint.read import runtime as more_runtime
from kldcard.lint.read import vocabulary as more_vocabulary
from kldcard.lint.read.terms import STATISTIC_WORDS
from kldcard.lint.read.tools import llama_perplexity as lp
from kldcard.lint.read.numbers import COMMA_THOUSANDS, KLD_VALUE, parse_int  # noqa: F401  (KLD_VALUE: read by the reader)

I = re.IGNORECASE | re.ASCII

# ---- D1 ------------------------------------------------------------------------------------------
DTYPES = {  # as written (folded) -> canonical
    "bf16": "BF16", "bfloat16": "BF16", "fp16": "F16", "f16": "F16", "float16": "F16", "half": "F16",
    "fp32": "F32", "f32": "F32", "float32": "F32", "fp8": "FP8", "f8": "FP8", "int8": "INT8", "q8_0": "Q8_0",
    "q6_k": "Q6_K", "nvfp4": "NVFP4", "mxfp4": "MXFP4",
}
DTYPE = re.compile(r"(?<![\w.])(" + "|".join(sorted(DTYPES, key=len, reverse=True)) + r")(?![\w])", I)
UNQUANTIZED = re.compile(r"(?<![\w.])(bf16|bfloat16|fp16|f16|float16|fp32|f32|float32)(?![\w])", I)
BPW = re.compile(r"(?<![\w.])(\d+(?:\.\d+)?)\s*bpw\b", I)
# "org/name" as the Hub spells repo ids (not "t/s", "KL/KLD", "PPL(Q)/PPL(base)"); or a Hub URL
REPO = re.compile(
    r"(?:https?://)?(?:huggingface\.co/|hf\.co/)?(?<![\w.\-/])((?=[\w.\-]*[A-Za-z])[A-Za-z0-9][\w.\-]{1,95}/(?=[\w.\-]*[A-Za-z])[\w.\-]{2,95})(?![\w\-/(])",
)
NOT_REPO = re.compile(r"^(?:t/s|tok/s|KL/\w+|\w+/s|[A-Z0-9]{1,5}/[A-Z0-9]{1,5}|and/or|w/o|n/a|[\w.]+/(?:sec|token|tokens))$", I)
REVISION = re.compile(
    r"@([0-9a-f]{7,40})\b|\b(?:revision|rev|commit|sha)\s*[:=]?\s*`?([0-9a-f]{7,40})\b|\bsha256[:\s]+`?([0-9a-f]{64})\b", I
)
ORIGINAL = re.compile(r"\b(?:original|unquantized|full[- ]precision|teacher|base model)\b", I)

# ---- D2 ------------------------------------------------------------------------------------------
# an engine as written (kldcard.lint.read.engine_names: one table for the patterns, this value and read.runtime)
ENGINE = re.compile(r"(?<![\w.\-])(" + engine_names.alternation(in_patterns=True) + r")(?![\w\-])", I)
VERSION = re.compile(
    # (as evidence_patterns.VERSION: not a measured number such as "0.03"; a commit hash is a version)
    r"(?<![\w.])((?:v\d+\.\d+(?:\.\d+)?|0\.\d{1,3}\.\d+|[1-9]\d*\.\d{1,3}(?:\.\d+)?)(?:rc\d+|\.post\d+|\.\w+)?)\b(?!\s*(?:GB|GiB|MB|%|bpw|B\b))|"
    r"(?:@|(?<=[\s(`]))((?=[0-9a-f]{0,39}[a-f])(?=[0-9a-f]{0,39}\d)[0-9a-f]{7,40})\b|\b(b\d{3,5})\b|\bbuild\s*:?\s*(\d+(?:\s*\([0-9a-f]{6,}\))?)|"
    r"\brelease\s+(b?\d+)|\b(main-b\d+\S*)|\bcommit\s+([0-9a-f]{7,40})",
    I,
)
VERSION_REACH = 40  # characters after an engine's name in which its version may stand
BACKENDS = {"cuda": "CUDA", "metal": "Metal", "rocm": "ROCm", "hip": "ROCm", "vulkan": "Vulkan", "cpu": "CPU", "sycl": "SYCL"}
BACKEND = re.compile(r"\b(" + "|".join(BACKENDS) + r")\b", I)

# ---- D3 ------------------------------------------------------------------------------------------
TEXT_NAMES = {  # folded prefix -> canonical corpus name
    "wikitext-2-raw-v1": "wikitext-2-raw-v1", "wiki.test.raw": "wiki.test.raw", "wikitext-103": "wikitext-103", "wikitext": "wikitext-2",
    "wiki.test": "wiki.test.raw", "wt2": "wikitext-2", "wiki2": "wikitext-2", "c4": "c4", "flores": "FLORES-200",
    "sharegpt": "ShareGPT", "fineweb": "FineWeb", "pg-19": "pg-19", "pg19": "pg-19",
}
TEXT_NAME = re.compile(r"(?<![\w.\-])(" + "|".join(re.escape(k) for k in sorted(TEXT_NAMES, key=len, reverse=True)) + r")", I)
# Hub dataset configs whose name says which dataset they belong to (with a split they are a source)
CONFIGS = {"wikitext-2-raw-v1": "Salesforce/wikitext"}
CONFIG_SPLIT = re.compile(
    r"(?<![\w.\-])(" + "|".join(map(re.escape, CONFIGS)) + r")[\s,(/:]+(?:split\s*[=:]?\s*)?(test|validation|train)\b", I
)
URL = re.compile(r"https?://[^\s)\]>`'\"]{4,300}", I)
SHA256 = re.compile(r"\b[0-9a-f]{64}\b", I)
TOKENS = re.compile(r"(?<![\w.,])(~?\d[\d,. \u00a0\u202f]*\s*[kKM]?)\s*tokens\b", I)
FILE = re.compile(r"(?<![\w.\-/])([\w.\-]+\.(?:txt|raw|jsonl?|parquet|csv))\b", I)

# ---- D5/D6 ---------------------------------------------------------------------------------------
N_CTX = re.compile(
    r"(?:-c|--ctx-size|--context|n_ctx|ctx[_ ]?(?:size)?|context(?:\s+length|\s+size|\s+window)?(?:\s+of)?|max_seq\w*|seq(?:uence)?[_ ]?len(?:gth)?)"
    r"\s*[=:]?\s*(\d[\d,]{1,7})\b|(?:context[_ ]?(?:length|len)|--max-seq\S*)\s*[=: ]\s*(\d{3,6})\b|\bcontext(\d{3,6})\b|"
    r"(?<![\w.,])(\d{1,3}\s*[kK])\s*(?:-token\s+)?(?:context|ctx)\b|(\d[\d,]{1,7})[- ](?:token|tok)s?\s+(?:contexts?|windows?|rows?|chunks?|sequences?|segments?)\b|"
    r"(\d{3,6})\s*ctx\b|\bctx(\d{3,6})\b|(?:windows?|rows?|chunks?|sequences?|contexts?)\s+of\s+(\d[\d,]{2,7})(?:\s+tokens|(?![.,]?\d)(?!\s*[A-Za-z%]))|"
    r"[×x]\s*(\d{3,6})\s*tokens|" + context_forms.GENERATED_BEFORE + r"(\d[\d,]{2,7})\s+tokens\s+per\s+" + context_forms.PER_UNIT,
    I,
)
# (a count is an integer: not the "3" of "3.5K-token sequences")
CHUNKS = re.compile(
    r"--chunks\s+(\d+)|(?<![\w.,])(" + COMMA_THOUSANDS + r"|\d+)(?![kKM][-\s]|[\d,]*\d|\.\d)\s*(?:[×x]\s*\d{3,6}[- ]token\s+|(?:[\w.\-]{1,40}\s+){0,2}?)(?:chunks?|rows|windows|sequences)\b|"
    r"\b(two|three|four|five|six|eight|ten|twenty)\s+chunks\b|(\d+)\s+rows?\s*[×x,]",
    I,
)
STRIDE = re.compile(r"\bstride\s*[=:]?\s*(\d{2,6})\b|(\d{2,6})\s*stride\b", I)
WORDS = {"two": 2, "three": 3, "four": 4, "five": 5, "six": 6, "eight": 8, "ten": 10, "twenty": 20}
POS_COUNT = re.compile(r"(?<![\w.,])(\d[\d,. \u00a0\u202f]*\s*[kKM]?)\s+(?:total\s+|scored\s+)?(?:token\s+)?positions\b", I)
POS_SCHEMES = [
    ("all", re.compile(r"\ball positions\b|\bevery position\b|\ball tokens\b", I)),
    ("second-half", re.compile(r"\bsecond half of each\b", I)),
    ("min-left-context", re.compile(r"\bleft context\b|\bpositions?\s+(?:with|after|beyond)\b", I)),
    ("prefill-only", re.compile(r"\bprefill only\b|\bprompt tokens only\b|\bprompt[- ]only\b", I)),
    ("response-only", re.compile(r"\bresponse[- ]only\b", I)),
]

# ---- D7 ------------------------------------------------------------------------------------------
REF_SIDE = re.compile(r"^\s*(?:P_?)?\{?(?:ref\w*|base\w*|bf16|fp16|f16|fp32|f32|orig\w*|teacher|p|full\w*|o)\b", I)
CAND_SIDE = re.compile(r"^\s*(?:Q_?)?\{?(?:q|quant\w*|cand\w*|test|student|model|new)\b", I)
KL_ARGS = re.compile(r"KL(?:[- ]?div\w*)?\s*\(\s*([^()‖|∥,\n]{1,40}?)\s*(?:‖|\|\||∥|,)\s*([^()\n]{1,40}?)\)", I)
UNITS = re.compile(r"\b(nats?|bits?)\b", I)


def _int(text: str | None) -> int | None:
    if not text:
        return None
    if text.lower() in WORDS:
        return WORDS[text.lower()]
    return parse_int(text)


def _first_group(m: re.Match[str]) -> str:
    return next(g for g in m.groups() if g)


def repos(text: str) -> list[str]:
    return [m.group(1).rstrip(".") for m in REPO.finditer(text) if not NOT_REPO.match(m.group(1))]


def reference(span: str, around: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    found = repos(span) or [f for f in FILE.findall(span)]
    if found:
        out["repo"] = found[0]
    d = DTYPE.search(span) or BPW.search(span)
    if d is None and found:  # "Reference: org/model at revision abc, BF16 safetensors": the sentence's dtype
        d = UNQUANTIZED.search(around)
    if d is not None:
        out["dtype"] = DTYPES.get(d.group(1).lower(), f"{d.group(1)}bpw" if d.re is BPW.compiled else d.group(1).upper())
        out["quantized"] = out["dtype"] not in ("BF16", "F16", "F32")
    elif ORIGINAL.search(span):
        out["dtype"] = None  # "the original": unquantized, precision unstated
        out["quantized"] = False
    r = REVISION.search(around)
    if r is not None:
        out["revision"] = _first_group(r)
    return {k: v for k, v in out.items() if v is not None}


def runtime(span: str, around: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    e = ENGINE.search(span) or ENGINE.search(around)
    if e is not None:
        out["engine"] = engine_names.canonical(e.group(1))
        if out["engine"] == "llama.cpp" and e.group(1).lower().startswith("llama-") and lp.IK_LLAMA.search(around):
            out["engine"] = "ik_llama.cpp"  # the fork ships the same tools: "ik_llama's llama-perplexity"
        # the version follows the engine's name ("llama.cpp b6510", "vLLM 0.9.1"): a number elsewhere
        # in the sentence is more likely the KLD itself ("a KLD of 0.0231, measured with llama.cpp")
        named = ENGINE.search(around)
        v = VERSION.search(span, e.end(), e.end() + VERSION_REACH)
        if v is None and named is not None:
            v = VERSION.search(around, named.end(), named.end() + VERSION_REACH)
        if v is not None:
            out["version"] = _first_group(v)
    elif re.search(r"\bbuild\b", span, I):
        v = VERSION.search(span)
        if v is not None:
            out["engine"], out["version"] = "llama.cpp", _first_group(v)
    if "engine" not in out and (named_engine := more_runtime.engine(span)) is not None:
        out["engine"] = named_engine  # by its tool or project name ("llama-perplexity", "Acme.cpp v0.3")
        v = VERSION.search(span)
        if v is not None:
            out["version"] = _first_group(v)
    h = re.search(HARDWARE, around, I)
    if h is not None:  # the machine's name, without the article or count a spelling may begin with ("an RTX 4090")
        out["device"] = machine_name(h.group(0))
    b = BACKEND.search(around)
    if b is not None:
        out["backend"] = BACKENDS[b.group(1).lower()]
    return out


def _text_name(text: str) -> str | None:
    m = TEXT_NAME.search(text)
    return TEXT_NAMES[m.group(1).lower()] if m else None


def text_value(span: str, around: str) -> dict[str, Any]:
    out: dict[str, Any] = dict(eval_text_forms.read(span))  # a Hub dataset id or link, a corpus by name
    f = FILE.search(span)
    name = _text_name(span) or (f.group(1) if f else None) or _text_name(around) or eval_text_forms.read(around).get("name")
    if name or not eval_text_forms.described(span):  # a text described, not named: the reading asks for its name
        out.setdefault("name", name or span.strip()[:80])
    split = CONFIG_SPLIT.search(around)
    if split is not None:  # a dataset config and its split name the source ("wikitext-2-raw-v1 test split")
        config = split.group(1).lower()
        out["source"] = f"{CONFIGS[config]} {config} {split.group(2).lower()}"
    src = URL.search(around)
    found = [r for r in repos(around) if "wiki" in r.lower() or "dataset" in around.lower() or r.lower().endswith(("text", "set", "data"))]
    if src is not None and "source" not in out:
        out["source"] = src.group(0).rstrip(".,;")
    elif found and "source" not in out:
        out["source"] = found[0]
    h = SHA256.search(around)
    if h is not None:
        out["sha256"] = h.group(0).lower()
    t = TOKENS.search(around)
    if t is not None:
        n = parse_int(t.group(1).lstrip("~"))
        if n and n >= 1000:  # fewer is a window length ("512 tokens"), not the size of a text
            out["tokens"] = n
    return out


def calibration(span: str, around: str) -> dict[str, Any]:
    if D4_NONE.search(span) or calibration_data.NONE.search(span):
        return {"none": True}
    out: dict[str, Any] = {}
    hit = calibration_forms.data_ids(around, repos(around)) or FILE.findall(around)  # a model's id is not its data
    if hit:
        out["dataset"] = hit[0]
    else:
        named = re.search(r"\b(wiki\.train|wikitext|pile-val|ultrachat|c4|groups_merged|calibration_datav\d\w*|default|built-in)\b", around, I)
        if named:
            out["dataset"] = named.group(1)
    size = re.search(r"(?<![\w.,])(\d[\d,.*]*\s*[KkM]?\s*(?:tokens?|samples|rows|chunks))\b|(?<!\d)(\d+\*\d+)", around, I)
    if size is not None:
        out["size"] = _first_group(size).strip()
    return out


def context(span: str, around: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for src in (span, around):
        m = N_CTX.search(src)
        if m is not None and "n_ctx" not in out:
            n = _int(_first_group(m))
            if n:
                out["n_ctx"] = context_forms.kilo(n, _first_group(m))
        for c in CHUNKS.finditer(src) if "chunks" not in out else ():
            n = _int(_first_group(c))
            if n and n != out.get("n_ctx") and " per " not in c.group(0):  # "512 tokens per chunk" is a length
                out["chunks"] = n
                break
        s = STRIDE.search(src)
        if s is not None and "stride" not in out:
            out["stride"] = _int(_first_group(s))
    for k, v in context_forms.read(span).items():  # "64 chunks × 512", "`c512`", "上下文长度 4096"
        out.setdefault(k, v)
    return out


def positions(span: str, around: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    scheme = next((name for name, p in POS_SCHEMES if p.search(span)), None)
    if scheme is not None:
        out["scheme"] = scheme
    c = POS_COUNT.search(span) or POS_COUNT.search(around)
    if c is not None:
        n = parse_int(c.group(1))
        if n:
            out["count"] = n
    for k, v in position_forms.read(span).items():  # "51,175-position", "the last token", "64 generated steps"
        out.setdefault(k, v)
    return out  # a chunk count alone says how many windows were scored, not which positions: {}


def direction(span: str, around: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    low = span.lower()
    if "jsd" in low or "jensen" in low:
        out["direction"] = "js"
    elif "reverse" in low:
        out["direction"] = "reverse"
    elif "forward" in low or "teacher" in low or "reference-to" in low or "reference to" in low:
        out["direction"] = "forward"
    elif "kld_direction" in low:
        out["direction"] = "stated"
    else:
        m = KL_ARGS.search(span)
        if m is not None:
            first, second = m.group(1), m.group(2)
            comma = "," in m.group(0) and "‖" not in m.group(0) and "||" not in m.group(0)
            if comma:  # exllamav3 "KL(A,B)" treats B as the reference
                first, second = second, first
            if REF_SIDE.match(first) or CAND_SIDE.match(second):
                out["direction"] = "forward"
            elif REF_SIDE.match(second) or CAND_SIDE.match(first):
                out["direction"] = "reverse"
            else:
                out["direction"] = "as-written"
        elif "→" in span or "->" in span:
            out["direction"] = "both"
        else:  # a direction statement the words above do not classify: given as the card writes it
            out["direction"] = "as-written"
    if out["direction"] in ("as-written", "both"):  # the other notations, roles, code and languages (read.direction)
        more = more_direction.classify(span)
        if more is not None and more != "as-written":
            out["direction"] = more
    u = UNITS.search(around)
    if u is not None:
        out["unit"] = "bits" if u.group(1).lower().startswith("bit") else "nats"
    return out


def vocabulary(span: str, around: str) -> dict[str, Any]:
    more = more_vocabulary.value(span)  # the statements read.vocabulary finds
    if more is not None:
        return more
    low = span.lower()
    if "floor" in low or "-nat" in low:
        m = re.search(r"(\d{2})-nat", span)
        return {"scheme": "floor", **({"floor": int(m.group(1))} if m else {})}
    m = re.search(r"top[-_ ]?(\d+)|logprobs\w*\s*=\s*(\d+)|top_logprobs\w*\s*(\d+)", span, I)
    if m is not None and "no top" not in low:
        return {"scheme": "top-k", "k": int(_first_group(m))}
    if "top-k" in low.replace("top_k", "top-k") and "no top" not in low:
        return {"scheme": "top-k"}
    return {"scheme": "full"}


# a percentile as labelled: "p99", "99th percentile", "q99", or a percentage written as a label (read.percent_labels)
PERCENTILE = re.compile(r"\bp(\d{1,2}(?:\.\d+)?)\b|\b(\d{1,2}(?:\.\d+)?)(?:st|nd|rd|th)?\s*-?\s*percentile|\bq(\d{2}(?:\.\d)?)\b", I)
STATISTICS = [
    # Chinese and Japanese write no word boundary: their words match inside a run of characters ("前者的中位 KLD")
    ("median", re.compile(r"\bmedian\b|(?<![^\W\d_])(?:" + "|".join(STATISTIC_WORDS["median"]) + r")(?![^\W\d_])|中位|中央値", I)),
    # the mean of a worst tail ("CVaR 1%", "worst-5% token KL", "cvar95"): its own statistic, neither a percentile
    # nor the mean of all positions
    ("cvar", re.compile(r"(?<![A-Za-z])cvar|\bworst[- ]?\d{1,2}(?:\.\d+)?\s?%|\bexpected shortfall\b", I)),
    ("max", re.compile(r"(?<![A-Za-z])max(?:imum)?(?![A-Za-z])|\bworst[- ]case\b|\bpeak\b|最大", I)),  # also in identifiers: "max_kl_div"
    ("min", re.compile(r"(?<![A-Za-z])min(?:imum)?(?![A-Za-z])", I)),
    ("mean", re.compile(r"(?<![A-Za-z])means?(?![A-Za-z])|\bbatchmean\b|\bexpected value\b|\bin expectation\b|\baverage[ds]?\b|(?<![A-Za-z])avg(?![A-Za-z])|μ|token[- ]mean|(?<![^\W\d_])(?:" + "|".join(STATISTIC_WORDS["mean"]) + r")(?![^\W\d_])|平均|均值", I)),
]


def _percentile(text: str) -> str | None:
    m = PERCENTILE.search(text)
    value = _first_group(m) if m is not None else percent_labels.level(text)
    if value is None:
        return None
    if value.endswith(".0"):
        value = value[:-2]
    return None if value == "50" else f"p{value}"  # the 50th percentile is the median, said so below


UNCERTAINTY = re.compile(
    r"\b\d{2}(?:\.\d)?% CI\b|\bconfidence interval|\b(?:block |cluster |window )?bootstrap\b|\bstandard error|\bSEM\b|"
    r"standard deviation|\beffective sample size\b|±",
    I,
)


def statistic(text: str) -> str | None:
    """The statistic a label names: "mean", "median", "max", "min", "cvar", "pNN" (joined with "+" when several)."""
    found = [name for name, p in STATISTICS if p.search(text)]
    pct = _percentile(text)
    if pct is not None:
        found.insert(0, pct)
    return found[0] if len(found) == 1 else ("+".join(found) if found else None)


def aggregation(span: str, around: str) -> dict[str, Any]:
    out: dict[str, Any] = {}
    s = statistic(span) or statistic(around)
    if s is not None:
        out["statistic"] = s
    u = UNCERTAINTY.search(span)
    if u is not None and u.group(0) != "±":
        out["uncertainty"] = u.group(0).strip()
    return out


READERS = {1: reference, 2: runtime, 3: text_value, 4: calibration, 5: context, 6: positions, 7: direction, 8: vocabulary, 9: aggregation}


def value(disclosure: int, span: str, around: str) -> dict[str, Any]:
    """The value the evidence ``span`` (in its sentence, ``around``) carries for ``disclosure``
    (keys absent: not read)."""
    try:
        return READERS[disclosure](span, around)
    except (ValueError, IndexError, StopIteration):  # a value that does not parse is not read
        return {}
