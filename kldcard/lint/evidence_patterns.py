"""The disclosure patterns of :mod:`kldcard.lint.evidence` (D1-D9 and the two flags), kept apart so
that the module stays readable; see shared/reference/disclosure-patterns.md §2 for the phrasings."""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read import context, engine_names, eval_text, eval_text_units, hardware_names, numbers, positions, run_verbs
from kldcard.lint.read.numbers import COMMA_THOUSANDS
from kldcard.lint.read.terms import (
    FULL_VOCABULARY,
    KL_NAME,
    KL_WORD,
    POSITION_WORDS,
    REFERENCE_AFTER,
    REFERENCE_NOUNS,
    STATISTIC_WORDS,
    VERSUS_WORDS,
    alternation,
)

# ASCII: case-insensitive matching with Unicode case folding is ~3x slower, and every keyword here
# is ASCII (μ, ‖, × and Δ are matched literally either way).
I = re.IGNORECASE | re.ASCII
M = re.IGNORECASE | re.MULTILINE | re.ASCII

# ---- D1 reference -----------------------------------------------------------------------------
REF_TOKEN = (
    r"(?:BF16|FP16|F16|F32|FP32|bfloat16|float16|float32|FP8|F8|INT8|Q8_0|Q6_K|original|unquantized|"
    r"full[- ]precision|teacher|\d+(?:\.\d+)?\s*bpw|"
    # the unchanged side by what it lacks or how exactly it computes ("vs the uncompressed run", "against the exact
    # oracle", "vs the pre-edit model", "KL to FP64"): a role, read as a reference named without its repo (incomplete)
    r"FP64|F64|float64|uncompressed|unpruned|unmodified|pre-edit|exact|oracle|"
    # a repo id: letters on both sides of one slash ("0.33/0.13" is two values, "attention/SnapKV/H2O" a list)
    r"(?=[\w.\-]*[A-Za-z])[\w.\-]+/(?=[\w.\-]*[A-Za-z])[\w.\-]+(?![\w.\-]*/))"
)
REF_NOUN = r"(?:\s+(?:model|checkpoint|weights|GGUF|baseline|original|reference|safetensors|quant|oracle|run|logits))?"
REF_PHRASE = rf"(?P<ref>(?:the\s+|a\s+|an\s+|our\s+)?(?:[\w.\-]+\s+){{0,3}}?{REF_TOKEN}{REF_NOUN})"
# a count out of a total ("15/15", "24 / 100", read.numbers.OUT_OF): a score, never a model's name; followed by no
# word, point or hyphen ("4/8-bit" is a mixed precision)
OUT_OF = numbers.OUT_OF + r"(?![\w./\-])"
D1 = [
    re.compile(
        r"\b(?:vs\.?|versus|against|compared (?:to|with)|relative to|drifts? from|differs? from|deviates? from|close\w* (?:is it )?to|agree[sd]? with|"
        r"(?:fidelity|faithful\w*|closeness) to|compar\w*\s+(?:(?:mean|median)\s+)?" + KL_NAME + r"\s+(?:to|with))\s+"
        + REF_PHRASE,
        I,
    ),
    re.compile(r"\b(?:between|compared)\s+[^.;]{0,80}?\s+(?:and|with|to|against)\s+" + REF_PHRASE, I),
    re.compile(r"\b(?:D_?)?KL\s*\(\s*(?:p|P|π)?_?\{?(?P<ref>bf16|fp16|f16|fp32|f32|fp8|teacher|base|orig\w*)\b", I),
    # "Reference: x", "- **Reference**: `x`", "**Baseline:** x", and a labelled table row "| Reference | x |"; a distillation
    # run's "Teacher: x" is what its KL is taken against (arle OPD report "- Teacher: frozen Qwen3-0.6B checkpoint"; sushi
    # quality doc "teacher = the same pack ...")
    # (not a record of the baseline's own values: "Q4_K baseline: KL=0.0935, top-P=83.56%": a metric assigned a value;
    # nor a git base, a commit the code branched from: "Fork base: `30da599...`", "Construction base: `6483963...`"
    # in holdout bonsai2 and holdout15 b12x_pr342, two authors; nor the baseline's own score as a count out of a total,
    # "**Baseline:** 15/15 passed", "| baseline | 24/100 |": holdout16/a mlx_quality_suite's NIAH runs and holdout7/d
    # gemma4_abliteration's refusal table, two authors, both D1 M)
    re.compile(r"\b(?:reference|baseline|base(?![\s*]*:[\s*]*`?(?=[a-f]*\d)[0-9a-f]{7,40}\b)|teacher)\s*(?:model|checkpoint)?\s*\**\s*:\s*\**\s*(?![\s*]*[\w\-]{1,12}\s*=\s*[\d.])"
               r"(?![\s*]*" + OUT_OF + r")(?P<ref>(?:[^\n.;,]|\.(?=\w)){2,120})", I),
    re.compile(r"^\|?[ \t]*\**(?:reference|baseline)(?:\s+(?:model|checkpoint))?\**[ \t]*\|(?![ \t*]*" + OUT_OF + r"[ \t*]*\|)[ \t]*(?P<ref>[^|\n]{2,120})\|", M),
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
        r"(?:" + KL_WORD + r"\s+)?(?:baseline|reference)\b",
        I,
    ),
    re.compile(r"\bKL(?:[- ]?div(?:ergence)?)?\s*\(\s*(?:[\w.\-]{1,20}\s*,\s*)?(?P<ref>BF16|FP16|F16|FP32|F32|bfloat16|orig\w*)\s*[,)]", I),
    re.compile(r"\bfull[- ](?P<ref>(?:BF16|FP16|F16|bfloat16|precision)\s+(?:model|weights|checkpoint|GGUF|safetensors))\b", I),
    re.compile(r"\bbaseline\s+`?(?P<ref>(?:BF16|FP16|F16|FP32|F32|bfloat16|float16)\b(?:`?/`?(?:BF16|FP16|F16))?)", I),
    # a table's own reference row: "| original | 751 | ... | — |", "Original | 597.1 GB | ...", "| f16 | None | ... | - |"
    re.compile(r"^\|?[ \t]*\**(?P<ref>original|unquantized)\**[ \t]*\|", M),
    re.compile(r"^\|?[ \t]*\**(?P<ref>BF16|FP16|F16|FP32|F32)\**[ \t]*\|[^\n]*?\|[ \t]*[-—–][ \t]*\|", M),
    # the reference by its role, after a comparison word: "against a non-NCCL reference", "from the original",
    # "against the parent model", "against that engine's own fp/bf16 reference" (not "the original paper")
    re.compile(
        r"\b(?:vs\.?|versus|against|compared (?:to|with)|relative to|from)\s+(?P<ref>(?:the|a|an|our|its|their|that|this|each)\s+"
        r"(?:[\w.\-/'*`]+\s+){0,5}?(?:reference|original|parent|base model|unquantized model|predecessor)s?)(?![\w-])"
        r"(?!\s+(?:paper|post|discussion|PR|issue|article|author|repo|code|thread|idea|question|text|prompt)s?\b)",
        I,
    ),
    # the reference first in a comparison or a KL's arguments: "Comparing trained FP32 model vs QAT model",
    # "comparing the BF16 checkpoint with ...", "KL(llama.cpp BF16 || candidate)"
    re.compile(
        r"\bcompar(?:e|es|ed|ing)\s+(?P<ref>(?:the\s+)?(?:[\w.\-]+\s+){0,3}?(?:BF16|FP16|F16|FP32|F32|bfloat16|float16|float32|"
        r"original|unquantized|full[- ]precision)(?:\s+(?:model|checkpoint|weights|outputs?|logits))?)\s+(?:vs\.?|versus|against|with|to|and)\s",
        I,
    ),
    re.compile(
        r"\b(?:D_?)?KL\s*\(\s*(?P<ref>(?:[\w.\-]+\s+){1,3}(?:BF16|FP16|F16|FP32|F32|bfloat16|float16|reference|original|teacher))\s*(?:‖|\|\||∥)",
        I,
    ),
    # "Scored against the Hugging Face model in FP32"
    re.compile(
        r"\b(?:vs\.?|versus|against|compared (?:to|with))\s+the\s+(?:[\w.\-/']+\s+){0,4}?(?:model|checkpoint|weights)\s+"
        r"(?:in|at)\s+(?P<ref>BF16|FP16|F16|FP32|F32|bfloat16|float16|float32|full precision)\b",
        I,
    ),
    # a dtype named as the reference's role: "BF16 teacher logits", "the same BF16 reference logits"
    re.compile(r"(?<![\w.\-])(?P<ref>BF16|FP16|F16|FP32|F32|bfloat16|float16|float32)\s+(?:teacher|reference|baseline)\b", I),
    # a tool's reference argument: "--ref-model Qwen/Qwen3-8B", "ref-logits-gemma-3-4b-it-BF16.bin"
    re.compile(r"--ref(?:erence)?[-_]model[= ]+(?P<ref>[^\s`'\"]+)", I),
    re.compile(r"\bref[-_]logits[-_](?P<ref>[\w.\-]+)", I),
    # other languages: the comparison word before the reference ("contra BF16", "par rapport à F16")
    re.compile(r"(?<![^\W\d_])(?:" + alternation(VERSUS_WORDS) + r")\s+(?:(?:el|la|o|a|le|l'|den|dem|die)\s*)?(?P<ref>" + REF_TOKEN + ")", I),
    # or after it ("BF16比", "BF16参照", "F16 基准"), and the nouns that are the reference ("参考模型", "原始权重")
    re.compile(
        r"(?<![\w.\-])(?P<ref>BF16|FP16|F16|FP32|F32|bfloat16|float16|FP8|Q8_0|[\w.\-]+/[\w.\-]+)\s*(?:" + alternation(REFERENCE_AFTER) + ")",
        I,
    ),
    re.compile(r"(?P<ref>" + alternation(REFERENCE_NOUNS) + ")"),
]
QUANTIZED_REF = re.compile(
    r"(?<![A-Za-z0-9])(?:FP8|F8|INT8|INT4|Q\d_(?:0|1|K)\w*|IQ\d\w*|\d+(?:\.\d+)?\s*bpw|NVFP4|MXFP4|AWQ|GPTQ)"
    r"(?![A-Za-z0-9])|\b(?:highest|largest|best)\s+(?:pure\s+)?quant",
    I,
)

