"""D3, the evaluation text, as cards state it without a corpus name the main patterns know.

:data:`kldcard.lint.evidence_patterns.D3` finds the texts by name (wikitext, wiki.test.raw, C4, ...) and
by the usual English phrases. Cards also give the text in ways that name no known corpus:

- its source only: a Hub dataset link or id (``huggingface.co/datasets/org/name``, "org/name test
  split", "dataset `org/name`", "Corpus: `org/name`", "measured on `org/name`", "`org/name` (KL)"), a
  command line's text option (``--corpus``, ``--eval-file``, ``--inputs``, ``--data-path``), a
  ``datasets:`` front-matter entry whose name says it is an evaluation text (:func:`front_matter_texts`);
- a corpus by a name the main list lacks (UltraChat, OpenWebText, Project Gutenberg, PTB, the-stack, ...), a prompt file;
- a description without a name ("on the same 25-window panel", "200 validation documents", "8 prompts",
  "a mix of chat, code and math", "250,000 tokens taken from coding and chat", "the evaluation set",
  "shard 0 of the held-out suite"): the
  reading is ``incomplete`` and asks for the name and the source (:func:`described`);
- in the card languages ("评测文本", "評価テキスト", "texto de evaluación", "тестовый набор").

What is not the KLD's text (:func:`vetoed`, for every D3 match): a description in a sentence that does not
speak of the measurement (unless its line ends with a colon over a block that names a KL term:
:func:`introduces_kl`); a text whose clause says it is another use's (calibration, training, serving
speed, refusal counts: "imatrix Wikitext") without a measuring word, or says it is not given ("does not
specify the evaluation corpus", "deliberately not wikitext"); in a table row, a name whose cell and row
label speak of no text or measurement (:func:`.eval_text_cells.in_text_cell`: a benchmark's score column); a
benchmark named without a KL term (:func:`.eval_text_benchmarks.benchmark_only`; a fidelity benchmark on the logits
is the KL measurement: :data:`FIDELITY`); a file a command writes ("> run.txt"), a run's results or a project document by its name
("summary.txt", "NOTES.txt"), a text tagged with another use ("`org/name` (refusals)"), a model's Hub id
("measured on `org/Model-8B`"), prompts described by another use ("50
harmful-behavior prompts"). "A natural-text corpus", "the same corpus" or "over a finite text" / "on single prompts"
alone is not read: it says there was a text, not which.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from typing import Any

from kldcard.lint.claims_patterns import (
    KLD_TERM,  # the claim detector's KL term: the block is a claim
)
from kldcard.lint.read import eval_text_forms, eval_text_runs, eval_text_setup, eval_text_units
from kldcard.lint.read.numbers import BOUND_THOUSANDS, COMMA_THOUSANDS
from kldcard.lint.read.sentence_terms import has
from kldcard.lint.read.terms import KL_MENTION, KL_WORD, alternation

I = re.IGNORECASE | re.ASCII

# "the evaluation text", "test set", "prompts" in the card languages (English words are in the patterns below)
TEXT_WORDS: dict[str, tuple[str, ...]] = {
    "zh": ("评测文本", "评估文本", "测试文本", "評測文本", "评测语料", "测试语料", "评测集", "测试提示", "评测数据", "评估数据",
           "测试数据", "验证数据", "評測資料", "測試資料", "文本上", "文本中", "验证集", "测试集", "評測集", "驗證集", "測試集"),
    "ja": ("評価テキスト", "評価データ", "評価セット", "評価用テキスト", "評価コーパス", "検証データ", "テストデータ", "テストセット", "検証セット",
           "プロンプト", "のテキスト", "テキストで"),
    "ko": ("평가 텍스트", "평가 데이터", "평가 말뭉치", "테스트 세트", "테스트 데이터", "프롬프트", "검증셋", "검증 세트", "평가셋", "평가 세트",
           "테스트셋"),
    "es": ("texto de evaluación", "textos de evaluación", "texto de prueba", "textos de prueba", "conjunto de evaluación",
           "conjunto de prueba", "conjunto de datos de fidelidad", "conjunto de datos de evaluación", "corpus de evaluación"),
    "pt": ("texto de avaliação", "textos de avaliação", "conjunto de avaliação", "conjunto de teste", "corpus de avaliação"),
    "fr": ("texte d'évaluation", "textes d'évaluation", "texte de test", "jeu d'évaluation", "jeu de test", "corpus d'évaluation",
           "corpus de test"),
    "de": ("Testtext", "Evaluationstext", "Testdaten", "Evaluationskorpus", "Evaluationsdaten"),
    "ru": ("тестовый текст", "тестовом тексте", "тестовый корпус", "тестовом корпусе", "тестовый набор", "тестовом наборе",
           "оценочный набор"),
}

# the text's source alone: a Hub dataset (link, "datasets/org/name", "dataset `org/name`", "org/name test
# split"), or a command line's text option
HUB_ID = r"[A-Za-z0-9][\w.\-]*/[\w.\-]*[A-Za-z][\w.\-]*"
FILE_END = re.compile(r"\.(?:txt|raw|jsonl?|parquet|csv|md|bin|gz)$", re.IGNORECASE)  # a local file, not a source
SPLIT = r"(?P<split>test|validation|eval|dev)\s+split"
SOURCE = re.compile(
    r"(?:huggingface\.co|hf\.co)/datasets/(?P<url>" + HUB_ID + r")|(?<![\w/])datasets/(?P<path>" + HUB_ID + r")|"
    r"\bdataset\s+[`'\"]?(?P<named>" + HUB_ID + r")|(?<![\w.\-/])(?P<id>" + HUB_ID + r")`?\s*[,(]?\s*(?:the\s+)?" + SPLIT + r"|"
    r"(?<![\w-])--(?:corpus|dataset|data[-_]?path|inputs?|eval[-_]?(?:file|data|text|set)|text[-_]?file|prompts?[-_]?file)\b(?:[= ]+(?P<arg>[^\s`'\"…]{2,200}))?|"
    # a Hub id after a label ("Corpus: `org/name`"), one the KL was measured on ("measured on `org/name`"),
    # or one tagged with the KL ("`org/name` (KL)")
    r"\b(?:corpus|dataset|eval(?:uation)?\s+(?:text|data|set))\s*[:=]\s*[`'\"]?(?P<labelled>" + HUB_ID + r")|"
    r"\b(?:measured|scored|evaluated|computed)\s+(?:on|over|using)\s+[`'\"]?(?P<measured>" + HUB_ID + r")|"
    r"(?<![\w.\-/])[`'\"]?(?P<tagged>" + HUB_ID + r")[`'\"]?\s*\(" + KL_WORD + r"\)",
    I,
)
# corpora by name that evidence_patterns.D3 does not list (chat, web and book text people score KLD on)
NAMED = re.compile(
    r"\b(?:UltraChat(?:[-_]200k)?|OpenWebText2?|PTB|Penn Treebank|the-stack(?:-smol|-v2)?|wiki-text[- ]?(?:2|103)|TinyStories|"
    r"BookCorpus|tiny[-_ ]?shakespeare|WildChat|LMSYS-Chat(?:-1M)?|OASST\d?|"
    r"OpenAssistant|Alpaca|CodeAlpaca|Dolly(?:-15k)?|The Stack|OpenOrca|SlimOrca|Magpie\w*|Project Gutenberg|allenai/c4)\b|"
    # C4 written as its name (upper case), or lower case with what it is ("c4 en", "c4 validation"); "the Pile"
    r"(?-i:\bC4\b)|\bc4\b(?=[\s,(\-]*(?:en\b|validation|val\b|test|dataset|data\b|text|split|subset|sample))|(?-i:\bthe Pile\b)|"
    # a JSON file of prompts or test texts ("fixtures/prompts.json"; evidence_patterns.D3 reads .txt/.jsonl/...)
    r"(?<![\w.\-])[\w.\-]*(?:prompt|eval|test|corpus|text|sample)[\w.\-]*\.json\b",
    I,
)
DESCRIBED = [
    # a panel or corpus that is counted or pinned ("a sealed 25-window panel", "a reduced 16k KLD panel", "the
    # 36-sequence quality corpus (sha256 ...)"): "a natural-text corpus", "the same corpus", "an evaluation corpus"
    # or "the published panel" alone says a text was used, not which (real_cards/CONVENTIONS.md, a bare corpus)
    re.compile(
        r"(?<![\w.,])\d+(?:[,.]\d+)*(?:-\w+|\s*[kKM])\s+(?:[\w-]+\s+)?(?:panel|corpus)\b|"
        r"\bcorpus\b(?=[^.\n]{0,40}?\b(?:sha256|[0-9a-f]{12,})\b)",
        I,
    ),
    # a count of text units: "200 validation documents", "8 prompts", "8 held-out seqs", "125 held-out rows", "16 agent-torture requests"
    # (a count is whole: "4.1 8B en prompts" is a model's version and size, not 4.1 prompts; nor the tail of a date,
    # "2026-09-18\nDocs only.")
    re.compile(
        r"(?:(?<![\w.,\-])(?:\d+(?:\.\d+)?\s*[kKM]|(?:\d{1,3}(?:[,.]\d{3})+|\d+)(?![.,]\d))|\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|twenty|thirty|fifty))\s+(?:[\w-]+\s+){0,2}?"
        # (the units of a text: kldcard.lint.read.eval_text_units)
        r"(?:" + alternation(eval_text_units.UNITS) + r")\b|"
        # the count joined to its unit before what was run on them: "the held-out 20-prompt, 10-step run", "an 8-prompt
        # follow-up" (temporal-tangent, aq codebook; as "a sealed 25-prompt panel" above); cases and samples so joined
        # count a fixed set of inputs ("the historical 48-case check", "16-sample parity": holdout12 exl3_bf16, ko_flex)
        r"(?<![\w.,])\d+-(?:prompts?|documents?|conversations?|passages?|cases?|samples?)\b(?!-)|"
        r"(?<![\w.,])\d+(?:[,.]\d+)*\s*[kKM]?\s+(?:held-?out|validation|test|eval(?:uation)?|paired)\s+(?:rows|samples|sequences|windows|tokens|toks?|cases)\b|"
        # the positions or tokens counted of a text described ("15,065 assistant tokens of a chat set", "10,240
        # positions of a text not used in quantization", "10.240 posiciones de un texto que ...", "2048 tokens de prosa")
        # (not the positions of each text: "256 positions of each text" is a count per text, D6's)
        r"(?<![\w.,])(?:" + BOUND_THOUSANDS + r"|\d+)(?![.,]?\d)\s+(?:[\w-]+\s+)?(?:tokens|positions|posiciones|posições)\s+"
        r"(?:of|de|from|del|do|da)\s+(?:(?:a|an|the|un|una|um|uma|el|la|o|le)\s+)?(?:(?!context|window|each|every|per|all|cada)[\w-]+\s+){0,2}?"
        r"(?:text|texts|set(?!\s+aside)|corpus|dataset|split|mix|prose|texto|conjunto|textos|texte|prosa)\b|"
        # "held-out 48×1024 tok", "held-out 8192 tokens": a held-out text by its size
        r"\bheld-?out\s+\d[\d,.]*\s*(?:[×x]\s*\d+\s*)?[kKM]?\s*(?:tokens|toks?|windows|rows|sequences|samples|cases)\b",
        I,
    ),
    # "357 blocks of public-domain text", "40 samples of chat transcripts", "8 chunks of llama.cpp docs"
    re.compile(
        r"(?<![\w.,])(?:" + COMMA_THOUSANDS + r"|\d+)\s+(?:blocks|chunks|windows|passages|samples|rows|segments|pages)\s+of\s+(?:[\w.\-]+\s+){0,3}?"
        r"(?:" + alternation(eval_text_units.MADE_OF) + r")\b",
        I,
    ),
    # what the KL was scored on: "on the short prompts", "on verifier-backed synthetic hard text" (not a
    # genre alone: "on prose" / "on code" sorts the numbers, it does not say which text)
    re.compile(
        r"\b(?:on|over|across)\s+(?:(?:the|a|an|these|those|its|our|their)\s+(?:[\w.\-`'\"]+\s+){0,4}?|(?:[\w.\-`'\"]+\s+){1,4}?)"
        r"(?:prompts?|text|texts|prose|documents|excerpts|transcripts|conversations|drafts)\b",
        I,
    ),
    # a mix described by its parts: "a mix of chat, code and math", "a mixture of English and code prose"
    re.compile(r"\b(?:a|the|an?\s+\w+)\s+mix(?:ture)?\s+of\s+(?:[\w-]+,?\s+){1,6}?(?:and|&|\+)\s+[\w-]+", I),
    # "the evaluation set", "a held-out split", "a fidelity dataset", "tokens taken from coding, chat and ..."
    re.compile(
        r"\b(?:evaluation|eval|test|held-?out|validation|qualification)\s+(?:set|split|data|texts?|prompts|documents|windows?)\b|"
        r"\b(?:evaluation|eval|held-?out|validation|fidelity)\s+suite\b|"
        r"\bfidelity\s+(?:dataset|data|suite|set)\b|\b(?:a|the|one)\s+(?:random\s+|held-out\s+|small\s+)?(?:slice|subset|sample|portion)\s+of\b|\btokens\s+(?:taken|drawn|sampled|sourced)\s+from\b|"
        r"\b(?:text|texts|passages|excerpts|articles|documents|books?)\s+(?:taken\s+|drawn\s+|sampled\s+)?from\s+(?!the\s+(?:model|quant|reference)\b)",
        I,
    ),
    re.compile(alternation(TEXT_WORDS), I),
    # a count of text units in Chinese and Japanese, a counter word and a few characters between: "16 个相同
    # teacher-forced 前缀", "200 条提示", "8 件のプロンプト", "同 5 条 prompt" (as "16 shared prefixes" above)
    re.compile(
        r"(?<![\d.,])\d+\s*(?:个|個|条|條|篇|件|本)[^\n，。,;；：:]{0,24}?(?:" + alternation(eval_text_units.CJK_UNITS) + ")",
        I,
    ),
]
DESCRIBED += [eval_text_forms.COUNTED, eval_text_forms.COUNTED_JA, eval_text_forms.SIZED]  # counts in the card languages; a length
PATTERNS = [SOURCE, NAMED, *DESCRIBED, *eval_text_forms.PATTERNS]  # a texts column, a versioned panel, other languages

# a sentence about the measurement: a KL term, or a measuring / scoring word
MEASUREMENT = re.compile(
    KL_MENTION + r"|\bmeasur|\bscor(?:e|ed|es|ing)\b|\bevaluat|\bperplexity\b|\bPPL\b|"
    # (the card languages' words for measuring and comparing: "medida", "mesurée", "comparación", "métricas";
    # not "comparison": "changing prompts.json breaks comparison with banked runs" is no measurement)
    r"\bmedi(?:d[oa]s?|ci[óo]n|[çc][ãa]o)\b|\bmiden?\b|\bmesur|\bm[ée]tri(?:cas?|ques?)\b|\bcompara(?:ci[óo]n|[çc][ãa]o)\b|"
    # a parity check compares two runs' outputs ("16-sample parity", "the 16-sample compression parity passed")
    r"\bcompared\b|\bparity\b|\bteacher\b|\blogits?\b|\bfidelity\b|fidelidad|fidélité|ダイバージェンス|散度|divergen|測定|测量|评测|評価|평가|측정",
    I,
)
# what DESCRIBED[3] reads with nothing that tells the text apart: an article and a word of size, number or realness
BARE = re.compile(
    r"(?:on|over|across)\s+(?:(?:the|a|an|some|any)\s+)?(?:(?:finite|real|single|large|arbitrary|individual|actual|random)\s+)+"
    r"(?:prompts?|texts?|prose|documents)",
    I,
)
# a part of a counted set: "2 of 4 prompts", "139 of the 140 prompts", "3 out of 8 texts"; and in the card languages'
# words for it ("12 sobre 100 prompts", "12 de los 100", "3 sur 8 textes", "3 von 8 Texten"); the part is a whole
# count ("KL de 0,0089 sobre 256 sesiones": a decimal value over the texts, not a part of them)
PARTITIVE = re.compile(r"(?<![\d.,])\d+\s+(?:(?:out\s+)?of\s+(?:the\s+)?|sobre\s+|de\s+(?:l[oa]s\s+|os\s+|as\s+)?|sur\s+|von\s+)\d", I)  # (the match may start at the whole: "8 texts")
# a benchmark of the logits' fidelity is the KL measurement ("a fidelity benchmark against the BF16 logits")
FIDELITY = re.compile(r"\blogits?\b|\bfidelity\b|fidelidad|fidélité|fidelidade|忠実度|保真度", I)
# "measured on the calibration corpus": the card says the calibration text is the evaluation text
# the KL term as the D3 readers find it (vetoed here; eval_text_cells, eval_text_benchmarks, eval_text_uses, context)
KL_TERM = re.compile(KL_MENTION, I)
MEASURED_ON = re.compile(r"\b(?:measured|scored|evaluated|computed)\s+(?:on|over|against|using)\b", I)
# a corpus that says by itself it is an evaluation text ("the 36-sequence quality corpus": a counted one)
SELF_EVIDENT = re.compile(r"\b(?:evaluation|eval|test|held-out|validation|fidelity|quality|KLD?)\b", I)
# a text for something else: serving, speed, training, quantizing or calibrating
OTHER_USE = re.compile(
    r"\b(?:calibrat\w*|imatrix|importance matrix|train(?:ed|ing)?|fine-?tun\w*|serv(?:e|es|ing)|throughput|speed|"
    r"refusals?|harmful|jailbreak)\b|\bt/s\b|tok(?:ens)?/s|校准|キャリブレーション|校正|訓練|训练",
    I,
)
# "does not specify the evaluation corpus", "no prompts given": the text is said to be unstated
NEGATION = re.compile(r"\b(?:not|nor|no|without|unknown|unstated|unspecified)\b[^.;]{0,40}$", I)
# where a clause ends: punctuation, a full stop that is not a decimal point
# or a line break that starts a new item (a wrapped line continues its clause)
BOUNDARY = re.compile(r"[,;:()\[\]|!?。，；：（）]|\.(?!\d)|\n(?=[ \t]*(?:[-*+#>]|\d+\.\s|\n))")
REACH = 200  # characters either side read for the clause


def clause(text: str, start: int, end: int) -> tuple[int, int]:
    """Offsets of the clause holding ``text[start:end]`` (punctuation inside the match itself is kept)."""
    lo = max(0, start - REACH)
    before = [b.end() for b in BOUNDARY.finditer(text, lo, start)]
    after = BOUNDARY.search(text, end, end + REACH)
    return (before[-1] if before else lo), (after.start() if after else min(len(text), end + REACH))


# front matter `datasets:` entries that are an evaluation text by their name (the Hub lists every dataset a
# card used there: the calibration, training or distillation sets as well)
EVAL_DATASET = re.compile(r"eval|test|fidelity|logits|kld|held-?out|wikitext|benchmark", re.IGNORECASE)
NOT_EVAL_DATASET = re.compile(r"calib|imatrix|train|distill|sft|dpo|pretrain|instruct|preference", re.IGNORECASE)


def front_matter_texts(names: list[str]) -> list[tuple[int, str]]:
    """(index, name) of the ``datasets:`` entries whose name says they are an evaluation text."""
    return [(i, n) for i, n in enumerate(names) if EVAL_DATASET.search(n) and not NOT_EVAL_DATASET.search(n)]


def described(span: str) -> bool:
    """Whether ``span`` (a D3 match) describes a text without naming it ("the same 25-window panel",
    "200 validation documents"): its reading then asks for the name as well as the source."""
    text = span.strip()
    option = SOURCE.fullmatch(text)  # a text option whose argument is left out ("--corpus …")
    return (option is not None and text.startswith("--") and not option.group("arg")) or (
        any(p.fullmatch(text) for p in DESCRIBED) and not NAMED.search(text)
    )


def read(span: str) -> dict[str, Any]:
    """``name`` and ``source`` as :data:`SOURCE` and :data:`NAMED` write them in ``span`` (a Hub id with its
    split is a source; a link's id is the name and the link the source, read by the caller)."""
    m = SOURCE.search(span)
    if m is not None:
        repo = m.group("url") or m.group("path") or m.group("named") or m.group("id") or m.group("measured") or m.group("tagged") or m.group("labelled")
        arg = m.group("arg")
        if arg and not arg.startswith("-"):  # a text option's argument: the file, or the dataset, it names
            hub_or_url = arg.startswith(("http://", "https://")) or re.fullmatch(HUB_ID, arg) and not FILE_END.search(arg)
            return {"name": arg, **({"source": arg} if hub_or_url else {})}
        if repo:
            out: dict[str, Any] = {"name": repo.rstrip(".")}
            if m.group("id"):
                out["source"] = f"{repo} {m.group('split').lower()}"
            elif m.group("url") or m.group("path"):
                out["source"] = m.group(0).rstrip(".")
            return out
    n = NAMED.search(span)
    return {"name": n.group(0)} if n is not None else {}


# a file a command writes ("> run.txt", "| tee log.txt", "--output out.jsonl"): the output, not the text read
OUTPUT_BEFORE = re.compile(r"(?:(?<=\s)(?:1|2|&)?>>?|\|\s*tee(?:\s+-a)?|(?<![\w-])(?:--out(?:put)?(?:[-_]file)?|-o)(?:\s+|=))\s*[`'\"]?[\w.\-/~$]*$", I)
# a file pointed to with "see" is where a result or a setting is kept ("see `accuracy_2b_vs_hf_bf16.txt`", "See
# [configs/nvcc.txt]", "see `results/*.json`"; qwen35-2b ledger, cyoung83, emanuelemeazzo), not the text scored
SEE_BEFORE = re.compile(r"(?:\bsee|\bvoir|\bsiehe|\bv[ée]ase|\bcf\.)\s+(?:also\s+)?\[?[`'\"]?[\w.\-/~$*]*$", I)
# a project document by its upper-case name ("NOTES.txt", "night/LANDED.txt", "BISECT-LOG.md") or a run's
# results by theirs ("summary.txt", "kld_log.txt", "results.jsonl"), not a text
DOCUMENT = re.compile(r"(?:^|/)(?-i:[A-Z][A-Z0-9_\-]{2,})\.(?:txt|md)$|(?:^|[/_.\-])(?:summary|logs?|results?|report|stdout|stderr|(?:re)?scores?|metrics|outputs?|kld)\.\w+$", I)
# a text tagged with another use right after it ("`org/harmful` (refusals)", "x.txt (calibration)")
TAGGED_OTHER = re.compile(r"[`'\"]?\s*\(([^()\n]{1,30})\)")


# a Hub id that names a model, not a text ("measured on `org/Model-8B-Instruct`"): a size, a format or a tune
MODEL_ID = re.compile(r"(?<![A-Za-z0-9])\d+(?:\.\d+)?[BbMm](?![A-Za-z0-9])|gguf|instruct|mlx|awq|gptq|exl\d|-it\b", re.IGNORECASE)


# a run that says it used the counted texts: "The runs use 32 varied prompts", "the campaign used 8 fit prompts" (the
# sentence has no measuring word; its subject is the measurement's run). Right before the count, in its clause.
USED_BY_RUN = re.compile(r"\b(?:runs?|campaigns?|sweeps?|experiments?|trials?)\s+(?:\w+\s+)?(?:use[sd]?|using)\s+(?:the\s+|a\s+)?$", I)
# ... not a run of another step: "the warmup runs use 8 short prompts", "the calibration run used 64 documents"
OTHER_RUN = re.compile(r"\b(?:warm-?\s?up|calibrat\w*|imatrix|training|speed|throughput|benchmark(?:ing)?|profiling|smoke)\s+(?:runs?|campaigns?|sweeps?|experiments?|trials?)\b[^.\n]{0,30}$", I)


def used_by_run(text: str, m: re.Match[str]) -> bool:
    """A count of text units (DESCRIBED[1], "32 prompts") that is the object of a run's "use" verb."""
    if not re.made_by(m, (DESCRIBED[1],)):
        return False
    before = max(0, m.start() - 60)
    return USED_BY_RUN.search(text, before, m.start()) is not None and OTHER_RUN.search(text, before, m.start()) is None


# a line that ends with a colon introduces the block right under it (spaces and markup may follow it: ":**", ": `")
INTRO_TRAIL = " \t*_`"
SENTENCE_END = re.compile(r"[.!?](?:\s|$)|。")
WRAPPED_LINES = 4


def _ends_with_colon(text: str, start: int, end: int) -> bool:
    """Whether ``text[start:end]`` (no newline in it) ends with a colon and then only :data:`INTRO_TRAIL`. Read back
    from ``end``: a match on a long line costs the line's last characters, not a search of the rest of the line."""
    i = end
    while i > start and text[i - 1] in INTRO_TRAIL:
        i -= 1
    return i > start and text[i - 1] == ":"


def introduces_kl(text: str, m: re.Match[str]) -> bool:
    """The match's line (or the sentence it wraps into) ends with a colon and the block right under it names a KL
    term ("32 prompts x 1024 tokens, `--flag`:" over a table or printout of ``avg_kl_div``): the setup of that
    measurement."""
    start, end = m.end(), text.find("\n", m.end())
    # a lead-in sentence wrapped over a few lines ends with its colon on the last of them ("Over the held-out
    # 20-prompt run\n(`script.py`) the head falls short of the gate:"), over a table whose header names the KL
    wrapped = 0
    before: list[tuple[int, int]] = []  # the lines before the colon's: none may end a sentence
    for wrapped in range(WRAPPED_LINES):
        if end < 0 or _ends_with_colon(text, start, end):
            break
        if text.startswith("\n", end + 1):
            return False
        before.append((start, end))
        start, end = end + 1, text.find("\n", end + 1)
    if end < 0 or not _ends_with_colon(text, start, end):
        return False
    # looked for only once a colon ends the lead-in: a search of the rest of the line per match made a long line of
    # matches without a colon quadratic
    if any(SENTENCE_END.search(text, s, e) for s, e in before):
        return False
    nxt = end + 1
    while text.startswith("\n", nxt):  # blank lines between the setup and its block
        nxt += 1
    block_end = text.find("\n\n", nxt)
    block = text[nxt : block_end if block_end >= 0 else len(text)]
    if block.lstrip().startswith("```"):  # a fenced block: up to its closing fence
        close = text.find("```", nxt + block.find("```") + 3)
        block = text[nxt : close if close >= 0 else len(text)]
    if wrapped:  # the lead-in far from the match: the KL must head the block ("| active rows | mean KL (nats) |")
        block = block.lstrip().split("\n", 1)[0]
    return bool(KLD_TERM.search(block[:2000]))


def vetoed(text: str, sentence: str, m: re.Match[str]) -> bool:
    """Veto for D3's matches. For :data:`PATTERNS`, the sentence must speak of a measurement. For all:
    the clause of the match must not say it is the text of something else (calibration, training,
    serving speed, refusal counts: "imatrix Wikitext", "~500k tokens of Wikitext with iMatrix") without
    speaking of the measurement, nor that the text is not given ("does not specify the evaluation corpus")."""
    before = max(0, m.start() - 40)
    if OUTPUT_BEFORE.search(text, before, m.start()) or SEE_BEFORE.search(text, before, m.start()) or DOCUMENT.search(m.group(0).strip("`'\" ")):
        return True
    if m.re is SOURCE.compiled and any(m.group(g) and MODEL_ID.search(m.group(g)) for g in ("measured", "tagged", "labelled")):
        return True
    # "over a finite text", "on single prompts", "over real text": words that tell no text apart (a bare corpus, CONVENTIONS.md)
    if m.re is DESCRIBED[3].compiled and BARE.fullmatch(m.group(0)):
        return True
    # "agrees on 2 of 4 prompts", "closer on 139 of the 140 prompts": a result counted over the texts, not which texts
    if re.made_by(m, (DESCRIBED[1], DESCRIBED[3], eval_text_forms.COUNTED)) and PARTITIVE.search(text, max(0, m.start() - 16), m.end()):
        return True
    # a text described by another use ("50 harmful-behavior prompts", "128 calibration samples", "- 语料：校准集") is that use's text
    if re.made_by(m, (*DESCRIBED, eval_text_forms.TEXT_FIELD)) and OTHER_USE.search(m.group(0)) and not KL_TERM.search(m.group(0)):
        return True
    tag = TAGGED_OTHER.match(text, m.end(), m.end() + 40)
    if tag and OTHER_USE.search(tag.group(1)) and not KL_TERM.search(tag.group(1)):
        return True
    evident = m.re is DESCRIBED[0].compiled and SELF_EVIDENT.search(m.group(0))
    # a protocol field "Corpus: `org/name`", "Eval data: org/name" says what it is by its label
    evident = evident or (m.re is SOURCE.compiled and m.group("labelled") is not None and not re.match(r"dataset", m.group(0), re.I))
    evident = evident or re.made_by(m, (eval_text_forms.TEXT_FIELD,))  # "- 文本：`mixed_b`": a field labelled as the text
    # (a count of texts among the run's sizes, "4 prompts, 256-token contexts": kldcard.lint.read.eval_text_runs)
    counted = re.made_by(m, (DESCRIBED[1], eval_text_forms.COUNTED)) and eval_text_runs.among_run_sizes(sentence, m)
    if re.made_by(m, PATTERNS) and not has(MEASUREMENT, sentence) and not evident and not introduces_kl(text, m) \
            and not used_by_run(text, m) and not counted \
            and not (re.made_by(m, DESCRIBED) and eval_text_setup.over_kl_table(text, m)):  # a KL table's setup paragraph
        return True
    lo, hi = clause(text, m.start(), m.end())
    # the match itself left out: "calibration_datav3.txt" used as the eval text is named by what it was made for
    rest = text[lo : m.start()] + " " + text[m.end() : hi]
    if OTHER_USE.search(rest) and not MEASUREMENT.search(rest):
        return True
    return bool(NEGATION.search(text[lo : m.start()]))

