"""D2 (runtime) statements beyond an engine with its version (kldcard.lint.evidence_patterns.D2): the ways
cards name the engine or the hardware of a measurement without a version, which the reading reports as
``incomplete`` (issue 28: "an engine named without a version is not 'no runtime at all'").

- the measurement's tool named, which names its engine: ``llama-perplexity`` (or its ``--kl-divergence``
  command line) is llama.cpp's, ``model_diff.py`` exllamav3's, ``mlx_lm`` MLX's;
- a labelled field: "Engine: …", "Runtime: …", "Inference: …", "Tool: …", "Harness: …", "Backend: …";
- an engine named in a sentence about the measurement (a KL term, logits, perplexity, a reference, a
  measurement verb): "llama-perplexity from llama.cpp", "a patched llama.cpp build inside a web UI",
  "usando llama.cpp sobre Metal", "dense embedding (exllamav3) against quantized embedding (vLLM)";
- an engine written as a ``*.cpp`` project with a version ("BeeLlama.cpp v0.3.2");
- a ggml backend device as llama.cpp prints and takes it ("Vulkan0", "CUDA0", "ROCm0", "CPU_REPACK"): llama.cpp ran;
- the GPU compute stack with its version ("ROCm 10.1.0", "HIP 7.14.60850", "CUDA 12.8");
- the commit the measured code was at ("Tested commit: `7353b06…`", "measured at fork commit `66a05b72`", "| commit |
  `427b93be6` |", "Binary: source `a258c33d`"): a build;
- the project's own binary run from its build folder ("./build/bin/amp-plan", "BIN=build/qwenox-engine"): an engine
  named without a version;
- hardware the evidence patterns do not list: "Ryzen AI Max+ 395", "the 5080", Radeon / Arc / Jetson names, TPU
  generations ("TPU v5e", "a v6e VM"), the GX10, a CUDA architecture ("sm_60").

The caller (kldcard.lint.evidence.collect) applies the D2 vetoes (a quantizer, serving or speed sentence).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.claims_patterns import KLD_TERM
from kldcard.lint.evidence_patterns import D2, VERSION
from kldcard.lint.read import comparison, engine_names, run_verbs
from kldcard.lint.read.sentence_terms import has
from kldcard.lint.read.tools import dismissed
from kldcard.lint.read.terms import KL_MENTION

I = re.IGNORECASE | re.ASCII

# the tools that name their engine (the engines themselves: kldcard.lint.read.engine_names)
TOOLS = (
    r"(?:(?<![\w\-])llama-perplexity\b|(?<![\w\-/.])(?:\./)?perplexity(?:\.exe)?\s+[^\n]{0,160}?--kl-divergence\b|"
    r"\b(?:eval/)?model_diff\.py\b|\bmlx_lm\.(?!" + engine_names.MLX_LM_OTHER + r")\w+|\beval_hipfire\b)"
)
# a sentence about a measurement (the engine named in it is the measurement's)
MEASUREMENT = re.compile(
    KL_MENTION + r"|\blogits?\b|\blog-?probs?\b|perplexit|\bmeasur|\bevaluat|\bscor(?:e|ed|es|ing)\b|"
    r"\breference\b|\bbaseline\b|\bcompar|\bharness\b|\bgate\b|\bcorrectness\b|\bmatch(?:es)?\b|\bmetrics?\b|"
    r"\bstudy\b|\bexperiments?\b|\btest(?:s|ed|ing)?\b|"
    # the run that makes the logits a KL compares ("ran forward passes in <engine>")
    r"\bforward[- ]pass(?:es)?\b|"
    # an RL parity text: the trainer's and the rollout engine's probabilities are what its KL compares ("the
    # trainer's KV eviction and vLLM's", "inference (SGLang/vLLM) and training (Megatron) engines", "log probs")
    r"\btrainers?\b|\brollouts?\b|\btraining\s+(?:\(|engines?|side|backend)|\binference\s+(?:\(|engines?|side|backend)|\blog[- ]probs?\b|"
    # the same in the other card languages: measure, evaluate, compare, reference, agree (Chinese, Japanese)
    r"测|測|评估|評価|比较|比較|参照|参考|基准|一致|ロジット|medi[dç]|mesur|compar|referencia|référence",
    I,
)
# background sentences that name engines in general ("GGUF is the format that llama.cpp ... use", "a fork of ...")
BACKGROUND = re.compile(
    r"\bformat\b|\bfork of\b|\bsupport(?:s|ed)?\b|\bcompatible\b|\bderivad[oa]s\b|\bderivatives\b|\bprepa?rad[oa]s?\s+para\b|\bload(?:s|ed)? (?:correctly|fine)\b|\bdownload|\bbackground\b|背景|格式|支持|対応", I
)
# a runtime or device named for deployment or validation of the files, not for the measurement (any D2 match)
DEPLOYED = re.compile(
    r"\bdespliegue\b|\bimplanta[çc][ãa]o\b|\bd[ée]ploiement\b|\bvalidad[oa]s?\b|\bvalidated\b|\*not\*|\bno en el\b|"
    r"\ben producci[óo]n\b|\bin production\b|\bcodificaci[óo]n\b|\bencoding (?:ran|was run|corri)",
    I,
)
# what follows an engine's name when the sentence cites the project, not a run in it: "llama.cpp PR #28068",
# "llama.cpp Discussion #23470", "exllamav3 convert.md", "vLLM's `fp8_ds_mla` layout"
CITED = re.compile(r"\s*(?:PR\b|pull\b|discussions?\b|issues?\b|#\d|docs?\b|README|repo|[\w\-]+\.md\b|'s\s+`|(?:'s\s+)?(?:default|默认))", I)
NOT_BEFORE = re.compile(r"\bnot\s+(?:an?\s+|the\s+)?$", I)
# a run's verb and the preposition of its engine right before the name: "ran forward passes in", "measured with",
# "scored using" (general grammar of a run's engine)
RAN_IN = re.compile(
    r"\b" + run_verbs.run_verb(run_verbs.RAN_IN) + r"\s+(?:[\w\-]+\s+){0,3}?(?:in|with|using|under|through)\s+`?$", I
)

# the tool named (words, command line, module)
NAMED_TOOL = re.compile(TOOLS, I)
# a labelled field naming what ran ("- **Engine:** oMLX 0.7.0", "Tool: llama.cpp llama-perplexity")
LABELLED_FIELD = re.compile(
    r"(?:^|[|*\-\s])(?:inference\s+)?(?:engine|runtime|inference|tool|harness|backend|framework)s?\**\s*[:：]\s*\**\s*`?"
    r"(?P<named>[A-Za-z][\w.\-+ ]{1,40}?)(?=[,;(|\n`]|\s+(?:on|with|\+)\b|$)",
    I | re.MULTILINE,
)
# an engine named in a measurement sentence (vetoed below when the sentence has no measurement word)
# (a slash between two engines lists them, "SGLang/vLLM"; a slash before anything else is a path)
ENGINE_IN_SENTENCE = re.compile(
    rf"(?<![\w.\-/]){engine_names.alternation()}(?![\w\-]|/(?!{engine_names.alternation()}(?![\w\-/]))|\.\w)", I
)
# what a commit or source hash belongs to when it is not the code that ran: the weights', the data's, a repo's
# (one list for BUILD_FIELD's "| model commit |" cell and its "Dataset source:" look-behinds)
NOT_CODE = ("models", "model", "base", "datasets", "dataset", "data", "weights", "weight", "checkpoints", "checkpoint",
            "corpus", "text", "repo", "revision")
PATTERNS: list[re.Pattern[str]] = [
    NAMED_TOOL,
    LABELLED_FIELD,
    ENGINE_IN_SENTENCE,
    # a *.cpp engine with its version ("BeeLlama.cpp v0.3.2 Preview")
    re.compile(rf"(?<![\w.\-/])[A-Za-z][\w\-]*\.cpp\b(?!/)[^.;|\n]{{0,12}}?{VERSION}", I),
    # an engine with a major release series, general grammar of versions ("transformers 5.x resolves to sdpa",
    # "Transformers 5.x"): a version in part, which the reading reports as incomplete
    re.compile(rf"(?<![\w.\-/]){engine_names.alternation()}\s+v?[1-9]\d*\.x\b", I),
    # a version of an engine the card does not name ("the engine's v1.1.0 defaults", "runtime v44")
    re.compile(r"\b(?:engine|runtime|server)(?:'s)?\s+v\d+(?:\.\d+)*\b", I),
    # a ggml backend device as llama.cpp names it ("Vulkan0", "CUDA0", "ROCm0", "CPU_REPACK"): llama.cpp is the engine
    # the GPU compute stack with its version ("ROCm 10.1.0", "HIP 7.14.60850", "CUDA 12.8"): the platform the run used,
    # the runtime in part (r4dx study h11/b labelled D2 S on "ROCm 10.1.0"; ja_vllm_mxfp4 and zh_gdec name HIP versions)
    STACK := re.compile(r"(?<![\w\-/.])(?:ROCm|HIP|CUDA)[ \t]+v?\d{1,2}\.\d{1,2}(?:\.\d+)?\b(?![.\d])"),
    GGML_DEVICE := re.compile(r"(?<![\w\-/.])(?:CUDA|ROCm|Vulkan|SYCL)\d\b|(?<![\w\-/.])CPU_REPACK\b"),
    # the commit the measured code was at, as a field ("Tested commit: `7353b06…`", "fork commit: `3c5bd17…`", "llama.cpp
    # commit: 69d8e4be4", "commit : 2f30f244") or after "at" ("Code at commit `f9280fa`", "measured at fork commit
    # `66a05b72`", "exllamav3 at commit `5f3c537…`"): a build of the engine without hardware, the runtime in part.
    # Eleven labelled authors (holdouts 3, 4, 5, 8, 9, 10, 11, 12, 14), all D2 S; a commit hash is general grammar
    # (a field naming whose commit it is, "Model commit:", "Dataset commit:", pins the weights or data, not the engine)
    COMMIT := re.compile(
        r"(?:^[ \t>*\-]*(?:\*\*)?(?:(?!(?:model|base|dataset|data|weights?|checkpoint|repo|revision)\b)[\w.\-]+[ \t]+)?"
        r"commit\**[ \t]*[:：][ \t]*\**|\bat[ \t]+(?:[\w\-]+[ \t]+){0,2}?commit[ \t]+)`?"
        r"(?=[0-9a-f]{0,39}[a-f])(?=[0-9a-f]{0,39}\d)[0-9a-f]{7,40}\b",
        I | re.MULTILINE,
    ),
    # the same build named by the word for the code that ran rather than "commit": a table's key cell ("| commit |
    # `427b93be6` |", "| vLLM commit | `f7d79ac…` |": sparkinfer h12/b, course_proof h12/a, voipmonitor h13/d), the
    # binary or source it was built from ("Binary: source `a258c33d`", "Source: `e624e44…`", "Binary `db249826`":
    # larql h13/a, kpack h14/b, sushi h4/a, ja_vllm_mxfp4 dev), or the engine's own base ("Engine base `8d04ced…`":
    # mlx_serve h14/a). A hash of 7-40 hex digits with a letter and a digit, as COMMIT; not the weights' or data's
    BUILD_FIELD := re.compile(
        r"(?:^[ \t]*\|[ \t]*\**(?:(?!(?:" + "|".join(NOT_CODE) + r")\b)[\w.\-]+[ \t]+)?commit\**[ \t]*\||"
        # (a source of data or weights, "Dataset source: <hash>", is no build: the word before "source" is checked, one
        # fixed-width look-behind per word)
        r"(?<![\w\-/.])" + "".join(f"(?<!{w} )" for w in NOT_CODE) +
        r"(?:binary|source|engine[ \t]+(?:base|build|commit))\**[ \t]*[:：]?[ \t]*\**(?:source[ \t]+)?)[ \t]*`?"
        r"(?=[0-9a-f]{0,39}[a-f])(?=[0-9a-f]{0,39}\d)[0-9a-f]{7,40}\b(?![\w\-])",
        I | re.MULTILINE,
    ),
    # a binary the card's own project built and ran ("./build/bin/amp-plan --model $M", "BIN=build/qwenox-engine",
    # "`build/gdec-hq2`: the engine with the overlay"): the engine named by its binary, without a version (R8').
    # Three authors (amp_occamy h11/b, zh_handoff h11/d, zh_qwenox h9/c). llama.cpp's binaries are its tools
    # (NAMED_TOOL, tools.named); build folders that hold no binary, tests and quantizers are no engine
    BUILT_BINARY := re.compile(
        r"(?<![\w.\-/$])(?:\./)?build(?:-\w+)?/(?:bin/)?"
        # llama.cpp's binaries under their older names too ("bin/perplexity", "bin/main", "bin/server")
        r"(?!llama-|test|(?:envs?|models?|lib|include|src|tmp|cache|out|logs?|data|CMakeFiles|perplexity|main|server|"
        r"embedding|batched-bench|bench)(?![\w\-]))"
        r"(?![\w\-]*(?:quantiz|imatrix|convert))(?P<binary>[a-z][a-z0-9_]*(?:-[a-z0-9_]+){0,4})(?![\w.\-/])",
    ),
]


# a measurement's verb with "on" right before hardware ("measured on an RTX 4090", "Measured on an RTX 5090, ...",
# "evaluated on one H100"): the run's hardware (general grammar; a dozen labelled authors write "measured on <GPU>")
MEASURED_ON = re.compile(
    r"\b" + run_verbs.run_verb(run_verbs.ON_HARDWARE) + r"\s+(?:live\s+)?on\s+(?:an?\s+|one\s+|the\s+|our\s+|two\s+|four\s+|\d+\s*[x×]\s*)?$", I
)
# ... unless what was measured there is speed ("Speeds measured on an Apple M3 Max")
SPEED_MEASURED = re.compile(r"\b(?:speeds?|throughput|latency|tok/s|t/s|decode|timings?)\b[^.;\n]{0,30}$", I)


def measured_on(text: str, m: re.Match[str]) -> bool:
    """Whether the hardware at ``m`` follows "measured on" (:data:`MEASURED_ON`) of a measurement that is not speed."""
    before = text[max(0, m.start() - 80) : m.start()]
    verb = MEASURED_ON.search(before)
    return verb is not None and not SPEED_MEASURED.search(before[: verb.start()])


# a minimum version is a dependency's requirement, not the run's ("transformers >= 4.51", "at least 0.9")
REQUIREMENT = re.compile(r"(?:[≥>]=?|\bat least|\bor (?:newer|later))\s*(?:v(?=\d))?$", I)
# ... or written after the version: "b10355 or later", "b10355 o posterior", "b10685+", "ou supérieure"
REQUIREMENT_AFTER = re.compile(r"\+|\s+(?:or\s+(?:newer|later|above|higher)|o\s+(?:posterior|superior|m[áa]s\s+reciente)|ou\s+(?:sup[ée]rieure?|posterior|mais\s+recente)|oder\s+neuer)\b", I)
# a version inside a model's or file's name ("vllm serve org/Model-1.0-35B", "mlx_lm generate --model Name-V2.6")
IN_A_NAME = re.compile(r"[\w.]-$|/[\w.\-]*$|--model\s+\S*$", I)
# a sentence about speed, duration or memory of generation, not about a KL measurement (vetoed with no KL term
# in it): "120-token greedy generation", "the trial took 13 hours on ...", "the runtime rows were measured on ..."
SPEED_ONLY = re.compile(
    r"\bslow(?:er|ly)?\b|\bfast(?:er)?\b(?![- ]path)|\bgreedy generation\b|\b(?:runtime|speed|timing) rows\b|"
    r"\btrial time\b|\bpeak memory\b|\b(?:cannot|can't|could not|couldn't)\s+(?:hold|fit|load)\b|\bloads?\s+on\b",
    I,
)
# the device right before what it cannot hold: "the 3060 12GB cannot hold these quants" (whatever else the sentence says)
CANNOT_HOLD = re.compile(r"^[^.;:()\n]{0,20}?\b(?:cannot|can't|could not|couldn't|does not|doesn't)\s+(?:hold|fit|load|do|run|handle)\b", I)
LINK_OPEN, LINK_CLOSE = re.compile(r"\[[^\]\n]*$"), re.compile(r"^[^\[\n]*\]\(")


PERFORMANCE_HEADING = re.compile(r"^\s*#{2,}\s[^\n]*\b(?:performance|speed|throughput|latency)\b", I)
KL_WORD = re.compile(r"divergen", I)
WINDOW = 150  # characters either side of the match: a long pasted paragraph is one "sentence"


def speed_only(sentence: str, m: re.Match[str]) -> bool:
    """True when the clause around ``m`` is about speed, duration or memory and names no KL term."""
    at = max(sentence.find(m.group(0)), 0)
    near = sentence[max(0, at - WINDOW) : at + len(m.group(0)) + WINDOW]
    return bool(SPEED_ONLY.search(near)) and not KLD_TERM.search(near) and not KL_WORD.search(near)


def hardware_veto(sentence: str, m: re.Match[str], before: str, after: str) -> bool:
    """True when hardware is named for speed, memory, a performance section or a linked guide, not for the
    measurement (a link's text names a document: "[<device> QuickStart](...)")."""
    if (LINK_OPEN.search(before) and LINK_CLOSE.match(after)) or CANNOT_HOLD.match(after):
        return True
    return bool(PERFORMANCE_HEADING.match(sentence)) or speed_only(sentence, m)


# a title line: a level-one heading, or a short line that ends without a full stop
TITLE_LINE = re.compile(r"[ \t]*#[ \t][^\n]*|[^\n]{1,150}(?<![.:])[ \t]*")
TITLE_MAX = 200  # characters: a longer line is a paragraph, whatever it starts with
TITLE_WITHIN = 3  # non-blank lines from the document's start (a rendered pull request puts its repository line first)
# a thread's repository line ("ggml-org/llama.cpp · pull request #21089 · closed · C++"): where the thread is filed, not
# the engine its measurement ran in (rule 15c.1 of real_cards/CONVENTIONS.md), so never a title
REPOSITORY_LINE = re.compile(r"[ \t]*[\w.\-]+/[\w.\-]+[ \t]+·[ \t]")


def in_title(text: str, at: int) -> bool:
    """Whether ``at`` lies on the document's title line: a short line that ends without a full stop as the first
    non-blank line, or a level-one heading among the first three. A card or a pull request names the engine of
    its measurement in its title once ("... SGLang/vLLM rollout") and writes the measurement below."""
    start = 0
    for _ in range(TITLE_WITHIN):
        while text.startswith("\n", start):
            start += 1
        end = text.find("\n", start)
        end = len(text) if end < 0 else end
        if start <= at <= end:
            if end - start > TITLE_MAX:
                return False
            line = TITLE_LINE.fullmatch(text, start, end)
            if line is None or REPOSITORY_LINE.match(text, start, end):
                return False
            return line.group(0).lstrip().startswith("#") or not text[:start].strip()
        start = end + 1
    return False


def veto(sentence: str, m: re.Match[str], before: str, after: str, title: bool = False) -> bool:
    """True when the match is not a statement of the measurement's runtime (``before``/``after``: the text
    right before and after the match; ``title``: the match is on the title line, where no measurement word is
    needed)."""
    if has(DEPLOYED, sentence) or (m.re is not NAMED_TOOL.compiled and speed_only(sentence, m)):
        return True
    # a tool or engine said to be of no use, or contrasted with the card's run ("`llama-perplexity` no sirve aquí",
    # "unlike llama.cpp"); right at the name only, as "used llama.cpp instead of vLLM" names the run's engine
    if re.made_by(m, (NAMED_TOOL, ENGINE_IN_SENTENCE)) and (dismissed.negated(m.string, m) or dismissed.contrasted(m.string, m)):
        return True
    if m.re is D2[1].compiled and REQUIREMENT_AFTER.match(after):  # a build as a minimum
        return True
    if m.re is D2[0].compiled:  # an engine with a version: not a requirement, not a version inside a model's name
        v = re.search(VERSION + r"$", m.group(0), I)
        head = m.group(0)[: v.start()] if v else ""
        return bool(REQUIREMENT.search(head) or IN_A_NAME.search(head))
    if m.re is ENGINE_IN_SENTENCE.compiled:
        # the engine a run was made in ("ran forward passes in torchtitan") is the run's, whatever background the
        # rest of the sentence gives ("I downloaded a model from HF hub, ...")
        background = bool(BACKGROUND.search(sentence)) and not RAN_IN.search(m.string, max(0, m.start() - 60), m.start())
        return ((not title and not MEASUREMENT.search(sentence) and not in_kl_table(m)) or background or bool(CITED.match(after))
                or bool(NOT_BEFORE.search(before)))
    return False


TABLE_ROW = re.compile(r"^[ \t]*\|[^\n]*$", re.MULTILINE)


def in_kl_table(m: re.Match[str]) -> bool:
    """Whether ``m`` is a whole cell of a row of a pipe table whose header names a KL term: such a cell names the
    engine its row's KL was measured in ("| UD-IQ1_S | 76.871 | 0.645 | llama.cpp |" under "| 方案 | Mean KLD ↓ | 执行方式 |";
    table layout, any author). An engine inside a longer cell qualifies another name ("FP8 (vLLM)": a format's vendor)."""
    text = m.string
    start = text.rfind("\n", 0, m.start()) + 1
    if not TABLE_ROW.match(text, start):
        return False
    left, right = text.rfind("|", start, m.start()), text.find("|", m.end())
    if right < 0 or text[left + 1 : right].strip(" \t*_`") != m.group(0):
        return False
    return bool(re.search(KL_MENTION, comparison.table_header(text, m.start()), I))


CPP_PROJECT = re.compile(r"(?<![\w.\-/])([A-Za-z][\w\-]*\.cpp)\b", I)


def engine(span: str) -> str | None:
    """The engine a span names by its tool or project name ("llama-perplexity" -> "llama.cpp"), or None."""
    if (name := engine_names.by_tool(span)) is not None:
        return name
    if GGML_DEVICE.search(span):  # a ggml backend's device name ("CUDA0", "CPU_REPACK") is llama.cpp's
        return "llama.cpp"
    if (name := engine_names.other_engine(span)) is not None:
        return name
    if (b := BUILT_BINARY.search(span)) is not None:  # the project's own binary ("build/bin/amp-plan")
        return b.group("binary")
    m = CPP_PROJECT.search(span)
    return m.group(1).lower() if m else None