# ---- D2 runtime -------------------------------------------------------------------------------
ENGINE = engine_names.alternation(in_patterns=True)  # the names an engine with its version is read from
# a version, a build or a commit; not a measured number ("llama.cpp ≤ 0.03", "5.508897"): a version's parts
# have at most three digits, and one starting with 0 has a third part ("0.27.1")
VERSION = (r"(?:(?:v\d+\.\d+(?:\.\d+)?|0\.\d{1,3}\.\d+|[1-9]\d*\.\d{1,3}(?:\.\d+)?)(?:rc\d+|\.post\d+)?\b(?!\s*(?:GB|GiB|MB|%|bpw))|"
    r"(?:@|(?<=[\s(`]))(?=[0-9a-f]{0,39}[a-f])(?=[0-9a-f]{0,39}\d)[0-9a-f]{7,40}\b|b\d{3,5}\b|build\s*:?\s*\d+|release\s+b?\d+|main-b\d+\S*|commit\s+[0-9a-f]{7,40})")
HARDWARE = hardware_names.HARDWARE  # the accelerators and machines by maker, a sample each (read.hardware_names)
D2 = [
    re.compile(rf"\b{ENGINE}\b(?!/)[^.;|]{{0,25}}?{VERSION}", I),  # not a URL's path ("llama.cpp/assets/86df116d")
    # a build, and a llama.cpp release tag by its own grammar, a lowercase "b" and four or five digits, whatever word
    # stands before it ("vanilla b11178", "Homebrew libllama b7650", "fork b10912", "the same WinGet b10711 binary")
    re.compile(r"^[ \t]*build:\s*\d+\s*\([0-9a-f]{6,}\)|\bbuild\s*:?\s*b?\d{4,5}\b|(?<![\w.\-/#])b\d{4,5}\b(?![\w.\-])", M),
    re.compile(HARDWARE, I),
    # the engine alone, named as what the measurement ran in ("measured with llama.cpp", "both models
    # ran in exllamav3"): the runtime stated without its version (incomplete), not missing
    re.compile(r"\b" + run_verbs.run_verb(run_verbs.ENGINE) + rf"\s+(?:[\w-]+\s+){{0,4}}?(?:with|in|on|using|via)\s+`?{ENGINE}\b(?![-.]?\w)", I),
]

