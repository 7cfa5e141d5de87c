"""D5, the context length, in more of the ways people write it (beside kldcard.lint.read.context):

- a compound with "ctx": "512-ctx chunks", "8k-ctx", "ctx-4096";
- an option or key of the tools that evaluate: ``--ctx 4096``, ``-ctx 4096``, ``--n-ctx 2048``,
  ``--context-length 4096``, ``--seqlen 2048``, ``seqlen=2048``, ``n_ctx: 4k``;
- the length in k after its label: "ctx 8k", "context: 4K", "a context window of 8k";
- the length before the word for context in the card languages: "4096 トークンのコンテキスト", "4K 上下文",
  "2048 토큰 컨텍스트", "8k de contexto", "4k de contexte", "8k Kontext";
- "sequence length" and "window length" in the card languages before the number: "序列长度 2048",
  "シーケンス長 1024", "시퀀스 길이 2048", "longitud de secuencia 2048", "longueur de séquence 1024",
  "Sequenzlänge 2048", "длина последовательности 2048", "comprimento de sequência 2048", "窗口长度 512".
- prompts or samples counted, then each one's length: "210 samples of 512 tokens", "16 prompts de 512 tokens";
- units counted, then the length they were taken at: "61/64 tokens at 2K", "12 chunks at 2K";
- prompts, then the range of their lengths: "prompts (39–71 tokens)", "invites de 526-547 jetons".

Each pattern's last group is the length (k = 1024 tokens: :func:`kldcard.lint.read.context.kilo`); the D5 vetoes
of kldcard.lint.evidence (serving sentences, calibration-only sentences, long contexts without a measuring word)
apply to them as to every D5 pattern.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.numbers import BOUND_THOUSANDS, COMMA_THOUSANDS
from kldcard.lint.read.sentence_terms import has
from kldcard.lint.read.terms import KL_MENTION, alternation

N = r"(" + BOUND_THOUSANDS + r"|\d{3,6}|\d{1,3}\s*[kK])"  # "2048", "2,048", "2.048", "4k"
SEQUENCE_WORDS: dict[str, tuple[str, ...]] = {
    "zh": ("序列长度", "序列長度", "窗口长度", "窗口長度", "窗口大小"),
    "ja": ("シーケンス長", "系列長", "ウィンドウ長", "ウィンドウサイズ"),
    "ko": ("시퀀스 길이", "윈도우 크기"),
    "es": ("longitud de secuencia", "longitud de la secuencia", "tamaño de ventana"),
    "pt": ("comprimento de sequência", "comprimento da sequência", "tamanho da janela"),
    "fr": ("longueur de séquence", "longueur de la séquence", "taille de fenêtre"),
    "de": ("Sequenzlänge", "Fensterlänge", "Fenstergröße"),
    "ru": ("длина последовательности", "длиной последовательности", "размер окна"),
}
CONTEXT_AFTER = r"(?:上下文|コンテキスト|文脈|컨텍스트|문맥)"
PATTERNS: list[re.Pattern[str]] = [
    # "512-ctx chunks", "8k-ctx", "ctx-4096"
    re.compile(r"(?<![\w.,])" + N + r"-ctx\b|\bctx-(\d{3,6})\b", re.I),
    # an evaluating tool's option or key
    re.compile(
        r"(?:^|[\s`(])(?:--ctx|-ctx|--n[-_]ctx|--context[-_]length|--seqlen|--seq)[= ]\s*" + N + r"(?!\w|[,.]\d)|"
        r"\b(?:seqlen|n_ctx)\s*[=:]\s*" + N + r"(?!\w|[,.]\d)",
        re.I,
    ),
    # the length in k after its label: "ctx 8k", "context: 4K", "a context window of 8k"
    re.compile(r"\b(?:ctx|context(?:\s+(?:window|length|size))?)\s*(?:of\s+|[=:]\s*)?(\d{1,3}\s*[kK])\b(?![-\w])", re.I),
    # the length before the word for context: "4096 トークンのコンテキスト", "4K 上下文", "8k de contexto"
    re.compile(r"(?<![\w.,])" + N + r"\s*(?:tokens?|トークン|토큰|个?token)?\s*(?:の|的)?\s*" + CONTEXT_AFTER, re.I),
    re.compile(r"(?<![\w.,])(\d{1,3}\s*[kK]|\d{3,6})\s+(?:tokens?\s+)?(?:de\s+contexto|de\s+contexte|Kontext|контекста)\b", re.I),
    # a length before a unit of scored text the other patterns do not list: "2048-token samples", "1,024-token
    # slices", "512-token blocks"; "sequences of length 2048", "windows of length 512"
    # (a word between, as "512-token WikiText prefix", "2,048-token calibration blocks"; not "per", "each", "for" or
    # "generated": "512 tokens per sample" is a generation's cap, read.context.PER_UNIT the units that are not)
    re.compile(r"(?<![\w.,])~?" + N + r"[- ]tokens?\s+(?:(?!(?:per|each|every|a|an|for|of|in|generated|sampled)\s)[A-Z][\w-]*\s+)?(?:blocks?|samples?|slices?|prefix(?:es)?|documents?|examples?|snippets?|spans?|pieces?)\b", re.I),
    # the length as a code span before the word for context: "`16k` context", "`4096`-token context" (a particle of
    # the card language may follow without a space: "`16k` context로")
    re.compile(r"`(\d{1,3}\s*[kK]|\d{3,6})`[- ]?(?:tokens?\s+)?(?:context|ctx)(?![A-Za-z])", re.I),
    re.compile(r"\b(?:sequences?|windows?|chunks?|contexts?|samples?|segments?)\s+of\s+(?:length|size)\s+" + N + r"(?!\w|[,.]\d)", re.I),
    re.compile(r"\bseqlen\s+" + N + r"(?!\w|[,.]\d)", re.I),
    # the context word, a particle or preposition, then the number: "上下文长度为 4096", "コンテキスト長は2048",
    # "컨텍스트 길이는 4096", "Kontextlänge von 4096", "с контекстом 4096"
    re.compile(
        r"(?:上下文(?:长度|長度|窗口)?|コンテキスト(?:長さ?|サイズ)?|컨텍스트(?:\s*길이)?|Kontext(?:länge|fenster)?|контекст(?:ом|а)?)"
        r"\s*(?:为|為|是|は|が|を|는|은|von|bei|mit|в|длиной)?\s*[:：]?\s*" + N + r"(?!\w|[,.]\d)",
        re.I,
    ),
    # "sequence length" / "window length" in the card languages, before the number
    re.compile(r"(?:" + alternation(SEQUENCE_WORDS) + r")[\s|:=*：（(]*(?:de\s+|of\s+|von\s+)?" + N + r"(?!\w|[,.]\d)", re.I),
    # each text or window's length after the count of them: "six kinds ... of 3,500 tokens each", "prompts of 512 tokens
    # each" (as "512 tokens per chunk")
    re.compile(r"\bof\s+~?" + N + r"\s+tokens?\s+each\b", re.I),
    # windows counted, then their length: "92 chunks of held-out text at 4096 tokens", "40 windows of 2,048 tokens";
    # and prompts or samples so counted, each one's length after "of" or the Romance "de": "210 samples of 512 tokens",
    # "16 prompts de 512 tokens" (catalystsec, beamster)
    re.compile(r"(?<![\w.,])(?:" + COMMA_THOUSANDS + r"|\d+)\s+(?:chunks|windows|sequences|segments)\b[^.;:\n]{0,40}?\b(?:at|of)\s+"
               + N + r"[- ]tokens?\b|"
               r"(?<![\w.,])(?:" + COMMA_THOUSANDS + r"|\d+)\s+(?:prompts|samples|texts|passages|documents|excerpts)\s+(?:of|de)\s+~?"
               + N + r"[- ]tokens?\b", re.I),
    # prompts or windows, then the range of their lengths: "prompts (39–71 tokens)", "invites de 526-547 jetons" (a
    # range is each one's length, never a total; hipengine h8, acvram h10); the longest is the context
    re.compile(r"\b(?:prompts?|invites?|samples?|sequences?|windows?|passages?|textos?|muestras?|fen[êe]tres?|ventanas?|chunks?|"
               r"documents?|excerpts?)\s*(?:\(|of\s+|de\s+)~?\d{2,6}\s*[-–]\s*(\d{2,6})[- ](?:tokens?|jetons?)\b", re.I),
    # units counted, then the length they were taken at: "agreed on 61/64 tokens at 2K", "12 chunks at 2K", "512 tokens
    # at 92k" (yesno h11, metal h13, kvcache dev; a bare number only before a stop: "40 windows at 4096.")
    # (the count is bounded, "61/64" or "1,024": an unbounded run of digits and separators backtracks quadratically)
    re.compile(r"(?<![\w.,/])(?:" + COMMA_THOUSANDS + r"|\d{1,6})(?:/\d{1,6})?\s+(?:[a-z][\w-]*\s+)?(?:tokens|chunks|windows|positions|prompts|sequences)\s+(?:at|@)\s+"
               r"(?:(\d{1,3}\s*[kK])(?![\w-])|(\d{3,6})(?=\s*[,;.)\]](?!\d)|\s*$))", re.I | re.M),
]
# a sentence about speed, memory ("Memoria a 4k de contexto") or serving: the context in it is the deployment's (as evidence.SERVING for "64k
# context"), in the card languages
# (SPEED: a speed unit, throughput or memory; SERVED adds serving and the prefill and decode words, which also name
# the weights measured ("the Q4_K_M weights that we actually serve") and the phases a KL run feeds its windows through
# ("prefill chunk 2048", "256–1024 token prefills"))
SPEED_WORDS = (r"\bt/s\b|tok(?:ens)?/s|(?:トークン|토큰|токенов|token)\s*/\s*(?:秒|초|с\b)|\bthroughput|\bspeed|\bVRAM\b|"
               r"\bmemory\b|\bmemoria\b|\bmemória\b|\bmémoire\b|\bSpeicher|памят|内存|メモリ|吞吐|速度|显存|顯存|スループット|메모리|처리량")
SPEED = re.compile(SPEED_WORDS, re.I)
# a clause about speed (with no KL term in it: context.vetoed only), its comparatives and the card languages' words of
# speed too ("a 2048-token prompt is 3.5% slower"); not SPEED, which vetoes whole sentences elsewhere, KL or not
SPEED_CLAUSE = re.compile(SPEED_WORDS + r"|\bslower\b|\bfaster\b|\blatency\b|\bvelocidad\b|\bvitesse\b|\bGeschwindigkeit", re.I)
SERVED = re.compile(SPEED_WORDS + r"|\bserv(?:e|es|ing)\b|\bprefill|\bdecod(?:e|ing)\b|预填充|預填充|解码|解碼|プリフィル|デコード", re.I)
# what follows the length in its clause says the run at that length has not been done
NOT_MEASURED = re.compile(r"尚未|未测|未測|まだ|\bnot\s+(?:yet\s+)?(?:been\s+)?(?:measured|tested|run|evaluated)\b|\buntested\b", re.I)
# the end of the clause after a length, read forward: a stop of the card languages (the CJK forms are read per CJK
# clause) or a line break; a "." only before a space ("0.5", "llama.cpp" end nothing)
CLAUSE_END = re.compile(r"[。；;！？!?\n]|\.\s")


def not_measured(text: str, m: re.Match[str]) -> bool:
    """Whether the rest of the match's clause (to the next stop, at most 80 characters) says it was not measured."""
    rest = text[m.end() : m.end() + 80]
    end = CLAUSE_END.search(rest)
    return bool(NOT_MEASURED.search(rest[: end.start() if end else len(rest)]))


