"""What a card names hardware or an engine *for*, when it is not the measurement's runtime (D2 vetoes beside
kldcard.lint.read.runtime's): the rule is that a device or engine is the runtime of a KLD only where nothing
in its own clause gives it another job.

- making the files: "quantized on a B200", "exported on a machine with 70 GB", "converted with …";
- a duration on it: "took 154 seconds on an M3 Ultra", "13 hours on a colab GPU" (speed, not the KLD);
- serving or deployment: "served on a DGX Spark", "serve on 4× H200", "the tested RTX 5090 inference profile";
- an engine's own artefacts, not a run: "the existing llama.cpp quantizations", "vLLM quant types", "MLX affine";
- a row of a table whose header is about speed and names no KL term ("| M1 Max | 64 GB | ~350 tok/s |"), or a row
  about speed, latency, memory or support by its label or a latency figure ("| Primer token en RTX 4090 | 35 ms |");
- the owner of a quantization type or preset: "el Q4_K_M estándar de llama.cpp", "llama.cpp's Q4_0 format";
- the text of an HTML link ("<a href=…>Quantized KV Cache - vLLM</a>"), which names a page;
- for serving or recommended ("vLLM for serving", "we recommend llama.cpp"), or under a heading about usage,
  serving or installation ("## Usage", "## How to run", "## 使い方") on a line without a KL term;
- under a heading about training ("## Arquitectura y entrenamiento", "## Training details", "### 训练过程"), in a
  sentence that measures no KL (one without a KL term, or whose KL is a training loss's): the hardware and engines
  there trained or made the model, another step than the measurement (CONVENTIONS round 11, point 3: hardware "for
  another step (serving, quantizing, training) does not give D2"); labelled so for violetxi (holdout13/c),
  augustine223 and johneeee (holdout9/c), the NeMo-RL and verl rollout texts (holdout7/b).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.claims_patterns import TRAINING_CONTEXT
from kldcard.lint.read import runtime_targets
from kldcard.lint.read.terms import KL_MENTION

I = re.IGNORECASE

# the clause before the match gives the device or engine a job that is not the measurement
ROLE_BEFORE = re.compile(
    r"(?:\b(?:quantiz(?:ed|ing|e)|convert(?:ed|ing)?|export(?:ed|ing)?|compil(?:ed|ing)|fitt?(?:ed|ing)|"
    r"train(?:ed|ing)|fine-?tun(?:ed|ing)|serv(?:e|ed|es|ing)|deploy(?:ed|ing|s)?|host(?:ed|ing))\b"
    r"(?:\s+[\w\-*]+){0,3}?\s+(?:on|with|using|via)\s+|"
    # the same in the Romance card languages, whose objects and adverbs come between ("los comprimió a 6 bits con
    # precisión mixta mediante la herramienta ...", "cuantizado con", "quantizado com", "quantifié avec"): translation
    r"\b(?:cuantiz|comprimi|convirti|convertid|exportad|quantizad|quantifi|compress[ée])\w*\b[^.;:\n]{0,60}?\s(?:con|mediante|usando|com|avec|via)\s+|"
    r"\b\d[\d.,]*\s*(?:hours?|hrs?|minutes?|mins?|seconds?|secs?|days?)\s+on\s+|"
    r"\bfor\s+(?:serving|deployment|production|local\s+use)\b[^,\n]{0,30}?|"
    r"\brecommend(?:s|ed)?\s+(?:using\s+|running\s+(?:it\s+|them\s+)?(?:with|on|in)\s+)?)"
    r"(?:an?\s+|one\s+|the\s+|a\s+single\s+|single\s+)?[*_`]*(?:\d+\s*[×x]\s*)?(?:[(\w]+\s+){0,3}?\(?$",  # "on **2× RTX ..."
    I,
)
ROLE_AFTER = re.compile(
    r"[*_`]*\s*(?:(?:inference|serving|deployment)\s+(?:profile|setup|config\w*)|"
    r"(?:quantizations?|quant(?:s|ization)?\s+types?|quants\b|ecosystem\b)|"
    # the engine's quantization mode by its name: "MLX affine" (sawfwair, gaztrab, mtplx, mlx-kquant: a format, not a run)
    r"affine\b|"
    r"(?:\s+\S+){0,2}?\s+for\s+(?:serving|deployment|production)\b)",
    I,
)
# the engine as the owner of a quantization type or preset, not a run: "el Q4_K_M estándar de llama.cpp", "un preset de
# llama.cpp", "la heurística de Q4_K_M de llama.cpp", "llama.cpp's Q4_0 format" (atomicchat holdout13/c, openmed holdout9/c,
# the Gemma QAT thread holdout13/e); a quant type's name (Q4_K_M, IQ3_XXS) and a possessive are general grammar
QUANT_TYPE = r"(?:I?Q\d(?:_[0-9A-Z]+)*|presets?|heur[ií]stic\w*|formats?|quant(?:s|ization)?\s+types?)"
FORMAT_OWNER_BEFORE = re.compile(
    QUANT_TYPE + r"\s+(?:(?:est[aá]ndar|standard|stock|default|por\s+defecto)\s+)?(?:de|of|from)\s+(?:la\s+|the\s+)?[*_`]*$", I
)
FORMAT_OWNER_AFTER = re.compile(r"[*_`]*'s\s+(?:(?:standard|stock|default)\s+)?" + QUANT_TYPE + r"\b", I)
SERVED = re.compile(r"(?:serv|deploy|host)", I)
# the clause a match ends: after the last stop before it, a colon and a line break included. Each reader keeps its
# own stops: runtime_targets.CLAUSE_END reads a longer clause, since the last sentence end or ";" (its module's
# rule), and context_written.CLAUSE_END reads forward, with the CJK stops
CLAUSE_START = re.compile(r"[.;:!?\n](?=[^.;:!?\n]*$)")
SPEED_HEADER = re.compile(r"tok(?:ens)?/s|\bt/s\b|\bspeed\b|\bthroughput\b|\blatency\b|\bprefill\b", I)
KL_HEADER = re.compile(KL_MENTION, I)
# a row's label cell about speed, memory or what is supported ("Tokens/s en L40", "Memoria a 4k de contexto (RTX 4090)",
# "Contexto de 32k soportado"), or a latency figure in the row ("35 ms"): units and these words are general grammar
SPEED_LABEL = re.compile(
    SPEED_HEADER.pattern + r"|\b(?:memory|memoria|m[ée]moire|speicher)\b|\bsupport|\bsoportad|\bsuportad|内存|显存|メモリ|支持", I
)
LATENCY = re.compile(r"\b\d+(?:[.,]\d+)?\s*ms\b")
HTML_LINK_OPEN, HTML_LINK_CLOSE = re.compile(r"<a\b[^>]*>[^<]*$", I), re.compile(r"[^<]*</a>", I)


def vetoed(text: str, m: re.Match[str]) -> bool:
    """True when the clause, the table or the link around ``m`` names it for something other than the
    measurement."""
    head = text[max(0, m.start() - 120) : m.start()]
    cut = CLAUSE_START.search(head)
    clause_before = head[cut.end() :] if cut else head
    role = ROLE_BEFORE.search(clause_before)
    if role and SERVED.match(role.group(0)) and KL_HEADER.search(clause_before):
        role = None  # "the KLD of the model served with vLLM 0.9": a measurement through a served engine
    if FORMAT_OWNER_BEFORE.search(head) or FORMAT_OWNER_AFTER.match(text, m.end()):  # the engine owns a quant format
        return True
    if role or ROLE_AFTER.match(text, m.end()) or runtime_targets.aimed(text, m):  # targeted, fitted, needed
        return True
    if HTML_LINK_OPEN.search(text, max(0, m.start() - 200), m.start()) and HTML_LINK_CLOSE.match(text[m.end() : m.end() + 200]):
        return True
    return speed_table_row(text, m.start()) or usage_section(text, m)


# a section that tells the reader how to run or serve the files: an engine or device there is the user's. "Running" is
# such a title only as the heading's first word ("## Running it", "### 2. Running the QAT Script"); later in a heading it
# is a participle of a status or a study ("Validation run result (...; nothing left running)" h15/a pirola, "Currently
# running" h10/a pprune, "Consequences for the running study" h7/c heretic)
USAGE_HEADING = re.compile(
    r"^[ \t]{0,3}#{2,6}[ \t]+(?:\d+(?:\.\d+)*\.?[ \t]+)?[^\w\s]{0,4}[ \t]?[*_]{0,3}running\b|"  # after markup or an emoji too
    r"\b(?:usage|how to (?:run|use)|quick\s?start|deploy\w*|serving|download\w*|install\w*|get started)\b|"
    r"使い方|使用方法|用法|部署|uso\b|utilisation|verwendung|использование",
    I,
)
SECTION_HEADING = re.compile(r"^[ \t]{0,3}#{2,6}[ \t][^\n]*", re.M)
LINE_KL = re.compile(KL_MENTION + r"|logits?\b|perplexit|PPL", I)


def usage_section(text: str, m: re.Match[str]) -> bool:
    """Whether ``m`` lies under a (sub)heading about usage, serving or installation, on a line with no KL term."""
    start = text.rfind("\n#", 0, m.start())
    h = SECTION_HEADING.match(text, start + 1) if start >= 0 else None
    if h is None or not USAGE_HEADING.search(h.group(0)):
        return False
    line = text[text.rfind("\n", 0, m.start()) + 1 : (text.find("\n", m.end()) + 1 or len(text) + 1) - 1]
    return not LINE_KL.search(line)


def speed_table_row(text: str, at: int) -> bool:
    """Whether ``at`` lies in a table row under a header about speed that names no KL term."""
    line_start = text.rfind("\n", 0, at) + 1
    if not text.startswith("|", line_start):
        return False
    start = line_start
    while start > 0:  # up to the table's first row
        prev = text.rfind("\n", 0, start - 1) + 1
        if not text.startswith("|", prev):
            break
        start = prev
    header = text[start : text.find("\n", start) if text.find("\n", start) >= 0 else len(text)]
    if start != line_start and bool(SPEED_HEADER.search(header)) and not KL_HEADER.search(header):
        return True
    # a row of its own about speed, latency or memory ("| Tokens/s en L40 | 604 |", "| Primer token en RTX 4090 | 35 ms |",
    # "| Memoria a 4k de contexto (RTX 4090) | 1,3 GB |"): the hardware in it is the speed figure's, whatever the header
    row_end = text.find("\n", at)
    row = text[line_start : row_end if row_end >= 0 else len(text)]
    label = row.lstrip("| \t").split("|", 1)[0]
    return start != line_start and bool(SPEED_LABEL.search(label) or LATENCY.search(row)) and not KL_HEADER.search(row)


# a heading about training the model (not "post-training quantization", which is the quantizing the card measures)
TRAINING_HEADING = re.compile(
    r"(?<!post-)(?<!post )\b(?:training|trained|fine-?tuning|entrenamiento|treinamento|treino|entra[iî]nement)\b|训练|訓練|学習", I
)

# ... unless it sets training against inference ("Training-Inference Mismatch", "Treino-Inferência", "training vs
# rollout"): the RL mismatch the KL measures between the trainer's and the inference engine's probabilities
INFERENCE_TOO = re.compile(r"\b(?:inf[eé]r[eêé]n\w*|rollouts?)\b|推理|推論", I)  # inference, inferência, inférence


def training_section(text: str, m: re.Match[str], sentence: str) -> bool:
    """Whether ``m`` lies under a (sub)heading about training, in a sentence that measures no KL (no KL term, or a
    training loss's KL): the device or engine trained or made the model."""
    start = text.rfind("\n#", 0, m.start())
    h = SECTION_HEADING.match(text, start + 1) if start >= 0 else None
    if h is None or not TRAINING_HEADING.search(h.group(0)) or INFERENCE_TOO.search(h.group(0)):
        return False
    return not LINE_KL.search(sentence) or bool(TRAINING_CONTEXT.search(sentence))
