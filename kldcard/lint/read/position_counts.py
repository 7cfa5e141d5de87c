"""D6 counts as cards write them beyond :mod:`kldcard.lint.read.positions`: how many tokens were scored, said
as a plain token count, and how many windows, said with the card language's word for a window or a sample.

- a count of tokens said to be scored: "held-out 8192 tokens", "1020 tokens evaluados", "146,115 个计分词元"
  (:data:`TOKENS`); not a window's length ("windows of 2048 tokens", "2048 tokens per chunk": D5's), not a
  count below a thousand;
- the tokens a KL is taken over: "over ~250,000 tokens", "across 16,320 tokens", "sobre 4.092 tokens", "a held-out
  512-token eval slice" (:data:`OVER_TOKENS`, in a sentence that names the KL; CONVENTIONS rule 15b.1);
- tokens a measuring verb ran on, "n = N tokens": "measured on 65,536 tokens", "(n = 4096 tokens)" (:data:`MEASURED_ON`);
- the first or last N tokens, in the card languages: "the first 512 tokens of each prompt", "先頭 256 トークン",
  "primeros 64 tokens" (:data:`HEAD_TAIL`: scheme "head" or "tail");
- a token count in parentheses: "(2,919 tokens)", "(1020 tokens evaluados)" (:data:`PARENTHESISED`); windows by
  their length with the windows named: "32 prompts x 1024 tokens" (:data:`WINDOWS_BY_LENGTH`, no ``count``);
- a count column beside a KL column: "| Quant | Mean KLD | Tokens |", "| positions | KLD mean | KLD max |" (:data:`COLUMN`),
  also in a dataset viewer's header, each name with its type: "mean_kld float64 | ... | positions int64 |" (:data:`DATASET_COLUMN`);
- the count as a row of a label / value table whose other rows name the KL: "| Positions | 467 |" (:data:`ROW`);
- a count of windows or samples: "40-chunk KLD", "--num-samples 512", "num_samples=512", "40 fragmentos",
  "573 个评测片段", "96 logit位置" (:data:`WINDOWS`). Like a chunk count, it
  says how many windows were scored, not how many positions: it gives no ``count`` value.

Each is evidence only in a sentence that speaks of the measurement (positions.MEASUREMENT, checked by
positions.vetoed), and never in one about calibration (evidence.collect's veto for D6).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from typing import Any

from kldcard.lint.markdown import line_run
from kldcard.lint.read.numbers import BOUND_THOUSANDS, COMMA_THOUSANDS, THOUSANDS, parse_int
from kldcard.lint.read.terms import KL_MENTION

I = re.IGNORECASE

# a count of a thousand or more: "65,536", "65.536", "65 536", "8192", "250k"
BIG = r"(" + THOUSANDS + r"|\d{4,}|\d+(?:\.\d+)?\s*[kKM])"
TOKEN_WORDS = r"(?:tokens?|Tokens?|词元|詞元|个\s*token|個\s*token|トークン|토큰|токенов|токена)"
# tokens said to be scored, before or after the word, in the card languages: "held-out 8192 tokens", "1020 tokens
# evaluados", "146,115 个计分词元" (the tokens a KL is taken over, after a preposition: :data:`OVER_TOKENS`).
SCORED_BEFORE = r"(?:held-out|scored|evaluated|test|eval(?:uation)?|评测|評測|计分|計分|评分|評分)\s*"
SCORED_AFTER = r"\s+(?:evaluad[oa]s|avaliad[oa]s|évalués|bewertete|scored|evaluated|compared|de\s+prueba|de\s+teste)"
TOKENS = re.compile(
    r"(?<![\w.,\-])" + BIG + r"\s*[个個]?\s*(?:" + SCORED_BEFORE + TOKEN_WORDS + r"|" + TOKEN_WORDS + SCORED_AFTER + r")(?![\w-])"
    r"|" + SCORED_BEFORE.replace("\\s*", "") + r"\s+" + BIG + r"\s*" + TOKEN_WORDS + r"(?![\w-])(?!\s*(?:per|each|/|of\s+context|context|window))",
    I,
)
# tokens a measuring verb was run on ("measured on 65,536 tokens", "evaluated over 10k tokens", "n = 4096 tokens")
MEASURED_ON = re.compile(
    r"\b(?:measured|evaluated|scored|computed|compared)\s+(?:on|over|across)\s+~?" + BIG + r"\s*" + TOKEN_WORDS + r"(?![\w-])|"
    r"(?<![\w])[nN]\s*=\s*" + BIG.replace("\\d{4,}", "\\d{3,}") + r"\s*(?:tokens|positions)\b",
    I,
)
# the first or last N tokens, in the card languages: "the first 512 tokens of each prompt", "last 128 tokens",
# "先頭 256 トークン", "前 100 个 token", "primeros 64 tokens", "les 64 derniers tokens", "ersten 64 Token"
HEAD_TAIL = re.compile(
    r"\b(?P<e1>first|last|final)\s+(?P<n1>\d[\d,]*)\s+(?:scored\s+|generated\s+)?(?:tokens|positions)\b|"
    r"(?P<e2>先頭|最初の|冒頭|末尾|最後の|最后|前|后)\s*(?P<n2>\d+)\s*(?:个|個)?\s*(?:トークン|token|位置|词元)|"
    r"\b(?P<e3>primeros|primeras|últimos|primeiros|últimos|ersten|letzten)\s+(?P<n3>\d+)\s+(?:tokens?|Token|posiciones|posições|Positionen)\b|"
    r"\b(?P<n4>\d+)\s+(?P<e4>premiers|derniers)\s+(?:tokens|jetons|positions)\b",
    I,
)
HEAD_WORDS = ("first", "先頭", "最初の", "冒頭", "前", "primeros", "primeras", "primeiros", "ersten", "premiers")
# a count column beside a KL column, in any place of the header row: "| Quant | Mean KLD | Tokens |",
# "| positions | KLD mean (nats) | KLD max |", "| ... | KLD | # samples (n) |" (the KL column: :func:`vetoed`)
COLUMN = re.compile(
    r"^\|(?:[^|\n]*\|)*?[ \t]*\**(?:#\s*)?(?:positions?|(?:scored\s+)?tokens(?:\s+scored)?|n_tokens|chunks|windows|samples|n)\**"
    r"(?:\s*\([^)|\n]{0,20}\))?[ \t]*\|",
    I | re.MULTILINE,
)
# the same column in a dataset viewer's header, each name followed by its type and no leading bar ("group string |
# mean_kld float64 | ... | positions int64 |", the Hugging Face viewer's header as pasted): an integer column
DATASET_COLUMN = re.compile(
    r"^(?:[^|\n]*\|)*?[ \t]*(?:positions?|(?:scored_|total_|kld_|n_)?tokens|chunks|windows|samples)[ \t]+u?int\d{1,2}[ \t]*(?:\||$)",
    I | re.MULTILINE,
)
# what stands before a window's length, not a count ("windows of 2048 tokens", "-c 4096", "ctx 8192 tokens")
LENGTH_BEFORE = re.compile(
    r"(?:\bof|\bwindows?|\bchunks?|\bcontexts?|\bctx|-c|--ctx-size|\blength|\bseq\w*|\bsequences?|\bprompts?|\bup to|\bmax\w*|[×x*])\s*[:=]?\s*$", I
)
# words for a window in the card languages (English "chunks" is positions.D6's); prompt and sample counts are not read:
# the corpus labels read "1,000 ShareGPT prompts" as the text's size (prose_corpus blind2_vllm_transposed)
# and the words for windows and rows, as English "40 windows" / "125 rows" (evidence_patterns.D6): "25.500 filas"
WINDOW_WORDS = (r"(?:fragments|fragmentos|segments|segmentos|trozos|bloques|blocos|morceaux|Abschnitte|фрагментов|чанков|"
                r"ventanas|janelas|fenêtres|Fenster|filas|linhas|lignes|Zeilen)")
WINDOWS = re.compile(
    # "40-chunk KLD", "20-chunk PPL"
    r"(?<![\w.,])(\d+)-(?:chunk|window|sample|prompt)\b(?!-)|"
    # "--num-samples 512", "num_samples=512", "--n-prompts 64", "n_chunks: 100"
    r"(?<![\w])-{0,2}(?:num|n)[-_](?:samples|prompts|chunks|windows|sequences)\s*[=: ]\s*(\d+)\b|"
    # "40 fragmentos", "40 fragments" (a count in the card languages)
    r"(?<![\w.,])(" + BOUND_THOUSANDS + r"|\d+)\s+(?:[\w-]+\s+)?" + WINDOW_WORDS + r"\b|"
    # "573 个评测片段", "28 个片段", "40チャンク", "64 개 청크", "96 logit位置"
    r"(?<![\d,])(" + COMMA_THOUSANDS + r"|\d+)\s*[个個]?\s*(?:评测|評測|计分|計分)?\s*(?:片段|块|チャンク|断片|개\s*청크|청크)|"
    r"(?<![\d,])(\d+)\s*(?:logits?|scored|計分|计分)\s*(?:位置|ポジション)",
    I,
)
# a token count in parentheses after what was measured: "KL vs bf16 on chat text (2,919 tokens)", "| on vs off
# (21,000 tokens) |", "(1020 tokens evaluados)": how many tokens were scored, not a window's length (that is
# written "windows of N tokens", "N tokens per chunk", "-c N")
PARENTHESISED = re.compile(r"\(\s*~?" + BIG + r"\s+" + TOKEN_WORDS + r"(?![\w-])(?!\s*(?:per|each|/|of\s+context|context|window))", I)
# windows by their length, the windows named: "32 prompts x 1024 tokens", "256 sequences × 2048 tokens", "20 rows × 2048"
# (evidence_patterns.D6 reads "40×512" with no noun between)
WINDOWS_BY_LENGTH = re.compile(
    r"(?<![\w.,])\d{1,5}\s+(?:prompts|sequences|windows|chunks|rows|samples|documents|segments|texts|passages)\s*[×x]\s*\d{2,6}\b", I
)
# the tokens a KL is taken over, after a preposition of the card languages ("KL divergence ... over ~250,000 tokens",
# "across 16,320 tokens", "on 65,536 tokens of wikitext-2 test", "sobre 4.092 tokens", "com 2.974 tokens"), or as the
# size of the held-out set it is scored on ("a held-out 512-token eval slice", "49,152토큰 검증 세트"): the count scored
# (CONVENTIONS rule 15b.1; localbench, thefactum, kalomaze, olive, pipenetwork, openmed, ko_motif3: seven authors).
# Not a length ("prompts over 32 tokens", "windows of 2048 tokens"): :func:`vetoed`; the sentence names a KL
# (positions.vetoed)
ABOUT = r"(?:(?:about|around|roughly|approximately|some|nearly|almost|cerca\s+de|unos|unas|environ|etwa)\s+|[~≈]\s*)?"
OVER_TOKENS = re.compile(
    r"\b(?:over|across|on|sobre|com|sur|über)\s+" + ABOUT + r"(" + THOUSANDS + r"|\d{2,}|\d+(?:\.\d+)?\s*[kKM])\s*"
    r"(?:tokens?|Tokens?|jetons|токенов|トークン|토큰)(?![\w-])(?!\s*(?:per|each|/|long|of\s+context|context|window|de\s+contexto))|"
    r"(?<![\w.,])(" + THOUSANDS + r"|\d{2,})(?:-token|\s*토큰|\s*トークン)\s*"
    r"(?:held-out\s+|eval(?:uation)?\s+|test\s+|validation\s+|검증\s*|評価\s*|检验\s*|测试\s*)(?:slice|set|split|corpus|세트|セット|集)",
    I,
)
# what stands before "over N tokens" when N is a length, not the count scored: a unit of text ("prompts over 32 tokens")
# or a training run ("trained on 4096 tokens")
UNIT_BEFORE = re.compile(r"\b(?:prompts?|sequences?|inputs?|texts?|contexts?|windows?|chunks?|samples?|documents?|answers?|"
                         r"responses?|outputs?|generations?|trained|fine-tuned|pre-?trained|calibrated)\s*$", I)
# the count as a row of a two-column table of the run's figures, the table form of positions.D6's "Total positions: 2047":
# "| Positions | 467 |" among "| Mean KLD | ... |" rows (h16/a mlx_quality_suite), "| scored positions | 1146, teacher-forced |"
# (dev hipfire_escha); bound to the KL by another row of its table (:func:`kl_context`). Not "n_positions": a model
# config's maximum context length.
ROW = re.compile(
    r"^\|[ \t]*\**(?:(?:total|scored|evaluated)[ _])?(?:positions|tokens[ _]scored|scored[ _]tokens)\**[ \t]*\|"
    r"[ \t]*\**(" + COMMA_THOUSANDS + r"|\d{1,9})\b(?![.,]\d)",
    I | re.MULTILINE,
)
PATTERNS = [TOKENS, WINDOWS, MEASURED_ON, HEAD_TAIL, COLUMN, DATASET_COLUMN, PARENTHESISED, WINDOWS_BY_LENGTH, OVER_TOKENS, ROW]
# a clause naming a calibration set or a training corpus: a count in parentheses after it is that set's size
OTHER_SIZE = re.compile(r"imatrix|calibrat|\btrain(?:ing|ed)?\b|校准|キャリブレーション", I)
# a window count in a sentence about something else: "32 samples per batch", "the first 3 prompts shown below"
NOT_COUNT_AFTER = re.compile(r"\s*(?:per\s+(?:batch|step|second)|/s\b)", I)


def vetoed(text: str, m: re.Match[str]) -> bool:
    """A token count that is a window's length, a count of something per batch or per second."""
    if NOT_COUNT_AFTER.match(text, m.end()):
        return True
    if m.re is COLUMN.compiled or m.re is DATASET_COLUMN.compiled:  # the KL column in the same header row
        line = text[m.start() : text.find("\n", m.start()) if "\n" in text[m.start() :] else len(text)]
        return not re.search(KL_MENTION, line, I)
    if m.re is TOKENS.compiled:
        return bool(LENGTH_BEFORE.search(text, max(0, m.start() - 24), m.start()))
    if m.re is OVER_TOKENS.compiled:
        return bool(UNIT_BEFORE.search(text, max(0, m.start() - 24), m.start()))
    if m.re is PARENTHESISED.compiled:  # the size of what the clause before names: "imatrix from calib.txt (300k tokens)"
        start = max(text.rfind("\n", 0, m.start()), text.rfind(";", 0, m.start()), text.rfind(". ", 0, m.start()), m.start() - 100)
        return bool(OTHER_SIZE.search(text, max(start, 0), m.start()))
    return False