# a section about another step than the measurement (its heading names calibration or an imatrix, training, or a
# deployment, and no KL term): a window, stride or context there is that step's, not the measurement's ("### 校正" then
# "window=1024, stride=1024"; "## Arquitectura y entrenamiento" then "límite de contexto 8.192"; "## Deployment" /
# "### Pins" then "262,144-token context, ... 256-token chunks"). A subheading that names no step either way is read
# by its parent heading's words (plain document structure).
STEP_HEADING = re.compile(
    r"calibrat|imatrix|importance matrix|校正|校准|キャリブレーション|étalonnage|Kalibrier|"
    r"\btrain(?:ing)?\b|fine-?tun|entrenamiento|treinamento|entraînement|训练|訓練|学習|학습|обучени|"
    r"\bdeploy(?:ment|ing)?\b|despliegue|déploiement|部署|デプロイ|배포",
    re.I,
)
KL_HEADING = re.compile(KL_MENTION + r"|perplex|PPL|evaluat|measur|精度|评估|評価", re.I)
# the calibration word in the card languages (the English "calibrat..." is evidence._calibration_only's): a sentence
# that speaks of calibration and of no measurement gives the calibration's windows ("Para la calibracion se usan
# ventanas de 2048 tokens"), as its English form does
CALIBRATION_WORDS = re.compile(r"calibraci[óo]n|calibra[çc][ãa]o|étalonnage|Kalibrier|калибровк|キャリブレーション|캘리브레이션|校正|校准", re.I)
MEASURED_WORDS = re.compile(KL_MENTION + r"|perplej|perplex|PPL|evalua|[ée]valu|medi[dr]|mesur|gemessen|измер|評価|评估|测量|測定", re.I)
HEADING = re.compile(r"^[ \t]{0,3}(#{2,6})[ \t][^\n]*", re.M)  # not a title (a card named "... (imatrix)")