# ---- D3 evaluation text -----------------------------------------------------------------------
# files a card names that are not texts a model reads: checksums, dependency lists, licences, build files
NOT_TEXT_FILES = r"(?:shas?|sha256s?|checksums?|sums|requirements\w*|LICENSE|NOTICE|README|CMakeLists|CHANGELOG|todo)\.\w+\b"
# a text kept as tokens or tensors: a JSON, PyTorch or NumPy file whose name says it holds a corpus, tokens, samples or
# data ("eval_corpus_multiling.pt", "testdata/qwen25_7b_phase0_tokens.json", "compare_sample_train_data.pt":
# holdout11/d ru_rwkv_quant_loo, holdout5/b rwkv_quant_readme, holdout13/b ollama_turboquant, holdout10/d sglang lora);
# not a weight, a tokenizer's tables, a spec or a result ("embed_tokens_fp16.npy", "special_tokens_map.json",
# "dataset_spec.json", "stage2_metadata.json"). A prompts file is eval_text.NAMED's, read only where the sentence
# speaks of the measurement ("`prompts.json` — mixed text" describing a bank for later runs, holdout6/b qbank1).
# Bounded name parts: linear on a long word.
TOKEN_FILE = (r"(?<![\w.\-])(?![\w.\-]{0,80}?(?:embed|special_tokens|added_tokens|weights?\b|metadata|spec\b|config|info\b|results?|logits))"
              r"[\w.\-]{0,80}?(?:corpus|tokens|samples?|(?<![a-z])data(?![a-z]))[\w.\-]{0,80}?\.(?:json|pt|npy|npz)\b")
