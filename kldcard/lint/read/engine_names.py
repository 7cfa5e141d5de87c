"""The one table of engine names as cards write them (D2 runtime), and the canonical project each names.

Its readers: the evidence patterns (an engine with its version, "measured with <engine>"), the reading's
value (which engine, ``values.runtime``), the engine named in a measurement sentence without a version or by
one of its programs (``read.runtime``: ``by_tool``), and the comparison of two structured blocks' engines
(``kldcard.lint.quantity.engine``: ``canonical(..., value=True)``). A recognised KLD tool carries its engine
itself (``kldcard.lint.tool_defaults.Tool.engine``). ``kldcard.engines`` is a different table — the three engines kldcard itself runs,
with the spellings its command line accepts ("hf", "gguf") — that would misread card prose; the canonical
names the two share ("transformers", "llama.cpp", "mlx") are kept equal by a test.

``in_patterns`` marks the names the evidence patterns take as a runtime with a version or after "measured
with"; the others (research frameworks, web UIs, vendor toolkits) count only in a sentence about the
measurement, where ``read.runtime`` vetoes background, citations and deployment.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from dataclasses import dataclass

I = re.IGNORECASE | re.ASCII


@dataclass(frozen=True)
class CardEngine:
    canonical: str  # the project's name in the reading's value
    spellings: tuple[str, ...]  # regular expressions, matched case-insensitively, as cards write the name
    in_patterns: bool = True  # also an evidence pattern's engine (with a version, or after "measured with")
    # spellings read only as a whole structured value (``kld_evaluation``'s runtime.engine), never in prose,
    # where they name a file format or a library ("EXL3 quants", "ggml tensors")
    values: tuple[str, ...] = ()
    # the engine's own programs, as cards name them: naming one names the engine (R8': llama-perplexity is
    # llama.cpp, model_diff is exllamav3), regular expressions searched case-insensitively
    tools: tuple[str, ...] = ()


# mlx_lm's programs that make, generate or serve (a model page's "How to use ... with MLX LM" snippet runs
# ``mlx_lm.generate``): they name no measurement, unlike ``mlx_lm.kld`` / ``mlx_lm.perplexity`` / ``mlx_lm.evaluate``
MLX_LM_OTHER = r"(?:convert|generate|server|chat)\b"
MLX_LM_MEASURING = rf"mlx_lm(?![.\s]{MLX_LM_OTHER})"

TABLE: tuple[CardEngine, ...] = (
    CardEngine("llama.cpp", (r"llama\.cpp", r"llama-perplexity", r"llama-server", r"llama-cli"), values=("ggml",),
               tools=(r"llama-perplexity", r"(?<![\w\-/.])(?:\./)?perplexity(?:\.exe)?\s")),
    CardEngine("ik_llama.cpp", (r"ik_llama\.cpp", r"ik_llama")),
    CardEngine("llama-cpp-python", (r"llama-cpp-python",)),
    CardEngine("exllamav2", (r"exllamav2",)),
    CardEngine("exllamav3", (r"exllamav3",), values=("exl3",), tools=(r"model_diff",)),
    CardEngine("vllm", (r"vLLM",)),
    CardEngine("sglang", (r"SGLang",)),
    CardEngine("transformers", (r"transformers",), values=("huggingface transformers",)),
    CardEngine("mlx", (r"mlx-lm", r"mlx_lm", r"mlx"), tools=(MLX_LM_MEASURING,)),
    CardEngine("pytorch", (r"PyTorch", r"torch")),
    CardEngine("hipfire", (r"hipfire",), tools=(r"eval_hipfire",)),
    # "TRT-LLM": NVIDIA's own short name (its docs' "quantization-in-TRT-LLM", holdout3 modelopt; holdout15 fr_verdict)
    CardEngine("tensorrt-llm", (r"TensorRT-LLM", r"(?<![\w-])TRT-LLM(?![\w-])")),
    CardEngine("tgi", (r"TGI",)),
    CardEngine("ollama", (r"Ollama",)),
    CardEngine("omlx", (r"oMLX",)),
    CardEngine("onnxruntime", (r"ONNX Runtime", r"onnxruntime")),
    CardEngine("openvino", (r"OpenVINO",)),
    CardEngine("mlc-llm", (r"MLC-LLM",)),
    CardEngine("koboldcpp", (r"koboldcpp",)),
    CardEngine("lm-studio", (r"LM Studio",)),
    CardEngine("llamafile", (r"llamafile",)),
    CardEngine("ktransformers", (r"KTransformers",)),
    CardEngine("mistral.rs", (r"mistral\.rs",)),
    CardEngine("executorch", (r"ExecuTorch",)),
    CardEngine("coreml", (r"Core ?ML",)),
    # named in a measurement sentence only (in this order the reading's value tries them: ``engine``)
    CardEngine("text-generation-webui", (r"text-generation-webui", r"TextGen"), in_patterns=False),
    CardEngine("maxtext", (r"MaxText",), in_patterns=False),
    # PyTorch's training framework, in which checkpoint-conversion checks run their forward passes (labelled D2 with
    # 2 in incomplete by two authors: holdout10/d the torchtitan conversion guide, holdout12/e torchtitan PR #1441)
    CardEngine("torchtitan", (r"torchtitan",), in_patterns=False),
    CardEngine("jax", (r"\bJAX\b",), in_patterns=False),
    CardEngine("transformer-engine", (r"Transformer Engine",), in_patterns=False),
    CardEngine("tensorrt-llm", (r"TensorRT",), in_patterns=False),
    CardEngine("fastmlx", (r"fastmlx",), in_patterns=False),
    CardEngine("beellama.cpp", (r"beellama\.cpp",), in_patterns=False),
)


def alternation(*, in_patterns: bool | None = None) -> str:
    """The spellings as one non-capturing group, longest first (so "ik_llama.cpp" wins over "llama.cpp");
    ``in_patterns`` selects the evidence patterns' names (True), the others (False) or all (None)."""
    spellings = [s for e in TABLE if in_patterns is None or e.in_patterns == in_patterns for s in e.spellings]
    return "(?:" + "|".join(sorted(spellings, key=lambda s: len(s.replace("\\", "")), reverse=True)) + ")"


_CANONICAL = [(re.compile(s, I), e.canonical) for e in TABLE for s in e.spellings]


_VALUES = {v: e.canonical for e in TABLE for v in e.values}


def canonical(written: str, *, value: bool = False) -> str | None:
    """The canonical project a name as written spells ("vLLM" -> "vllm", "llama-server" -> "llama.cpp");
    ``value``: ``written`` is a whole structured value, where the value-only spellings count too."""
    written = written.strip()
    if value and (name := _VALUES.get(written.lower())) is not None:
        return name
    return next((name for pattern, name in _CANONICAL if pattern.fullmatch(written)), None)


_OTHERS = [(re.compile("|".join(e.spellings), I), e.canonical) for e in TABLE if not e.in_patterns]


def other_engine(span: str) -> str | None:
    """The first engine outside the evidence patterns' names that ``span`` names anywhere ("a MaxText
    logit check", a path ending in "fastmlx"), in the table's order, or None."""
    return next((name for pattern, name in _OTHERS if pattern.search(span)), None)


_TOOLS = [(re.compile("|".join(e.tools), I), e.canonical) for e in TABLE if e.tools]


def by_tool(span: str) -> str | None:
    """The engine whose own program ``span`` names ("llama-perplexity -m ..." -> "llama.cpp"), in the table's
    order, or None."""
    return next((name for pattern, name in _TOOLS if pattern.search(span)), None)