# a label that opens a block as a heading opens a section (plain document structure): a bold label alone on its line
# over its items ("- **训练配置**：" then "  - 序列长度：8K"; "**Calibration:**"), the block running to the next blank
# line; a comment banner in code ("#  CALIBRACION" between two rule lines, "# --- calibration ---"), the block running
# through the comment lines below it
LABEL_LINE = re.compile(r"^[ \t]*(?:[-*+][ \t]+)?\*\*([^*\n]{1,40}?)[:：]?\*\*[ \t]*[:：]?[ \t]*$")
COMMENT = re.compile(r"^[ \t]*(?:#+|//+)")
RULE = r"[-=─━*#~]{3,}"
BANNER_LINE = re.compile(r"^[ \t]*(?:#+|//+)[ \t]*(?:" + RULE + r"[ \t]*)?([^\W\d_][^\n]{0,38}?)[ \t]*(?:" + RULE + r")?[ \t]*$")
RULE_LINE = re.compile(r"^[ \t]*(?:#+|//+)[ \t]*" + RULE + r"[ \t]*$")
STEP_WORDS = re.compile(STEP_HEADING.pattern + "|" + CALIBRATION_WORDS.pattern, re.I)
BLOCK_LINES = 40  # lines walked up to a block's label


def _banner(lines: list[str], i: int) -> bool:
    """Whether ``lines[i]`` is a comment banner: a short title between rule lines, or written between rules itself."""
    line = lines[i]
    if not BANNER_LINE.match(line) or RULE_LINE.match(line):
        return False
    if re.search(RULE + r"[ \t]*$", line) and re.match(r"^[ \t]*(?:#+|//+)[ \t]*" + RULE, line):
        return True  # "# --- calibration ---"
    return any(0 <= j < len(lines) and RULE_LINE.match(lines[j]) for j in (i - 1, i + 1))