D3 = [
    re.compile(
        r"\b(?:wiki\.test(?:\.raw)?|wikitext-103(?:-raw-v1)?|wikitext-?2?(?:-raw-v1)?|WT2|wiki2|c4\s+(?:validation|val)|FLORES(?:-?200)?|"
        r"ShareGPT|FineWeb(?:-Edu)?|text_en_\w+|pg-?19|(?-i:(?:the\s+)?Pile)|pile(?=[-_]\w)|Wikipedia|RedPajama|"
        r"SlimPajama|Dolma|OpenWebText|BookCorpus|UltraChat|LMSYS-Chat(?:-1M)?|WildChat|wiki\.utf8|"
        + eval_text_units.TASK_SUITE + r")\b|验证集|测试集|评测集",
        I,
    ),
    # (a glob of a data directory's files names the eval text's files: "data/*.jsonl"; not "out/*.jsonl", an output,
    # nor a glob of ".txt", as often the logs)
    re.compile(
        r"(?<![~\d,.])[~\d][\d,.]*\s*[kKM]?\s+tokens?\s+across|(?<![\d,])\b\d[\d,]*\s+(?:held-out\s+)?(?:\w+\s+)?(?:"
        + alternation(eval_text_units.FROM_SOURCE) + r")\s+(?:of|from|in)\b|"
        r"\beval(?:uation)?\s+(?:text|set|file|corpus|data)\s*(?::|=|is\b|was\b|from\b|of\b|\()|\b(?:test|validation|held-out|dev)\s+(?:set|split|file|data)\b|"
        r"\btext file\b|(?<![\w.\-])(?!" + NOT_TEXT_FILES + r")[\w.\-]+\.(?:txt|raw|jsonl|parquet)\b|(?<![\w.\-])(?:data|eval|evals|test|tests|prompts|corpus|datasets?)/\*[\w.\-]*\.(?:jsonl|parquet)\b|" + TOKEN_FILE + r"|\btokens\s+(?:of|from)\s+(?:the\s+)?(?!an?\s)[A-Z]|"
        r"(?<![\d.,])\b[\d.,]+\s*[kKM]?[- ]tokens?\s+(?:mix|sample|subset|corpus|set)\b|"
        r"\b(?:my|our)\s+(?:own\s+)?(?:eval(?:uation)?|test|held-out)\s+(?:set|text|data|file|corpus)\b",
        I,
    ),
    *eval_text.PATTERNS,  # a text by its source alone, or described (kldcard.lint.read.eval_text)
]

