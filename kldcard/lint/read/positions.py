"""D6, the scored positions, in the ways cards write them that :data:`kldcard.lint.evidence_patterns.D6` does not.

- a count: "a 51,175-position panel", "16,376 predicted tokens", "4,080 next-token predictions", "64 generated steps", "32 decode steps",
  "125 held-out rows", "--gen-tokens 128", "204,800 tokens scored", "250k tokens were evaluated",
  "229,348 个评分 token", "28 个窗口", "51.175 posiciones", "2,632位置"; and of windows, "averaged over 1,000 sequences" (like a chunk count,
  it gives no count of positions);
- a scheme: "the last token" / "last-logit KLD", "first-token probability distributions", "full-window KL",
  "matched prefix", "teacher-forced over the continuation", "every token", "all tokens", "the last 256
  tokens of each window", "positions 512-1023", "assistant tokens only"; and in the card languages
  ("primer token", "最初のトークン", "所有位置").

A scheme word is evidence only in a sentence that speaks of the measurement (:func:`vetoed`): "the
first token's residuals" of an abliteration recipe is not where a KL was scored. :func:`read` gives the
value (``scheme``, ``count``) for :func:`kldcard.lint.read.values.positions`. A stride ("context 2048, stride
512", "--stride 512") is D5's too (the windowing, with the context length) and, as the labels read it, a scheme of the
positions scored: those past each window's overlap.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from typing import Any

from kldcard.lint.read import command_lines, context, context_written, position_counts, position_forms, record_fields
from kldcard.lint.read.numbers import COMMA_THOUSANDS, THOUSANDS, parse_int
from kldcard.lint.read.terms import KL_MENTION, POSITION_WORDS, alternation

I = re.IGNORECASE | re.ASCII

# scheme -> its words in the card languages (English below, in SCHEMES)
SCHEME_WORDS: dict[str, tuple[str, ...]] = {
    "first-token": ("primer token", "primeiro token", "premier token", "ersten Token", "первого токена", "первом токене",
                    "第一个 ?token", "首个 ?token", "首 ?token", "最初のトークン", "先頭トークン", "첫 토큰"),
    "last-token": ("último token", "dernier token", "letzten Token", "последнего токена", "最后一个 ?token", "最後のトークン",
                   "末尾トークン", "마지막 토큰"),
    # the answer's positions ("KL ... sobre las posiciones de RESPUESTA": holdout13/f es_idiotsavant), as "at the answer token"
    "response-only": ("posiciones de respuesta", "posiciones de la respuesta", "posições de resposta", "posições da resposta",
                      "positions de réponse", "positions de la réponse"),
    "all": ("todas las posiciones", "todas as posições", "toutes les positions", "alle Positionen", "все позиции",
            "所有位置", "全部位置", "全位置", "모든 위치"),
}
NUM = r"(" + COMMA_THOUSANDS + r"|\d+)"
COUNTS = [
    # "51,175-position", "16,376 predicted tokens", "64 generated steps", "125 held-out rows", "--gen-tokens 128"
    # (a bare "20 steps" is no count of positions: RL runs and training logs count optimizer steps so, as NeMo-RL's
    # "10/10 steps" and prime-rl's "over 20 steps"; only a generated or decode step is a scored position)
    re.compile(r"(?<![\w.,])" + NUM + r"-position\b", I),
    re.compile(r"(?<![\w.,])" + NUM + r"\s+(?:predicted|next-token|target|decoded|forced)\s+tokens\b", I),
    # a word between the scoring and the tokens: "64 scored continuation tokens", "512 evaluated answer tokens"
    re.compile(r"(?<![\w.,])" + NUM + r"\s+(?:scored|evaluated|compared)\s+(?!tokens\b)[a-z][\w-]*\s+tokens\b", I),
    # "24,262 teacher-forced steps", "467 teacher-forced positions", "96 teacher-forced frames", "16 个相同 teacher-forced
    # 前缀" (falcon-ocr, curvedinf, tts-candle, fastllm, k3: the count of what was forced is the count scored)
    re.compile(r"(?<![\w.,])" + NUM + r"\s*(?:个\s*)?(?:相同\s*|[a-z][\w-]*\s+)?teacher[- ]forced\s+(?:[a-z][\w-]*\s+)?"
               r"(?:steps|tokens|positions|frames|prefix(?:es)?|targets|continuations)\b|"
               r"(?<![\w.,])" + NUM + r"\s*个\s*(?:相同\s*)?teacher[- ]forced\s*(?:前缀|位置|token)", I),
    STEPS := re.compile(r"(?<![\w.,])" + NUM + r"\s+(?:generated\s+|decode\s+|decoding\s+|generation\s+)steps\b(?!\s+(?:of|per)\s+(?:training|optimi))", I),
    re.compile(r"(?<![\w.,])" + NUM + r"\s+(?:held-out|validation|test|eval(?:uation)?)\s+(?:rows|samples|sequences|windows)\b", I),
    re.compile(r"--gen(?:erate)?[-_]tokens[= ]\s*(\d+)\b|\bmax[-_]tokens[= ]\s*(\d+)\b", I),
    # "4,080 WikiText next-token predictions", "15520 independent predictions", "19 456 scored predictions": each prediction
    # is a scored position (in a sentence about the measurement)
    PREDICTIONS := re.compile(r"(?<![\w.,])(\d{1,3}(?:[,\u202f\u00a0 ]\d{3})+|\d+)\s+(?:[\w-]+\s+){0,2}?predictions\b", I),
    # "256 targets", "48 distinct targets", "29,955 targets": each target token is a scored position (riley h13, mxwave
    # h12, autotrust dev: three authors); in a sentence about the measurement or a KL table, as predictions
    TARGETS := re.compile(r"(?<![\w.,])" + NUM + r"\s+(?:[a-z][\w-]*\s+)?targets\b", I),
    # "65.536 previsões por modelo", "78 de las 952 predicciones": the same count in the Romance card languages (a "."
    # between thousands); holdout11 pt_dcg1 and holdout12 es_licitaciones, two authors. Not gated by a measuring word:
    # both sentences state the count plainly beside a table or a paragraph of KL values
    re.compile(r"(?<![\w.,])(\d{1,3}(?:[.\u202f\u00a0 ]\d{3})+|\d+)\s+(?:predicciones|previsões|predições|prédictions)\b", re.I),
    # "averaged over 1,000 sequences", "64 samples", "48 scored sequences" (windows scored; in a sentence about the measurement)
    SEQUENCES := re.compile(r"(?<![\w.,])" + NUM + r"\s+(?:(?:scored|evaluated)\s+)?(?:sequences|samples)\b", I),
    # "204 800 positions" (a space or a thin space between thousands), "~1.2M scored tokens"
    re.compile(r"(?<![\d,.])(\d{1,3}(?:[\u202f\u00a0 ]\d{3})+)\s+(?:total\s+|scored\s+)?(?:token\s+)?positions\b", I),
    re.compile(r"(?<![\w.,])~?(\d+(?:\.\d+)?\s*[kKM])\s+(?:scored|evaluated|compared|predicted)\s+tokens\b", I),
    # a tool's "Label: value" output: "Total positions: 2047", "scored_positions = 4096", "n_pos=4"
    # (a count, not the first digit of a value: "... positions: 0.012" is the KLD over them)
    re.compile(r"(?:\b(?:total|scored|evaluated)?[ _]?positions|\bn_?pos(?:itions)?|\bnum_positions)\s*[:=]\s*" + NUM + r"\b(?![.,]\d)", I),
    # "204,800 tokens scored", "250k tokens were evaluated"
    re.compile(r"(?<![\w.,])(" + COMMA_THOUSANDS + r"|\d+(?:\.\d+)?\s*[kKM]?)\s+tokens\s+(?:were\s+|are\s+)?(?:scored|evaluated|compared)\b", I),
    # "28 tokens evaluados", "1020 tokens evaluados", "40 fragmentos de 1.023 tokens evaluados": the same in Spanish and
    # Portuguese (holdout4 hipfire, kingjones; holdout12 magiccodingman: three authors); and in Italian, where "token" takes
    # no plural ("64 token valutati": the same participle, the language's grammar)
    re.compile(r"(?<![\w.,])(" + THOUSANDS + r"|\d+)\s+(?:tokens\s+(?:evaluad[oa]s|avaliad[oa]s|puntuad[oa]s|comparad[oa]s)|"
               r"tokens?\s+(?:valutati|confrontati))\b", re.I),
    # "51.175 posiciones", "2,632位置", "128개 위치": a count before the card language's word for positions
    re.compile(r"(?<![\d,.])(" + THOUSANDS + r"|\d+)\s*(?:" + alternation(POSITION_WORDS) + ")", I),
    # Chinese / Japanese counters: "229,348 个评分 token", "计分 146,115 个 token", "28 个窗口"
    re.compile(r"(?<![\d,])" + NUM + r"\s*[个個]?\s*(?:评分|計分|计分|評分|打分)\s*token|(?:评分|計分|计分|評分)\s*" + NUM + r"\s*[个個]?\s*token|"
               r"(?<![\d,])" + NUM + r"\s*[个個]窗口", I),
]
SCHEMES = [
    # ("final logits" are the output layer's logits, whatever position: "final-logit KLD", "| final-logit L2 |")
    ("last-token", re.compile(r"\b(?:last|final)[- ](?:token|position)s?\b|\blast[- ]logits?\b", I)),
    ("first-token", re.compile(r"(?<!time to )(?<!time-to-)\bfirst[- ](?:token|generated token|position)s?\b", I)),  # not TTFT
    ("all", re.compile(r"\bfull[- ]window\b|\bwhole[- ]window\b|\ball (?:scored )?tokens\b(?!\s+(?:of|in)\s+the\s+vocab)", I)),
    # "every token", "each position": a mode as "teacher-forced" is (see EVERY below)
    ("all", EVERY := re.compile(r"\b(?:every|each) (?:scored )?(?:token|position)\b", I)),
    # "the last 256 tokens of each window", "positions 512-1023 of each chunk"
    ("tail", re.compile(r"\b(?:last|final)\s+\d+\s+tokens\s+of\s+(?:each|every)\b", I)),
    ("range", re.compile(r"\bpositions?\s+\d+\s*(?:-|–|\.\.|to)\s*\d+\b", I)),
    # "assistant tokens only", "only the completion tokens": the response's positions; "mean KL ... over the generated
    # tokens", "Generated-token KLD" (llamampere dev, krishando h8; mlx_swift dev's "forced decode of the generated tokens")
    ("response-only", re.compile(
        r"\b(?:assistant|completion|response|answer|generated|output)\s+tokens\s+only\b|"
        r"\bonly\s+(?:the\s+)?(?:assistant|completion|response|answer|generated|output)\s+tokens\b|"
        r"\bgenerated[- ]token\s+KLD?\b|\b(?:over|on|across)\s+(?:the\s+|its\s+|their\s+)?generated\s+tokens\b|"
        # "taken at the answer token", "over the response positions": one position per item or the answer's span
        # (holdout14/b gemma_cpp; holdout13/f es_idiotsavant's "posiciones de RESPUESTA", SCHEME_WORDS)
        r"\b(?:at|on|over|across)\s+(?:the\s+|each\s+|every\s+)?(?:answer|response|reply)\s+(?:tokens?|positions?)\b", I)),
    ("matched-prefix", re.compile(r"\bmatched[- ]prefix\b", I)),
    # "KL is read at the next token alone", "only the next-token endpoint": one scored position per prompt, as the
    # first-token scheme (holdout12 finance and enoch; the labels' next-token precedent, holdout13 f)
    ("next-token", re.compile(r"\b(?:only|just)\s+(?:the\s+)?next[- ]token\b|\bnext[- ]token\s+(?:\w+\s+)?(?:alone|only)\b", I)),
    # "context 2048, stride 512", "--stride 512", "window=1024, stride=1024": windows laid over the text at a stride
    # score the positions past the overlap, a scheme of positions (holdout12 b12x and the Reddit vLLM score-mode post,
    # two authors; holdout9 rtx6kpro and dev festr2 state it beside a count); a perplexity-only stride is vetoed
    # by the caller (context.perplexity_only), as the window length is
    ("strided", STRIDED := re.compile(r"(?<![\w-])(?:--)?stride\s*[=:]?\s*\d{2,6}\b", I)),
    ("teacher-forced", TEACHER_FORCED := re.compile(r"\bteacher[- ]forc(?:ed|ing)\b|\bforced decode\b", I)),
    *((name, re.compile(alternation({name: words}), I)) for name, words in SCHEME_WORDS.items()),
]
PATTERNS = COUNTS + [p for _, p in SCHEMES] + position_counts.PATTERNS  # plain token and window counts (read.position_counts)
PATTERNS += position_forms.PATTERNS  # "n=256" beside a KL (read.position_forms)
# windows counted by what they were cut from, then their length ("100 Simple English Wikipedia passages x 256 tokens",
# as evidence_patterns' "40×512 tokens"): a count of scored windows, D5's form (context.TOKENS_PRODUCT) read for D6
PATTERNS.append(context.TOKENS_PRODUCT)
PATTERNS += record_fields.PATTERNS[6]  # a record's field: `"prediction_positions": 2047`, `chunks: 80` (read.record_fields)
MEASUREMENT = re.compile(
    KL_MENTION + r"|\bscor(?:e|ed|es|ing)\b|\bmeasur|\bevaluat|\bcompar|\bcomput(?:ed|ing)\b|"
    r"\bprobabilit|\bdistribution|\blogits?\b|\bperplexity\b|\bPPL\b|ダイバージェンス|散度|divergen|测量|評価|评测|比べ|比較|比较|"
    r"\bfidelit|fidelidad|fidélité|\bmid(?:en|e|ió)\b|\bmedid|\bevaluaci[óo]n\b|\bpuntu(?:ó|o\b|ad[oa]s?\b|aci[óo]n\b)|\bmesur|\bgemessen|\bизмер|\bevaluad|\bavaliad",
    I,
)


# a decimal is no count ("0.0677" then "Total positions" on the next line); a "Label: value" line's number
# belongs to its label, not to a noun on the next line ("stride: 512" / "windows: 25")
DECIMAL = re.compile(r"^\s*(?:0\.\d|\d+\.(?!\d{3}(?!\d))\d{2,})(?![\d.]*\s*[kKM]\b)")  # not "51.175" (a thousands group)
FIELD_LINE = re.compile(r":[ \t]*[\d.,]+[ \t]*\n")
# a matrix's shape, not windows by length ("5120x17408" of a weight tensor): a thousand windows or more, no "tokens"
# a decimal written with a comma ("tokens: 0,511 nats": no count starts with a zero group) and a number that ends
# before a comma and a space ("dimension intermedia 1024, posiciones rotatorias": a list's item, not a thousands group)
# are no counts (plain number grammar)
NOT_A_COUNT = re.compile(r"(?<![\d.,])0[.,]\d+(?![\d.,]*\s*[kKM]\b)|\d[.,](?=\s)")
MATRIX = re.compile(r"^\d{4,5}(?:\s*×\s*|\s+x\s+|x)\d{3,6}$")
# a number glued by a hyphen to the word before it is part of a name, not a count ("top-1 changes at positions where
# ...", "a top-5 positions table")
NAME_PART = re.compile(r"[^\W\d_]-$")
# positions picked by what they show, not the ones scored: "the fraction of positions with token mismatch", "outliers
# at positions with KL ~1e-7" ("positions with" itself names a scheme in evidence_patterns.D6: "all positions with ...")
SUBSET = re.compile(r"^positions?\s+with\b", I)
PICKED = re.compile(r"\b(?:of|at)\s+(?:the\s+)?$", I)
# "teacher-forced" names how the context was fed, a mode ("KLD vs BF16: teacher-forced · decode-path", "the scoring
# is teacher-forced"): the labels keep D6 M for it alone (holdout10 omlx, behemoth; holdout8 lilvllm; holdout6 qbank1)
# and S where the text counts what was forced or scored ("24,262 teacher-forced steps", "Positions checked: 128",
# "64 canonical targets"): the mode is evidence only with such a count within ten lines of it
NEAR_COUNT = re.compile(
    r"(?<![\w.])\d[\d,]*\s*(?:[×x]\s*\d[\d,]*\s*)?(?:个\s*)?(?:[a-z][\w-]*\s+){0,2}?"
    r"(?:tokens?|positions?|steps?|prefix(?:es)?|targets?|frames?|continuations?)\b|"
    r"\b(?:decoded|generated|scored|predicted|forced)\s+(?:positions|tokens)\b|\bpositions?\b[^\n\d]{0,20}[:=]\s*\d|\d[\d,]*\s*个[^\n\d]{0,12}(?:前缀|位置|token|target)", I)
NEAR_LINES = 10
# a sentence about a perplexity run (context.PERPLEXITY) that names no KL: its stride lays out the perplexity's
# windows (holdout4 ninfer)
KL_MENTION_RE = re.compile(KL_MENTION, I)
# one named position ("the last position", "first token") in a sentence about greedy decoding that names no KL is where
# the decoding reads its logits, not where a KL was scored (CONVENTIONS rule 15b.2's exception; plain grammar: the
# position word belongs to the decoding its clause names)
ONE_POSITION = tuple(p for name, p in SCHEMES if name in ("last-token", "first-token"))  # not a set: hashing compiles
GREEDY_DECODING = re.compile(r"\bgreedy\s+(?:decod(?:e|ing)|generation)\b", I)
# a count another scorer scored or rated, in a sentence that names no KL, is that scorer's ("the reward model scored 48
# sequences per batch", "a judge rated 200 evaluated sequences"): plain grammar, the scoring verb's subject
OTHER_SCORER = re.compile(r"\b(?:reward[ -]models?|judges?|graders?|verifiers?|critics?|raters?|annotators?|classifiers?)"
                          r"(?:\s+models?)?\s+(?:scored|rated|graded|judged|evaluated|labell?ed|scores|rates|grades|judges)\b", I)
# a window's length as a compound, not a count of windows ("after each complete 64-token chunk", "1,024-token
# windows"): the number is D5's, the count (if any) comes before it ("40 512-token chunks" matches from the 40)
LENGTH_COMPOUND = re.compile(r"^\d[\d,.]*-tokens?\s+(?:[\w-]+\s+)?(?:chunk|window|sequence|segment|block)s?$", I)


# a count near the mode that is not of scored items: a rate's denominator ("0.24 flips per 1,000 tokens"), a speed
# ("32 tokens per second"), a length ("de 256 a 2048 tokens de longitud"), or a count in a sentence about speed or
# greedy decoding ("64 generated tokens" of a speed run; "greedy decode stays identical for about 24 tokens"):
# behemoth h10, local_kimi h13, curvedinf h5 (three authors; plain grammar of rates and units)
RATE_BEFORE = re.compile(r"\bper\s+$", I)
UNIT_AFTER = re.compile(r"\s*(?:per\s+(?:second|sec)\b|/\s*s\b|de\s+longitud\b|long\b)", I)
# Unicode, as context_written.SPEED compiles the same words: under this module's re.ASCII, "с\b" of "токенов/с" needs an
# ASCII word character after it and IGNORECASE folds no Cyrillic or accented capital ("Памяти", "MÉMOIRE")
OTHER_RUN = re.compile(context_written.SPEED_WORDS + r"|\bgreedy\s+decod", re.IGNORECASE)
STOPS = re.compile(r"\.\s|\n\s*\n|[。；;]")


def scored_count(near: str, c: re.Match[str]) -> bool:
    """Whether the count ``c`` in ``near`` counts scored items (see :data:`RATE_BEFORE`, :data:`OTHER_RUN`)."""
    if RATE_BEFORE.search(near, max(0, c.start() - 8), c.start()) or UNIT_AFTER.match(near, c.end()):
        return False
    lo = max((x.end() for x in STOPS.finditer(near, 0, c.start())), default=0)
    stop = STOPS.search(near, c.end())
    return not OTHER_RUN.search(near, lo, stop.start() if stop else len(near))


def near_lines(text: str, m: re.Match[str]) -> str:
    """The lines from :data:`NEAR_LINES` before ``m``'s line to as many after it."""
    start, end = m.start(), m.end()
    for _ in range(NEAR_LINES):
        start = text.rfind("\n", 0, max(0, start - 1)) + 1
        nxt = text.find("\n", end + 1)
        end = len(text) if nxt < 0 else nxt
    return text[start:end]