def block_label(text: str, at: int) -> str | None:
    """The label of the list block or comment block ``at`` lies in (see :data:`LABEL_LINE`), if any."""
    start = text.rfind("\n", 0, at) + 1
    lines = text[max(0, start - 4000) : start].split("\n")[:-1]
    own = text[start : text.find("\n", at) if "\n" in text[at:] else len(text)]
    in_comment = bool(COMMENT.match(own))
    for k in range(len(lines) - 1, max(-1, len(lines) - 1 - BLOCK_LINES), -1):
        line = lines[k]
        if not line.strip() or (in_comment and not COMMENT.match(line)):
            return None  # the block ends at a blank line, a comment block at its first line of code
        if _banner(lines, k):
            return BANNER_LINE.match(line).group(1)  # type: ignore[union-attr]
        if HEADING.match(line):
            return None  # a heading opens a section (in_step_section reads it)
        if not in_comment and (label := LABEL_LINE.match(line)) is not None:
            return label.group(1)
    return None


def in_step_section(text: str, at: int, sentence: str = "") -> bool:
    """Whether ``at`` lies under a (sub)heading or in a labelled block (:func:`block_label`) about another step
    (calibration, training, deployment) that names no KL term or evaluation, in a sentence that names none either; a
    subheading that names neither is read by its parent."""
    if has(KL_HEADING, sentence):
        return False
    label = block_label(text, at)
    if label is not None and (KL_HEADING.search(label) or STEP_WORDS.search(label)):
        return not KL_HEADING.search(label)
    level = 7
    end = at
    while level > 2:
        start = text.rfind("\n#", 0, end)
        line_start = start + 1 if start >= 0 else (0 if text.startswith("#") else -1)
        if line_start < 0:
            return False
        h = HEADING.match(text, line_start)
        end = max(line_start - 1, 0)
        if not h or len(h.group(1)) >= level:
            if line_start == 0:
                return False
            continue
        if KL_HEADING.search(h.group(0)):
            return False
        if STEP_HEADING.search(h.group(0)):
            return True
        level = len(h.group(1))
    return False


def calibration_sentence(sentence: str) -> bool:
    """Whether ``sentence`` speaks of calibration in a card language and of no measurement."""
    return has(CALIBRATION_WORDS, sentence) and not has(MEASURED_WORDS, sentence)