# ---- D4 calibration ---------------------------------------------------------------------------
D4_NONE = re.compile(
    r"\b(?:no|without)\s+(?:an?\s+|any\s+)?(?:imatrix|importance matrix|calibration(?:\s+(?:data|corpus|set|dataset))?)\b|\bstatic quants?\b|\bdata-free\b|"
    r"\bs(?:in|em)\s+(?:imatrix|matriz de import[aâ]ncia|(?:datos de |dados de )?calibra(?:ci[óo]n|[çc][ãa]o))\b|"
    r"needs? no calibration|no calibration data",
    I,
)
CALIBRATED_ON = re.compile(r"\s+(?:on|with|using|from|against)\b", I)
# the word, not part of a file or artefact name ("calibration_datav3.txt" read as an eval text,
# "bartowski-calibration.txt", "the -imatrix-0731 quants", "calibration250")
D4_WORD = re.compile(
    r"(?<![\w\-/.])(?:imatrix|importance matrix|calibrat(?:ion|ions|ed|e|es|ing|or))\b(?![\-.]\w)|校准|"
    # the word in the other card languages (a dataset in the sentence is still required: evidence._d4_all)
    r"\bcalibraci[óo]n\b|\bcalibra[çc][ãa]o\b|(?<![A-Za-z])[ée]talonnage\b|\bKalibrierung\b|калибровк[а-я]*|キャリブレーション|캘리브레이션",
    I,
)
DATASET_HINT = re.compile(
    r"(?<!\S)\S+\.(?:txt|parquet|json|jsonl|dat)\b|(?<![\w.\-])(?!(?-i:[A-Z]{1,5}/[A-Z]{1,5})\b)[\w.\-]+/[\w.\-]+|\]\(|wiki\.train|wikitext|pile-val|ultrachat|c4\b|"
    r"groups_merged|\bdefault\b|built-in|(?<![\d.,*])\d[\d.,*]*\s*[KkM]?\s*(?:tokens?|samples|rows|chunks)\b|(?<!\d)\d+\*\d+|"
    r"(?<!\d)\d+\s*条|样本|"
    # a size in Chinese number words: "用 187 万个 token 做了 imatrix" (1.87 M tokens)
    r"(?<![\d.,])\d[\d.,]*\s*(?:万|千|亿|億)\s*(?:个|個)?\s*tokens?\b",
    I,
)

# ---- D5 context length ------------------------------------------------------------------------
# "64k context", "65K ctx": also how a deployment's context is said ("fits 230K context at 11GB"), so a
# sentence about memory or speed vetoes it (evidence.SERVING)
D5_K_CONTEXT = re.compile(r"(?<![\w.,])\d{1,3}\s*[kK]\s*(?:-token\s+)?(?:context|ctx)\b", I)
D5 = [
    re.compile(r"(?:^|[\s`(])(?:-c|--ctx-size|--context)\s+\d{2,6}\b|\bn_ctx\s*=?\s*\d{2,6}|\bctx[_ ]?(?:size)?\s*=?\s*\d{3,6}\b", I),
    re.compile(r"\b(?:" + COMMA_THOUSANDS + r"|\d{3,6})[- ](?:token|tok)s?\s+(?:contexts?|windows?|rows?|chunks?|sequences?|segments?)\b", I),
    re.compile(r"\b\d+\s*(?:[a-z]+\s+)?[×x]\s*\d{3,6}\s*tokens\b", I),
    re.compile(r"\bcontext(?:\s+length|\s+size|\s+window)?\s+(?:of\s+)?\d{3,6}\b|\b\d{3,6}\s+context\b", I),
    # "windows of 2048 tokens"; "chunks of 512" with the unit left out (no other unit or word after the number)
    re.compile(r"\b(?:windows?|rows?|chunks?|sequences?|documents?|contexts?)\s+of\s+(?:" + COMMA_THOUSANDS + r"|\d{3,6})(?:\s+tokens\b|(?![.,]?\d)(?!\s*[A-Za-z%]))", I),
    re.compile(context.GENERATED_BEFORE + r"\b(?:" + COMMA_THOUSANDS + r"|\d{3,6})\s+tokens\s+(?:per|each)\s+" + context.PER_UNIT + r"\b", I),  # "512 tokens per chunk", "256 tokens per passage"
    # "context_length 2048", "context2048", "--max-seq 4096", "64k context", "65K ctx"
    re.compile(
        r"\bcontext[_ ]?(?:length|len|size)?\s*[=:]?\s*\d{3,6}\b|--max-seq\S*\s*[= ]\s*\d{3,6}\b",
        I,
    ),
    D5_K_CONTEXT,
    re.compile(r"\b\d{3,6}\s*ctx\b|\bstride\s*[=:]?\s*\d{2,6}\b", I),  # "(2,919 tokens)": a count, read.position_counts
    re.compile(
        r"\btruncated to \d{3,6} tokens|\bmax_seq\w*\s*=?\s*\d{3,6}|\bctx\d{3,6}\b|"
        r"\bseq(?:uence)?[_ ]?len(?:gth)?\s*[=:]?\s*\d{3,6}\b|\brows?\s*[×x]\s*\d{3,6}\b",
        I,
    ),
    *context.PATTERNS,  # thousands separators, short forms, the card languages (kldcard.lint.read.context)
]