def vetoed(text: str, sentence: str, m: re.Match[str]) -> bool:
    """For every D6 match: a decimal read as a count, a number that is another line's field, a window's length
    ("64-token chunk"), a number that ends a name ("top-1"), positions picked by a property ("of positions with
    ..."); for the scheme words, step and sequence counts: a sentence that does not speak of the measurement."""
    # the match's first line is a "Label: value" field and the match goes on to the next line
    field = FIELD_LINE.search(text, text.rfind("\n", 0, m.start()) + 1, m.end())
    if DECIMAL.match(m.group(0)) or (field is not None and field.end() > m.start()) or MATRIX.match(m.group(0)):
        return True
    if NOT_A_COUNT.search(m.group(0)):
        return True
    if LENGTH_COMPOUND.match(m.group(0)) or NAME_PART.search(text, max(0, m.start() - 2), m.start()):
        return True
    if SUBSET.match(m.group(0)) and PICKED.search(text, max(0, m.start() - 20), m.start()):
        return True  # "~30% of positions with k=128", "at positions with KL ~1e-7": some positions picked by a property
    if re.made_by(m, (TEACHER_FORCED, EVERY)) and not any(scored_count(near, c) for near in [near_lines(text, m)] for c in NEAR_COUNT.finditer(near)):
        return True
    if m.re is STRIDED.compiled and context.PERPLEXITY.search(sentence) and not KL_MENTION_RE.search(sentence):
        return True  # "Scored with `ninfer-perplexity` ... at `--context 4096 --stride 2048`": a perplexity run's windows
    if re.made_by(m, position_counts.PATTERNS) and position_counts.vetoed(text, m):
        return True
    if re.made_by(m, ONE_POSITION) and GREEDY_DECODING.search(sentence) and not KL_MENTION_RE.search(sentence):
        return True  # "greedy decoding (which only computes the head row of the last position)": the decoding's position
    if m.re is position_counts.OVER_TOKENS.compiled and not KL_MENTION_RE.search(sentence):
        return True  # tokens a perplexity run or a generation went over: the count is the KL's only in its sentence
    if re.made_by(m, position_forms.PATTERNS):
        return position_forms.vetoed(text, sentence, m)
    if re.made_by(m, record_fields.PATTERNS[6]):  # bound to the KL by its record, not by its sentence
        return record_fields.vetoed(text, m)
    if re.made_by(m, (STEPS, SEQUENCES, PREDICTIONS, TARGETS, context.TOKENS_PRODUCT, *position_counts.PATTERNS, *(p for _, p in SCHEMES))):
        # an option of a command written over several lines: its script's name, lines above, says what it measures
        lo, hi = command_lines.span(text, m.start(), m.end())
        command = text[lo:hi] if "\n" in text[lo:hi] else ""
        if OTHER_SCORER.search(sentence) and not KL_MENTION_RE.search(sentence):
            return True
        return not MEASUREMENT.search(sentence + command) and not position_counts.kl_context(text, m)  # a KL table's row
    return False


def read(span: str) -> dict[str, Any]:
    """``scheme`` and ``count`` as :data:`PATTERNS` write them in ``span``."""
    out: dict[str, Any] = {}
    for name, p in SCHEMES:
        if p.search(span):
            out["scheme"] = name
            break
    for p in COUNTS:
        if p is SEQUENCES:  # windows, not positions
            continue
        m = p.search(span)
        if m is not None:
            n = next((parse_int(g) for g in m.groups() if g), None)
            if n:
                out["count"] = n
                break
    if "count" not in out:
        out.update(position_counts.read(span))
    if "count" not in out:
        out.update(position_forms.read(span))
    for k, v in record_fields.read(span).items():
        out.setdefault(k, v)
    return out
