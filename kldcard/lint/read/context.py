"""D5, the context length, in the ways cards write it that :data:`kldcard.lint.evidence_patterns.D5` does not.

- windows × length with a thousands separator or a word between ("4 × 2,048 tokens", "10 x 2,048
  WikiText tokens", "64 chunks × 512", "openwebtext 8x2048", "wikitext-2 (40 x 512)");
- the length as a compound or a short form: "a 5,120-context population", "8K-token windows", "the first
  2,048 tokens" (of a text, then scored), "chunk 2048", "`c512`", "max_length=1024", "--seq-len 4096",
  "sequence length of 2048", "window size 1024", "context length of 4,096", "windows are 2048 tokens";
- several lengths ("contexts of 512, 2048 and 8192 tokens"), a table's context column under a header
  that names KLD or PPL, a settings table's "| Context | 4096 |" row;
- a length before what was scored, a label or word between: "2,048-token `panel-3` window", "1024-token
  captures", "a ~493-token long prompt", "256–1024 token prefills"; windows of a length in the card languages
  ("60 fragmentos de 2.048 tokens", "ventanas de texto de 128 tokens", "128 tokens por ventana");
- in the card languages: "longitud de contexto | 4096 tokens", "上下文长度 4096", "コンテキスト長 2048",
  "contexte de 512", "contesto 16,384", "Kontextlänge 4096", "длина контекста 2048", "長文脈 (17k)".

:func:`read` gives the value (``n_ctx``, ``chunks``) these forms carry, for
:func:`kldcard.lint.read.values.context` (a length in k is in units of 1024: :func:`kilo`). :func:`vetoed`
drops, for every D5 match, what is not the measurement's window: a model's long context that a pattern cut
at its thousands separator ("max context: 262,144 tokens" read as 262) in a sentence without a measuring
word; a match across a paragraph break
("49/100" then "Context: 40k"); a convention ("Most GGUFs are scored with 512 context windows"); a context
of 32K or more in a sentence without a measuring word (the model's or a deployment's: "262K context",
"context 163840"); a short form whose number is no multiple of 64 (a chunk index, "3x3090" GPUs); a
first-N-tokens that no measuring word goes with. :func:`perplexity_only` marks the windows of a perplexity
run (the caller keeps them when llama-perplexity, which scores both in one run, is named);
:func:`cjk_sentence` ends a sentence at a CJK full stop for the calibration veto.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from typing import Any

from kldcard.lint.read import context_labels, context_written, eval_text, record_fields, runtime_roles
from kldcard.lint.read.numbers import BOUND_THOUSANDS, COMMA_THOUSANDS, THOUSANDS, THOUSANDS_SEPARATOR, parse_int
from kldcard.lint.read.sentence_terms import has
from kldcard.lint.read.terms import KL_MENTION, alternation

I = re.IGNORECASE | re.ASCII
# what a length per unit is counted in: "512 tokens per chunk", "256 tokens per passage" (evidence_patterns.D5 reads
# the phrase, read.values its length)
PER_UNIT = r"(?:chunk|window|row|sequence|context|passage|document)"  # not "prompt", "sample": a generation's cap
# ... nor a length a verb of generation makes ("emits 256 tokens per passage", "generated 512 tokens per document"):
# a look-behind for each, placed before the count
# (and not inside a number: "4096 tokens" is not read from its "96", "1,024" not from its "024"; not "sampled", which
# also means chosen for scoring: "we sampled 512 tokens per document from WikiText and scored them")
GENERATED_BEFORE = "(?<![\\d,.])" + "".join(rf"(?<!\b{verb} )" for verb in (
    "generates", "generated", "generate", "generating", "emits", "emitted", "emit", "emitting", "produces", "produced",
    "producing", "decodes", "decoded", "decoding", "writes", "wrote", "writing"))

# "context length" in the card languages, written before the number
CONTEXT_WORDS: dict[str, tuple[str, ...]] = {
    "zh": ("上下文长度", "上下文長度", "上下文窗口", "上下文"),
    "ja": ("コンテキスト長さ", "コンテキスト長", "コンテキストサイズ", "コンテキスト", "文脈長", "長文脈"),
    "ko": ("컨텍스트 길이", "컨텍스트", "문맥 길이"),
    "es": ("longitud de contexto", "longitud del contexto", "ventana de contexto", "contexto de", "contexto"),
    "pt": ("comprimento de contexto", "comprimento do contexto", "janela de contexto", "contexto de", "contexto"),
    "it": ("lunghezza del contesto", "lunghezza di contesto", "finestra di contesto", "contesto di", "contesto"),
    "fr": ("longueur de contexte", "longueur du contexte", "fenêtre de contexte", "contexte de", "contexte"),
    "de": ("Kontextlänge", "Kontextfenster", "Kontext von"),
    "ru": ("длина контекста", "длиной контекста", "окно контекста", "контекст"),
}
N = r"(" + BOUND_THOUSANDS + r"|\d{3,6})"  # a length: "2048", "2,048", "2.048" (a European separator)
# a window, a chunk or a piece of text in the card languages (the word that takes a length: "ventanas de 128 tokens")
WINDOW_WORDS = (r"fragmentos?|ventanas?|segmentos?|bloques?|trozos?|janelas?|blocos?|trechos?|fenêtres?|segments?|blocs?|"
                r"morceaux|Fenster[n]?|Abschnitten?|Blöcken?|окна|окон|окно|фрагментов|фрагмента|фрагмент")
PATTERNS = [
    # windows × length: "4 × 2,048 tokens", "10 x 2,048 WikiText tokens", "64 chunks × 512"
    # (what was counted may take a few words: "100 Simple English Wikipedia passages x 256 tokens")
    TOKENS_PRODUCT := re.compile(r"(?<![\w.,])(\d{1,6})\s*(?:[a-z-]+\s+){0,4}?[×x]\s*" + N + r"\s*(?:[A-Za-z-]+\s+)?tokens\b", I),
    UNITS_PRODUCT := re.compile(r"(?<![\w.,])(\d{1,6})\s*(?:chunks?|windows?|rows?|sequences?|segments?)\s*[×x]\s*" + N + r"(?!\w|[,.]\d)", I),
    # "openwebtext 8x2048", "10×512", "wikitext-2 (40 x 512; ...)": windows × length (not "3x3090" or "2 x 3090" GPUs,
    # not "1920x1080": see SHORT)
    BARE_PRODUCT := re.compile(r"(?<![\w.,])(\d{1,3})(?:\s*×\s*|x|[ \t]x[ \t])(\d{3,5})(?!\w|[,.]\d)(?!\s*(?:GB|MB|px|pixels|images?))", I),
    # a compound or a short form: "5,120-context", "the first 2,048 tokens", "chunk 2048", "`c512`",
    # "max_length=1024", "--seq-len 4096"
    re.compile(r"(?<![\w.,])" + N + r"-context\b", I),
    FIRST := re.compile(r"\bfirst\s+" + N + r"\s+tokens\b", I),
    CHUNK := re.compile(r"\bchunk(?:[ _=:]|\s+size\s+)?(\d{3,5})\b", I),
    C_FORM := re.compile(r"(?<![\w.\-/])c(\d{3,5})\b"),
    re.compile(r"\bmax[_-]?len(?:gth)?\s*[=:]?\s*(\d{3,6})\b|--seq[-_]len(?:gth)?[= ]\s*(\d{3,6})\b", I),
    # a thousands separator after the usual labels: "context length of 4,096", "n_ctx = 4,096", "ctx-size 4096"
    re.compile(r"\b(?:context(?:[ _](?:length|size|window))?|n_ctx|ctx(?:-size)?|seq(?:uence)?[ _]len(?:gth)?)\s*(?:of|=|:)?\s*"
               r"(" + COMMA_THOUSANDS + r"|(?<=ctx-size )\d{3,6})\b", I),
    # "8K-token windows" ("4k windows" may be a count); "each sequence is 1024 tokens long", "windows are 2048 tokens"
    re.compile(r"(?<![\w.,])(\d{1,3}\s*[kK])[- ]tokens?\s+(?:windows?|chunks?|sequences?|segments?|contexts?)\b", I),
    re.compile(r"\b(?:sequence|window|chunk|row|segment)s?\s+(?:is|are|was|were)\s+" + N + r"\s+tokens\b", I),
    # "sequence length of 2048", "`seq_len` 256", "window size 1024", "block size 2048" (a multiple of 64: see SHORT)
    SIZE := re.compile(r"\b(?:sequence|seq|window|block)[ _]?(?:length|len|size)`?\s*(?:of\s*)?[=:]?\s*`?(\d{3,5})\b", I),
    # a length before what was scored, a name or label between: "2,048-token `final-0000` window", "1024-token
    # captures", "a ~493-token long prompt"
    re.compile(r"(?<![\w.,])~?" + N + r"-token\s+(?:`[^`\n]{1,40}`\s+|[a-z][\w-]*\s+)?"
               r"(?:windows?|chunks?|sequences?|segments?|captures?|prompts?|inputs?|excerpts?|passages?)\b", I),
    # windows of a length in the card languages: "60 fragmentos de 2.048 tokens", "fenêtres de 512 tokens", what they
    # are cut from between ("ocho ventanas de texto de 128 tokens", "fragmentos de wikitext de 512 tokens"); and the
    # length per window ("128 tokens por ventana", "512 jetons par fenêtre", as evidence_patterns' "512 tokens per chunk")
    re.compile(r"\b(?:" + WINDOW_WORDS + r")\s+(?:de\s+[\w-]+\s+)?(?:de|von|à|по|из)\s+" + N + r"\s+(?:tokens?|Token|токен\w*)\b", re.I),
    re.compile(r"(?<![\w.,])" + N + r"\s+(?:tokens?|Token|jetons?|токен\w*)\s+(?:por|par|pro|на)\s+(?:cada\s+)?(?:" + WINDOW_WORDS + r")\b", re.I),
    # a bound or a range given to what was scored, a word before "tokens": "prefixes of 1500-4000 tokens", "contexts of at
    # most 2,048 prompt tokens" (the longest is the context)
    re.compile(r"\b(?:windows?|chunks?|sequences?|contexts?|prefix(?:es)?|prompts?)\s+of\s+(?:(?:at\s+most|up\s+to|about|around|~)\s*)?"
               r"(?:" + N + r"|(\d{2}))(?:\s*[-–]\s*" + N + r")?\s+(?:prompt\s+|input\s+)?tokens\b", I),
    # a length in k with a decimal, a word or two before the unit: "~3.5K-token teacher-forced sequences"
    re.compile(r"(?<![\w.,])~?(\d{1,3}(?:\.\d)?\s*[kK])-token\s+(?:[\w-]+\s+){0,2}?(?:windows?|chunks?|sequences?|segments?|contexts?|prompts?)\b", I),
    # "256–1024 token prefills", "a 64,000-token prefill": the prompt fed before the scored tokens
    re.compile(r"(?<![\w.,])~?" + N + r"[- ]tokens?\s+prefills?\b", I),
    # the card languages, the label before the number (a table row's cells between): "| Longitud de contexto | 4096 |"
    CARD_LANGUAGES := re.compile(r"(?:" + alternation(CONTEXT_WORDS) + r")[\s|:=*：（(]*(?:de\s+|of\s+)?" + r"(\d{1,3}(?:[,.]\d{3})+|\d{3,6}|\d{1,3}\s*[kK])(?!\w|[,.]\d)", I),
]
# several lengths: "contexts of 512, 2048 and 8192 tokens", "at 512/2048/8192 context", "n_ctx ∈ {512, 4096}"
# (no thousands separator inside a list: "," separates its items, and reading both ways backtracks exponentially)
LIST_N = r"(?<![\d,.])(\d{3,6}|\d{1,3}\s*[kK])(?![\d.])"
SEP = r"\s*(?:,|/|\band\b|\bor\b|&)\s*"
LIST = re.compile(
    r"\b(?:contexts?|ctx|n_ctx|context (?:lengths|sizes))\s*(?:of|=|:|∈|in|at)?\s*[{\[(]?\s*" + LIST_N + r"(?:" + SEP + LIST_N + r"){1,7}|"
    r"(?<![\w.,])" + LIST_N + r"(?:" + SEP + LIST_N + r"){1,7}\s*(?:-token\s+|tokens?\s+)?(?:contexts?|ctx)\b",  # at most 8
    I,
)
# a table's context column or row: "| Quant | ctx | Mean KLD |" over "| Q4_K_M | 512 | 0.0231 |"; "| Context | 4096 |"
CTX_LABEL = (r"(?:n_ctx|ctx|context(?:[ _](?:length|size|window|len))?|window(?:[ _](?:size|length))?|"
             r"seq(?:uence)?[ _]?len(?:gth)?|max[ _]len(?:gth)?)")
CELL_N = r"[ \t]*\**(" + COMMA_THOUSANDS + r"|\d{3,6}|\d{1,3}\s*[kK])\**[ \t]*\|"
MEASURED_HEADER = r"(?=[^\n]*(?:(?<![A-Za-z])(?:KLD?|PPL)(?![A-Za-z])|perplexity|KL[- ]div))"
COLUMNS = [
    re.compile(
        r"^" + MEASURED_HEADER + r"\|(?:[^|\n]*\|){%d}[ \t]*\**" % k + CTX_LABEL + r"\**(?:\s*\(tokens\))?[ \t]*\|[^\n]*\n"
        r"\|[ \t:|-]+\n\|(?:[^|\n]*\|){%d}" % k + CELL_N,
        re.I | re.M,
    )
    for k in range(6)
]
ROW = re.compile(r"^\|[ \t]*\**" + CTX_LABEL + r"\**(?:\s*\(tokens\))?[ \t]*\|" + CELL_N, re.I | re.M)
# a length a run is named by: "_ctx2048_", "ctx-4096", "/c4096_" in a file path or run name (an underscore or a
# dash is no word boundary there); a multiple of 64, as the other short forms
RUN_NAME = re.compile(r"(?<![A-Za-z0-9])(?:ctx|c)[-_]?(\d{3,6})(?![0-9A-Za-z])", I)
# the length the scores were taken at: "at 2048 tokens", "@ 128 tokens", "à 2 048 jetons" (a space as the French
# thousands separator); not a speed ("at 512 tokens/s") nor a generation's cap ("capped at 256 tokens"); a multiple of 64
AT_TOKENS = re.compile(r"(?<!capped )(?<!limited )(?<!stopped )(?<!truncated )(?:\bat|@|(?<!\w)à)\s+~?(" + THOUSANDS + r"|\d{3,6})\s*(?:tokens?|jetons?)\b(?!\s*/|\s+(?:per|par)\s)", I)
PATTERNS += [LIST, *COLUMNS, ROW, RUN_NAME, AT_TOKENS]
PATTERNS += context_written.PATTERNS  # "512-ctx", "--seqlen 2048", "ctx 8k", "4K 上下文", "序列长度 2048"
PATTERNS += context_labels.PATTERNS  # a bare length labelling a KL figure: "At 8192, ... mean KLD", "(16K: 6.9e-9)"
PATTERNS += record_fields.PATTERNS[5]  # a record's field: `"n_ctx": 4096`, `seq_len: 2048` (read.record_fields)
SHORT = (BARE_PRODUCT, CHUNK, C_FORM, SIZE, RUN_NAME, AT_TOKENS)  # "chunk 2048", "c512": a window length is a multiple of 64
KL_TERM = re.compile(KL_MENTION, I)
MEASUREMENT = re.compile(
    KL_MENTION + r"|(?<![A-Za-z_])PPL(?![A-Za-z_])|\bmeasur|\bscor(?:e|ed|es|ing)\b|\bevaluat|\bperplexity\b|"
    r"\bpositions?\b|\blogits?\b|\bteacher\b|\btests?\b|\bbenchmarks?\b",
    I,
)


QUANT_BLOCK_MAX = 512  # a quantization block holds 16 to 256 weights (k-quant super-blocks, GPTQ/AWQ groups, FP8 tiles)
KILO = re.compile(r"^\s*\d{1,3}\s*[kK]\s*$")


def kilo(n: int, written: str) -> int:
    """A context written in k is in units of 1024 tokens ("4k context" = 4096, "128K" = 131072)."""
    return n // 1000 * 1024 if KILO.match(written) and n % 1000 == 0 else n


def _numbers(m: re.Match[str]) -> list[int]:
    return [kilo(parse_int(g) or 0, g) for g in m.groups() if g]


GENERAL = re.compile(r"(?:^|[.:;][*_]*\s+)[\s*_>-]*(?:most|many)\s+(?:\w+\s+){0,2}?(?:are|is|get|use)\b|\b(?:commonly|conventionally|by convention|the usual)\b", I)
LONG = 32000  # a context this long is a model's or a deployment's unless the sentence speaks of a measurement
# a count with its thousands separators (numbers.THOUSANDS: as N writes them, and the French and SI style's space, "131 072")
COUNT = re.compile(r"(?<![\w.,])(" + THOUSANDS + r"(?!\d)|\d+)\s*([kK]\b)?")


def _largest(text: str) -> int:
    return max((int(re.sub(r"\D", "", g)) * (1000 if k else 1) for g, k in COUNT.findall(text)), default=0)


# the rest of a number the match cut at a thousands separator ("context: 262" of "262,144", "262 144")
CUT = re.compile(r"(?:" + THOUSANDS_SEPARATOR + r"\d{3})+(?!\d)")


# a server started on the match's line, before it: "llama-server -m ... -c 16384", "vllm serve <repo> --max-model-len",
# "1bit serve -m ... --ctx-size 8192", "python -m sglang.launch_server ... --context-length"
SERVE_COMMAND = re.compile(r"(?:^|[\s/`])(?:llama-server|[\w.\-]+\s+serve|(?:sglang\.)?launch_server)(?=\s)", re.IGNORECASE | re.MULTILINE)


# the bare word for context ("contexto 2048", "contexte 4096") is also how a deployment's context is given; in a sentence
# about serving speed it is that (as context_written.SERVED, in the Romance card languages)
BARE_WORD = re.compile(r"conte[xs]te?o?\b(?!\s+d[ei]\b)", I)  # "contexto", "contexte", "contesto" (Italian)
SERVED_ROMANCE = re.compile(r"\brendimiento\b|\bservicio\b|\bvelocidad|\bvelocidade|\bdesempenho\b|\bdébit\b|\bvitesse\b|\bservice\b|"
                            r"\bvelocità|\bprestazioni\b|\bservizio\b", re.I)


# a training run's numbers: "1,200 steps of single 128-token chunks", "fine-tuned on 4096-token sequences" -- the length
# the model was trained on, not the one a KL was measured at (plain grammar: optimiser steps over chunks), unless the
# sentence also speaks of a measurement
TRAINING_RUN = re.compile(
    r"\b(?:train(?:ing|ed|s)?|fine-?tun(?:e|ed|es|ing)|pre-?train(?:ing|ed)?)\b|"
    r"(?<![\w.,])\d[\d,]*\s+(?:optimi[sz]er\s+|gradient\s+|training\s+)?steps\s+of\b",
    I,
)


def vetoed(text: str, sentence: str, m: re.Match[str]) -> bool:
    if re.made_by(m, record_fields.PATTERNS[5]) and record_fields.vetoed(text, m):
        return True  # a field of a record that names no KL, or of a model's config
    if re.made_by(m, context_labels.PATTERNS) and context_labels.vetoed(cjk_sentence(text, sentence, m), m):
        return True  # no unit: a bare length is one only beside a KL in its sentence
    if re.made_by(m, context_written.PATTERNS):  # its CJK forms: the clause up to a CJK full stop is the sentence
        sentence = cjk_sentence(text, sentence, m)
    cut = CUT.match(text, m.end()) if re.search(r"(?<!\d)\d{1,3}$", m.group(0)) else None
    if cut and _largest(m.group(0).rsplit(None, 1)[-1] + cut.group(0).replace(" ", ",")) >= LONG and not has(MEASUREMENT, sentence):
        return True  # "max context: 262,144 tokens", "Longitud de contexto | 262 144 tokens": the model's
    if runtime_roles.speed_table_row(text, m.start()) or runtime_roles.usage_section(text, m):
        return True  # a speed table's row ("| 260k, ~30k-token chunk | 106 |"), a how-to-run section's command line
    if SERVE_COMMAND.search(text, text.rfind("\n", 0, m.start()) + 1, m.start()):
        return True  # a server's command line ("vllm serve ... --max-model-len 8192"): the deployment's context
    if re.search(r"\n[ \t]*\n", m.group(0)):  # a number of the paragraph before ("49/100" then "Context: 40k")
        return True
    if has(TRAINING_RUN, sentence) and not has(MEASUREMENT, sentence):
        return True  # "1,200 steps of single 128-token chunks": a training run's length, not the measurement's
    if has(GENERAL, sentence):  # "Most GGUFs are scored with 512 context windows": a convention, not this run
        return True
    if _largest(m.group(0)) >= LONG and not has(MEASUREMENT, sentence):
        return True  # "262K context", "context 163840" said of the model or a deployment, not of a measurement
    if context_written.calibration_sentence(sentence):
        return True  # "Para la calibracion se usan ventanas de 2048 tokens": the calibration's windows
    if context_written.in_step_section(text, m.start(), sentence):
        return True  # the settings of an imatrix / calibration run ("### 校正" then "window=1024, stride=1024"), a training or deployment
    if re.made_by(m, context_written.PATTERNS) and (context_written.SERVED.search(sentence) or context_written.not_measured(text, m)):
        return True  # "3.5K 上下文下预填充 580 tok/s": the context of a speed run; "128K 上下文下的……尚未测量": not run
    clause = cjk_sentence(text, sentence, m)
    if has(context_written.SPEED_CLAUSE, clause) and not has(KL_TERM, clause):
        return True  # "with a 4k-token context; memory is the GPU memory in use", "(context 131072)、... 109.8トークン/秒": a speed run's
    if m.re is CARD_LANGUAGES.compiled and BARE_WORD.match(m.group(0)) and (context_written.SERVED.search(sentence) or SERVED_ROMANCE.search(sentence)):
        return True  # "Rendimiento de servicio (..., contexto 32.768 tokens, ...)": the bare word there is the deployment's
    if not re.made_by(m, PATTERNS):
        return False
    numbers = _numbers(m)
    length = numbers[-1] if numbers else 0
    if re.made_by(m, SHORT) and length % 64:
        return True
    if m.re is SIZE.compiled and m.group(0).lower().startswith("block") and length < QUANT_BLOCK_MAX:
        return True  # "with a block size of 128": a quantization's block (32 to 256 weights), not a window
    return m.re is FIRST.compiled and not MEASUREMENT.search(sentence)


def read(span: str) -> dict[str, Any]:
    """``n_ctx`` (and ``chunks`` for windows × length) as one of :data:`PATTERNS` writes it in ``span``."""
    for p in PATTERNS:
        if any(p is q for q in context_labels.PATTERNS):
            if found := context_labels.read(span):
                return found
            continue
        m = p.search(span)
        if m is None:
            continue
        numbers = [n for n in _numbers(m) if n]
        if not numbers:
            continue
        out: dict[str, Any] = {"n_ctx": numbers[0] if p is LIST else numbers[-1]}
        if p in (TOKENS_PRODUCT, UNITS_PRODUCT, BARE_PRODUCT) and len(numbers) == 2:  # windows × length
            out["chunks"] = numbers[0]
        return out
    return {}


CJK_STOPS = "。！？"


def cjk_sentence(text: str, sentence: str, m: re.Match[str]) -> str:
    """The sentence of ``m`` cut at the CJK full stops (the sentence splitter ends sentences at ". "
    only: "...、context2048。...calibration250×2048、..." is one "sentence" there, two here)."""
    if not any(c in sentence for c in CJK_STOPS):
        return sentence
    s0 = text.rfind(sentence[:40], max(0, m.start() - len(sentence)), m.start() + 1)
    if s0 < 0:
        return sentence
    s1 = s0 + len(sentence)
    lo = max(text.rfind(c, s0, m.start()) for c in CJK_STOPS)
    his = [h for h in (text.find(c, m.end(), s1) for c in CJK_STOPS) if h >= 0]
    return text[lo + 1 if lo >= 0 else s0 : min(his) + 1 if his else s1]



HEADING = re.compile(r"[ \t]{0,3}#{1,6}[ \t]")
PERPLEXITY = re.compile(r"(?<![A-Za-z_])PPL(?![A-Za-z_])|perplexit", I)


def perplexity_only(text: str, m: re.Match[str]) -> bool:
    """The match's clause is about a perplexity run and names no KL ("Perplexity over 32 × 4096 tokens of
    wikitext"): its windows are the perplexity's. (Only where no tool that scores both on one run, i.e.
    llama-perplexity, is named or printed: the caller decides.)"""
    lo, hi = eval_text.clause(text, m.start(), m.end())
    if m.group(0).startswith("|"):  # a table's row is one record: a KL column anywhere in it ("| Tokens | PPL | Mean KLD |") binds it
        lo, hi = text.rfind("\n", 0, m.start()) + 1, (text.find("\n", m.end()) + 1 or len(text) + 1) - 1
    line0 = text.rfind("\n", 0, m.start()) + 1
    if HEADING.match(text, line0):  # a heading is one title: its parenthesis qualifies its head ("### Perplexity (…, 2048-token windows)")
        lo, hi = line0, (text.find("\n", m.end()) + 1 or len(text) + 1) - 1
    return bool(PERPLEXITY.search(text, lo, hi)) and not eval_text.KL_TERM.search(text, lo, hi)