# ---- D6 positions -----------------------------------------------------------------------------
D6 = [
    re.compile(
        r"(?<![\d,.])\b\d[\d,.]*\s*[kKM]?\s+(?:[a-z][\w-]*\s+){0,2}?(?:token\s+)?positions\b|\bscored positions\b|"
        r"(?<![\d,.])\b\d[\d,.]*\s*[kKM]?\s+(?:scored|evaluated|compared|assistant|response|generated|continuation)\s+tokens\b",
        I,
    ),
    # "2,632位置", "128개 위치", "4096 posiciones" (kldcard.lint.read.terms)
    re.compile(r"(?<![\d,.])\d[\d,.]*\s*(?:" + alternation(POSITION_WORDS) + ")", I),
    # a count of windows of a length ("12 independent sequences of 512 tokens", "10 sequences of 1,024"), a
    # "25-window panel", "all 32,768 tokens"
    re.compile(
        r"(?<![\d,.])\b\d+\s+(?:[a-z][\w-]*\s+)?(?:sequences|windows|rows|chunks|segments|samples)\s+of\s+\d[\d,]{2,}\b|"
        r"(?<![\d,.])\b\d+-(?:window|chunk|sequence)\s+(?:panel|set|subset|sample|run)\b|"
        r"\ball\s+\d[\d,.]*\s*[kKM]?\s+(?:scored\s+)?tokens\b",
        I,
    ),
    # windows x length: "40×512 tokens", "12 x 512" (a count of scored windows)
    # ("2x 3090" is a GPU count: an "x" stands between spaces or between digits)
    re.compile(r"(?<![\w.,])\d{1,5}(?:\s*×\s*|\s+x\s+|x)\d{3,6}(?:[- ]tokens?)?\b(?!\s*(?:GB|MB|px|pixels))", I),
    re.compile(r"\ball positions\b|\bevery position\b|\bpositions?\s+(?:with|after|beyond)\b|\bsecond half of each\b", I),
    re.compile(
        r"--chunks\s+\d+|(?<![\d.,])\b(?:" + COMMA_THOUSANDS + r"|\d+)(?![.,]\d)\s*(?:[×x]\s*\d{3,6}[- ]token\s+|(?:(?!(?:with|of|and|in|non-\w+)\b)[\w.\-]{1,40}\s+){0,3}?)"
        r"chunks?\b|\bleft context\b|\b\d+\s+(?:(?:scored|evaluated)\s+)?(?:rows|windows|sliding windows|contexts)\b",
        I,
    ),
    re.compile(r"\b(?:two|three|four|five|six|eight|ten|twenty)\s+chunks\b", I),  # "four chunks"
    re.compile(r"\bprefill only\b|\bprompt tokens only\b|\b(?:response|prompt)[- ]only\b", I),
    *positions.PATTERNS,  # compounds, step counts, schemes, the card languages (kldcard.lint.read.positions)
]

