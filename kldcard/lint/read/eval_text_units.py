"""D3: the nouns that count units of a text, by language (data for :mod:`kldcard.lint.read.eval_text`).

A count joined to one of these ("200 validation documents", "8 chunks of llama.cpp docs", "5 条 prompt") describes
the text scored without naming it (``incomplete``). Nouns that count a batch, a calibration set or a benchmark's
items as often as a text are left out: "sequences" (llama-perplexity's "packed 4 sequences"), "windows" and
"chunks" alone (a position count, D6's: "KLD on 100 chunks of 512 tokens"), "tasks" and "questions" (a benchmark's:
"HellaSwag on 400 tasks", "200-question MMLU-Pro"); a block, chunk or window counts text only with what it is made
of (:data:`MADE_OF`: "357 blocks of public-domain text").
"""

from __future__ import annotations

# units of text after a count: "8 prompts", "200 validation documents", "12 new seqs", "16 shared prefixes" ("seqs"
# and "prefixes" are a text's units; "sequences" is not, above)
UNITS: dict[str, tuple[str, ...]] = {
    "en": ("prompts", "documents", "docs", "conversations", "requests", "queries", "passages", "articles", "excerpts",
           "transcripts", "texts", "pages", "books", "stories", "posts", "threads", "dialogues", "dialogs", "chats",
           "snippets", "READMEs", "essays", "emails", "reviews", "chapters", "paragraphs", "sentences", "seqs", "prefixes"),
}

# the units evidence_patterns.D3 counts a text in when its source follows ("200 documents of", "64 prompts from
# wikitext-2", "512 samples in"): some of UNITS, and "samples" and "examples", which count a text only so ("16 samples"
# alone is as often a batch). Not "sequences" nor "questions" (above). Not the rest of UNITS either: with a free word
# before the noun and any "in" after it, they read counts of other things ("12 misdeed stories in ..."; D3 precision
# on real-holdout-10 .74 -> .70 when tried)
FROM_SOURCE: dict[str, tuple[str, ...]] = {
    "en": ("documents", "conversations", "prompts", "texts", "passages", "articles", "samples", "examples"),
}

# what a counted block, chunk or window is made of: "357 blocks of public-domain text", "8 chunks of llama.cpp docs"
# ("docs" is the everyday short form of "documents" / "documentation")
MADE_OF: dict[str, tuple[str, ...]] = {
    "en": ("text", "texts", "prose", "documents", "docs", "documentation", "articles", "transcripts", "conversations", "code"),
}

# the units in Chinese and Japanese after a counter word ("200 条提示", "8 件のプロンプト"); Chinese writes the English
# loan word as well ("同 5 条 prompt")
CJK_UNITS: dict[str, tuple[str, ...]] = {
    "zh": ("前缀", "前綴", "提示词", "提示詞", "提示", "样本", "樣本", "文档", "文檔", "文章", "段落", "对话", "對話", "prompts", "prompt"),
    "ja": ("プロンプト", "文書", "テキスト", "サンプル"),
}

# Task suites (benchmarks) by name, as regular-expression text: a KLD on a suite's prompts names its text
# (evidence_patterns.D3, "KLD on GSM8K prompts", "math500 / mbppplus cells"), a score on it is a benchmark's
# (eval_text_benchmarks.benchmark_only, eval_text_uses.benchmark_score: "GSM8K 96.5%"). One list for both readings.
# (each with a sample a card writes, which the spelling matches whole: tests/test_lint_read_eval_text.py)
TASK_SUITE_SAMPLES: tuple[tuple[str, str], ...] = (
    ("MT-Bench", "MT-Bench"),
    ("Arena-Hard", "Arena-Hard"),
    ("AlpacaEval", "AlpacaEval"),
    ("LAMBADA", "LAMBADA"),
    (r"HumanEval\w*", "HumanEvalPlus"),
    ("GSM8K", "GSM8K"),
    ("C-Eval", "C-Eval"),
    ("CMMLU", "CMMLU"),
    ("MMLU(?:-Pro)?", "MMLU-Pro"),
    ("GPQA(?:[- ]Diamond)?", "GPQA Diamond"),
    ("HellaSwag", "HellaSwag"),
    ("MBPP(?:-?plus)?", "MBPP-plus"),
    ("IFEval", "IFEval"),
    ("BBH", "BBH"),
    ("BIG-Bench(?:[- ]Hard)?", "BIG-Bench Hard"),
    ("TruthfulQA", "TruthfulQA"),
    ("Winogrande", "Winogrande"),
    ("MATH-?500", "MATH-500"),
    ("ARC-(?:Challenge|Easy)", "ARC-Challenge"),
    ("PIQA", "PIQA"),
    ("BoolQ", "BoolQ"),
    ("TriviaQA", "TriviaQA"),
    ("LiveCodeBench", "LiveCodeBench"),
    ("MedQA", "MedQA"),
    ("PubMedQA", "PubMedQA"),
    ("LongBench", "LongBench"),
    ("Qasper", "Qasper"),
    ("NarrativeQA", "NarrativeQA"),
    ("SQuAD", "SQuAD"),
    (r"AIME\s?(?:20)?2\d", "AIME 2025"),
)
TASK_SUITES: tuple[str, ...] = tuple(spelling for spelling, _ in TASK_SUITE_SAMPLES)
# the same as one group of regular-expression text, for the patterns that read a suite
TASK_SUITE = "(?:" + "|".join(TASK_SUITES) + ")"

# the items of a suite picked by their numbers right after its name: "MATH-500, probs 60-69", "GSM8K idx 0–3", "MBPP
# `validation`, task IDs 511-600" (the suite's items are the text scored; a benchmark's score is not given by item
# numbers). Regular-expression text, read after the suite's name (optionally its split in quotes, then a comma).
ITEMS_PICKED = (
    r"[`'\"]?\s{0,2}(?:[`'\"]?(?:test|validation|val|dev|eval)[`'\"]?\s{0,2})?[,:(]?\s{0,2}"
    r"(?:task\s+)?(?:idx|index|indices|ids?|problems?|probs?|items?|questions?|examples?|samples?|tasks?|#)\s{0,2}"
    r"\d+\s{0,2}(?:[-\u2013\u2014~]|to|\.\.)\s{0,2}\d+"
)