HEADER_LINES = 40  # table rows walked up to find the header (and down: a label / value table's other rows)
# a KL row that sets the run up rather than measuring it: a coefficient, threshold, target or bound ("| kl_coef | 0.05 |",
# "| KLD threshold | 0.05 |")
SETTING_ROW = re.compile(r"coef|beta|weight|threshold|target|budget|limit|\bmax(?:imum)?[ _]allowed|gate|penalty", I)
# the KL term, also inside a metric key ("avg_kl_div", "kld_mean")
KL_TERM = re.compile(KL_MENTION, I)


def kl_context(text: str, m: re.Match[str]) -> bool:
    """Whether a count's line is bound to a KL by its structure: a table row whose header row names the KL
    ("| comparison | mean KL |" over "| on vs off (21,000 tokens) | 0.048 |"), or a lead-in line that ends in a
    colon over a KL printout ("32 prompts x 1024 tokens:" over a block of ``avg_kl_div`` values)."""
    start = text.rfind("\n", 0, m.start()) + 1
    end = text.find("\n", m.end())
    end = len(text) if end < 0 else end
    line = text[start:end]
    if line.lstrip().startswith("|"):
        start, table_end = line_run(text, start, end, _pipe_row, HEADER_LINES, HEADER_LINES)
        header_end = text.find("\n", start)
        if m.re is ROW.compiled:  # a table of label / value rows names its quantities in the rows, not in the header
            return any(_measured_kl_label(row) for row in text[start:table_end].splitlines())
        return bool(KL_TERM.search(text, start, header_end if header_end >= 0 else len(text)))
    return line.rstrip().endswith((":", "：")) and bool(KL_TERM.search(text[end : end + 300]))  # and a CJK colon


def _measured_kl_label(row: str) -> bool:
    """Whether a table row's label cell names a measured KL (not a coefficient, threshold or target)."""
    cells = row.split("|")
    return len(cells) > 2 and bool(KL_TERM.search(cells[1])) and not SETTING_ROW.search(cells[1])


def _pipe_row(line: str) -> bool:
    """A table here is its pipe rows only: its header is the first of them (a pasted pipe-less table has no header
    row to name the KL)."""
    return line.lstrip().startswith("|")


def read(span: str) -> dict[str, Any]:
    """``count`` for a token count (a window count gives none: it says how many windows, not positions)."""
    h = HEAD_TAIL.search(span)
    if h is not None:
        end = next(h.group(g) for g in ("e1", "e2", "e3", "e4") if h.group(g))
        return {"scheme": "head" if end.lower() in HEAD_WORDS else "tail"}
    m = TOKENS.search(span) or MEASURED_ON.search(span) or PARENTHESISED.search(span) or OVER_TOKENS.search(span) or ROW.search(span)
    if m is None:
        return {}
    n = parse_int(next(g for g in m.groups() if g))
    return {"count": n} if n else {}