# ---- D7 direction -----------------------------------------------------------------------------
D7 = [
    re.compile(r"\b(?:D_?)?KL\s*\(\s*[^()\n]{1,40}?(?:‖|\|\||∥)\s*[^()\n]{1,40}?\)", I),
    re.compile(r"\bKL(?:[- ]?div(?:ergence)?)?\s*\(\s*[A-Za-z]\w{0,6}\s*,\s*[A-Za-z]\w{0,6}\s*\)", I),
    # (a Jensen-Shannon divergence printed beside a KL is symmetric and says nothing of the KL's direction: labelled
    # D7 M with JSD present, holdout10/b automodel_pr3855)
    re.compile(r"\b(?:forward|reverse)\s+KL\b|\bkld_direction\b", I),
    re.compile(r"\bteacher[- ]to[- ]student\b|\breference[- ]to[- ](?:candidate|quant)\b", I),
]
ARROW = re.compile(r"\(\s*(\w{1,12})\s*(?:→|->)\s*(\w{1,12})\s*\)")

# ---- D8 vocabulary ----------------------------------------------------------------------------
SIZE_UNIT = r"(?:token|entry|word)"
D8 = [
    # (the size as a compound modifier counts its unit: "full 154,880-token vocabulary", "full 248320-entry vocabulary")
    re.compile(r"\bfull(?:[- ][\d,]+(?:\.\d+)?[kK]?(?:-" + SIZE_UNIT + r")?)?[\s_-]+vocab(?:ulary)?\b|\ball\s+[\d,]{4,}\s+(?:[\w-]+\s+){0,2}?(?:token\s+)?(?:IDs|vocabulary entries|vocab entries)\b|" + alternation(FULL_VOCABULARY) + r"|(?<![\d,])\b[\d,]{5,}-" + SIZE_UNIT + r" vocabulary\b", I),
    re.compile(
        r"\bno top-?k\b|\btop-?\d+\s+(?:prompt\s+)?(?:log-?probs?|logprobs?|log-probabilit\w+|tokens)\b|"
        r"logprobs\w*\s*=\s*\d+|\btop_logprobs\w*\s*\d+|\btop-?\d+\s+only\b|\bno truncation\b|\btruncat\w*\s+(?:the\s+)?vocab|(?<![\d.,])\b\d{2}-nat\b|"
        r"\bnat floor\b|\bstorage floor\b|\bsparse top-?k\b",
        I,
    ),
]

# ---- D9 aggregation ---------------------------------------------------------------------------
D9 = [
    re.compile(
        r"\btoken[- ]mean\b|\bmacro[- ]mean\b|\bmean of per-\w+|\bper-(?:token|sequence|window|document) mean\b|"
        # (a bootstrap counts only with its interval beside it: kldcard.lint.read.aggregation.veto)
        # (SEM is the acronym, written in capitals: "sem" is Portuguese for "without", "sem mudança")
        r"\b\d{2}(?:\.\d)?% CI\b|\bconfidence interval|\bbootstrap\b|\bstandard error|(?-i:\bSEM\b)|standard deviation|"
        r"\beffective sample size\b|"
        r"\bp(?:50|90|95|99|99\.9)\b|\bpercentiles?\b|\bmedian\b|\b(?:averaged|mean|average) over\b",
        I,
    ),    # a statistic word next to the KL term: "mean KLD", "KLD médio", "平均KLD", "KL mean"
    re.compile(
        r"(?<![^\W\d_])(?:mean|average|avg|" + alternation(STATISTIC_WORDS) + r")\s*" + KL_WORD + "|"
        r"\b" + KL_WORD + r"\s*(?:mean|average|avg|" + alternation(STATISTIC_WORDS) + r")(?![^\W\d_])",
        I,
    ),
]

# ---- flags --------------------------------------------------------------------------------------
EVAL_FROM_CALIBRATION = [
    re.compile(
        r"(?:" + KL_NAME + r"|\beval\w*|measur\w*|\bscor\w*|\btest\s+(?:set|file|text))[^.]{0,80}?"
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
