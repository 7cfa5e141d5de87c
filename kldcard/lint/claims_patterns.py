"""The patterns of :mod:`kldcard.lint.claims`: KLD terms, numbers, statistic labels, contexts that
make a KL term no claim; the lines tools print are their grammars' (kldcard.lint.read.tools)."""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.markdown import HEADING, LIST_ITEM
from kldcard.lint.read import claim_terms, eval_text_units, other_metrics
from kldcard.lint.read.numbers import KLD_VALUE, TIME_UNITS
from kldcard.lint.read.metric_keys import METRIC_KEY
from kldcard.lint.read.terms import KL_NAME, KL_TERM, KL_WORD, STATISTIC_WORDS, TRAINING_WORDS, alternation
from kldcard.lint.read.tools.exllamav3 import PER_TOKEN as MODEL_DIFF_PER_TOKEN  # noqa: F401  (read by claims)
from kldcard.lint.read.tools.exllamav3 import STAT as MODEL_DIFF_STAT  # noqa: F401
from kldcard.lint.read.tools.llama_perplexity import CHUNK as LLAMA_CHUNK  # noqa: F401
from kldcard.lint.read.tools.llama_perplexity import CHUNK_HEADER as LLAMA_CHUNK_HEADER  # noqa: F401
from kldcard.lint.read.tools.llama_perplexity import HEADER as LLAMA_HEADER  # noqa: F401
from kldcard.lint.read.tools.llama_perplexity import OLD_STAT  # noqa: F401
from kldcard.lint.read.tools.llama_perplexity import STAT as LLAMA_STAT  # noqa: F401

# ASCII semantics: case-insensitive matching with Unicode folding is ~3x slower and every keyword is
# ASCII; the few non-ASCII symbols (μ, Δp, β) stand outside \b groups because \b is ASCII-only here.
I = re.IGNORECASE | re.ASCII

# "KLD", "KL-div", "KL divergence", "Kullback-Leibler", "KL(" — but not "KLD-QA", "kld_results.csv".
KLD_TERM = re.compile(
    KL_TERM  # English and the other languages' own (kldcard.lint.read.terms: one definition for every reader)
    + "|" + claim_terms.IDENTIFIERS  # and metric names in snake case ("KLD_95", "mean_kld": read.claim_terms)
    + "|" + METRIC_KEY,  # and metric keys printed beside a value ("kl_div 0.189", "kld_gemma4_q8 0.509": read.metric_keys)
    I,
)
# Decimal numbers that could be a divergence, as people write them (kldcard.lint.read.numbers: a decimal
# comma, an exponent, "·10⁻³"); not versions (v0.2.8), sizes (5.0bpw), model names or percentages.
NUMBER = KLD_VALUE
# Statistic labels that say which summary a number is.
STAT_LABEL = re.compile(
    # "mean" as a verb is no label ("a KL of 0.05 does not mean the same")
    r"\b(?:(?<!not\s)(?<!n't\s)(?<!\bto\s)(?<!does\s)(?<!would\s)(?<!will\s)(?<!\bcan\s)(?<!could\s)(?<!might\s)mean|average[ds]?|avg|median|max(?:imum)?|min(?:imum)?|p\d{1,2}(?:\.\d)?|\d{1,2}(?:st|nd|th)\s*percentile"
    r"|percentile|token[- ]mean)\b|μ"
    # a percentage on the line before the KL term is no percentile label ([ \t], not \s: Heretic's printouts)
    r"|(?<![\w.+−])\d{1,2}(?:\.\d+)?%[ \t]*" + KL_WORD + r"|" + KL_NAME + r"\s*\(?(?:p|@)?\d{1,2}(?:\.\d+)?%"
    r"|(?<![^\W\d_])(?:" + alternation(STATISTIC_WORDS) + r")(?![^\W\d_])",  # other languages' words
    I,
)
# Between a number and a KLD term that follows it only a statistic word may stand ("0.0009 mean KLD"), after the unit
# ("1.24 nats/token KL drift", "1.24 nats per token of KL").
# Emphasis and code marks around either may stand there too ("**0.001634** mean KL divergence").
# (Within the line: a value that ends a log line is not the next line's "Mean KLD:", "... ± 0.002471" / "Mean    KLD:".)
# So may one of the KL's own qualifiers ("+0.0005 mean weight-only KL", "0.021 mean per-token KL"): a list, since any
# hyphenated compound there may be a unit or a count of something else ("4.5 bits-per-weight KL", "1.2 million-token KL
# evaluation"), and a direction word a loss weight ("0.7 forward KL and 0.3 reverse KL").
KL_QUALIFIERS = ("weight-only", "per-token", "per-position", "next-token", "token-level", "full-vocab", "full-vocabulary",
                 "teacher-forced", "held-out")
AFTER_GAP = re.compile(r"^[ \t*_`]*(?:nats?(?:/tok(?:en)?|[ \t]+per[ \t]+token)?[ \t*_`]*(?:of[ \t]+(?:the[ \t]+)?)?)?(?:\(?(?:mean|median|average|avg|token[- ]mean)\)?[ \t*_`]*)?"
                       r"(?:(?:" + "|".join(KL_QUALIFIERS) + r")[ \t*_`]+)?$", I)
# Other metrics: a number right after one of these belongs to it, not to KLD (read.other_metrics: the one table of
# them, its scores, top-k agreement, the run's figures, settings), or after a task suite's name (a benchmark's score).
# Here in their English spellings, in ASCII word boundaries (I), the non-ASCII ones ("Δp", "β") outside them.
OTHER_METRIC = re.compile(
    other_metrics.spellings(other_metrics.TOKEN_AGREEMENT, other_metrics.SETTINGS, ascii=False)
    + r"|\b(?:" + other_metrics.spellings(other_metrics.SCORES, ascii=True, only=other_metrics.NAMED_BETWEEN)
    + "|" + other_metrics.spellings(other_metrics.TOKEN_AGREEMENT, other_metrics.RUN_FIGURES, other_metrics.RUN_UNITS,
                                    other_metrics.SETTINGS, other_metrics.GENERIC, ascii=True)
    + "|" + eval_text_units.TASK_SUITE + r")\b",
    I,
)
# A task suite after a preposition of place, in the KL term's own clause, is the text the KL was taken on, not a
# score's metric ("Mean KLD on GSM8K: 0.012", "KLD measured on 200 HellaSwag prompts: 0.012", "La KLD media en
# HellaSwag es 0,012", "Die mittlere KLD auf HellaSwag beträgt 0,012"); after a clause break ("KLD is small; on GSM8K:
# 0.71") the suite is a metric of its own (claim_attach.number_attached reads the gap up to the phrase).
SUITE_AS_TEXT = re.compile(
    r"(?<![\w-])(?:on|over|across|en|sobre|em|sur|auf|bei)[ \t]+(?:(?:the|el|la|los|las|o|a|le|les|den|dem)[ \t]+)?"
    r"(?:\d[\d,.]*[ \t]+)?" + eval_text_units.TASK_SUITE + r"\b"
    r"(?:[ \t]+(?:prompts|questions|problems|items|test[ \t]set|split|samples|preguntas|Fragen))?",
    I,
)
# "- Median: 0.0071", "* p99 = 0.31", "- 中位数 (median): 0.0071": a label, then one number.
SIBLING_STAT = re.compile(
    r"^\s*(?:[-*+]|\d+[.)])\s+[^:=\d]{0,30}?\b(?:mean|average|avg|median|max(?:imum)?|min(?:imum)?|p\d{1,2}(?:\.\d)?)\b"
    r"[^:=\d]{0,12}[:=]\s*(?P<num>-?\d*\.\d+(?:[eE][-+]?\d+)?)\s*(?:nats?)?\s*\.?\s*$",
    I,
)
PARENTHETICAL = re.compile(r"\([^()]{0,80}\)")
# Uncertainty words are transparent: "0.0046 (95% CI 0.0044–0.0048)" are all KLD numbers.
UNCERTAINTY = re.compile(r"±|\bCI\b|\bSE\b|\bSEM\b|standard error|\bstd\b|\[|–|\bto\b", I)
# A policy named by the system part it governs is a rule of that part, not the model RL trains ("gate policy (b) is
# passed", "eviction policy", "routing policy", "release policy"): plain grammar of a compound noun.
# (not routing, placement, scheduling or quantization: RL trains policies of those, "the routing policy's KL to its
# initialization")
SYSTEM_PARTS = ("gate", "cache", "eviction", "admission", "rotation", "precision", "acceptance", "retention", "rounding",
                "fallback", "offload", "metric", "naming", "versioning", "pinning")
# (looked back on from after "polic", so that the literal is matched first: TRAINING_CONTEXT runs on every sentence)
_NOT_SYSTEM = "".join(f"(?<!{w} polic)(?<!{w}-polic)" for w in SYSTEM_PARTS)
# A KL term inside a training objective or RL setup is not a quality claim; nor beside a learning rate (a training
# run's setting: "With lr 1e-5 ... KL climbed from ~0.05 to 2-4", "Adaptive KL coefficient, reduce learning rate",
# "tốc độ học (learning rate)"; several authors of RL and distillation notes).
TRAINING_CONTEXT = re.compile(
    r"β|\b(?:penalty|penali[sz]ed|coefficient|coef|beta|reward|polic" + _NOT_SYSTEM + r"(?:y|ies)|regulari[sz]\w*|PPO|GRPO|DPO|learning[ -]rate|lr|"
    r"RLHF|target KL|kl_coef|loss|objective|KL (?:term|budget|constraint|control)|threshold|cut-?off|criterion)\b"
    r"|(?<![^\W\d_])(?:" + alternation(TRAINING_WORDS) + r")(?![^\W\d_])",  # the other languages' (read.terms)
    I,
)
# Generic statements and rules of thumb ("a KLD below 0.01 is usually imperceptible").
GENERIC_CONTEXT = re.compile(r"\b(?:rule of thumb|usually|typically|generally|in general|as a rule)\b", I)

# llama-perplexity's printed block and per-chunk lines, exllamav3 model_diff's lines: one grammar per
# tool (kldcard.lint.read.tools); a line of them pasted as list items or quotes is still output.
LIST_OR_QUOTE = re.compile(r"^[ \t]*(?:>|[-*+]\s)")
# A result line in a fenced block: "Phase 1 baseline (n=256):  KLD 0.219408  PPL 9.9299" (not "kld = 0.5").
# Logit-check logs print exponents ("KL divergence: 3.1e-06"). Logs also print key=value pairs with no space
# ("KLD=0.0826", "ppl=6.2 kld=0.0123"): read as results outside parentheses (not a call's "f(kld=0.5)"). A JSON
# record's field is one too when its key is a KL metric's ('"mean_kld": 0.00522,', '{"kl_divergence": 0.004, ...}'):
# the quoted key and its number, as an eval record prints them (a setting's key, "kl_coef", "target_kld", is no
# metric key: read.metric_keys; nor a dict in a line of code or a setting: 'ACC_THRESHOLDS = {M: {"kl_div": 0.01}}',
# 'assert_close(m, {"mean_kld": 0.01})', 'gate: {"mean_kld": 0.05}').
_CODE_TERM = r"(?<![\w-])(?:" + KL_NAME + "|" + METRIC_KEY + r")"
CODE_RESULT = re.compile(
    r"^(?:[^{}\[\]#'\"(]{0,60}?" + _CODE_TERM + r"=(?=-?\d)|[^{}\[\]#'\"]{0,60}?" + _CODE_TERM + r"(?:\s*:\s*|\s+)"
    # (before the key only the record's own structure: an opening brace, a parent key, other fields with their values)
    # (and no training run's field on the line: '{"step": 10, "loss": 1.2, "mean_kl": 0.031}' is its log)
    r"|(?![^\n]*\"(?:loss|reward|rewards|advantage|lr|learning_rate|grad_norm|epoch)\")"
    r"\s*(?:\"[\w.\-]{1,40}\"\s*:\s*)?\{?\s*(?:\"[^\"\n]{1,40}\"\s*:\s*(?:\"[^\"\n]{0,80}\"|-?[\d.eE+\-]+|true|false|null)\s*,\s*){0,8}"
    r"\"(?:" + METRIC_KEY + r")\"\s*:\s*)"
    r"(-?\d+\.\d+(?:[eE][-+]?\d+)?)(?![\w.%])(?!\s*(?:" + TIME_UNITS + r")\b)",  # (not a timing: "kl_divergence: 0.18 seconds")
    I,
)


# Relative measurements attached to KLD are claims too ("reduces the KL Divergence by 7.5%", "2.3x lower
# mean KL"); they carry no KLD value, so no number (nothing to check against a block).
RELATIVE = re.compile(
    r"\b(?:reduces?|reduced|lowers?|lowered|cuts?|improves?|improved|increases?|increased|raises?)\s+(?:the\s+)?"
    r"(?:mean\s+)?" + KL_WORD + r"[^.\n]{0,20}?\bby\s+~?\d+(?:\.\d+)?\s*%|"
    r"\b\d+(?:\.\d+)?\s*[x×]\s+(?:lower|higher|smaller|larger|less|more)\s+" + claim_terms.STATISTIC_BEFORE + KL_WORD + "|"
    # "5.92x the KLD of Unsloth Q6", and with the reference between ("~5.5x the KLD from BF16 of Q8_0 itself")
    r"\b\d+(?:\.\d+)?\s*[x×]\**\s+the\s+(?:mean\s+|median\s+)?" + KL_WORD
    + r"(?:\s+(?:from|vs\.?|versus|against|to|relative\s+to)\s+(?:the\s+)?[\w.-]+)?\s+of\b|"
    # "adds +19% KLD vs the baseline"; not a gate so named ("missed the +5% KL line on one prompt")
    r"(?<![\w.])[+−]\d+(?:\.\d+)?\s*%\s+(?:mean\s+)?" + KL_WORD + r"(?![\s*_`]+(?:line|gate|bar|threshold|budget|limit|cap|ceiling)\b)|"
    + claim_terms.RELATIVE_MORE,  # "22% lower KLD", "1.66× lower divergence", "69 % menos KLD" (read.claim_terms)
    I,
)


# What makes the number after it a bound, not a measurement: a comparison sign ("KL < 0.01", "KLD > 0.01
# nats", "<= 0.05", "< ~0.005").
# The comparison words Chinese writes where English writes the sign, before the number ("KLD 变差超过 0.0003", "低于 0.01"):
# plain grammar, as the sign. A code mark between sign and number changes nothing ("KL(BF16||W8A8) <= `0.005`").
# (Emphasis stays out: "KL ≤ **0.0702** (= mlx-lm 0.0610 × 1.15)" of h3 hf2q carries its measured value on that bound.)
# LaTeX writes the signs as commands ("$\\le 10^{-3}$", "\\leq 0.01"): the same grammar in math mode.
BOUND_BEFORE = re.compile(r"(?:[<>≤≥≲≳]|<=|>=|\\(?:le|leq|lt|ge|geq|gt|leqslant|geqslant|lesssim|gtrsim)(?![A-Za-z])|超过|超過|低于|低於|高于|高於|小于|小於|大于|大於)"
                          r"[\s`{$]*[~≈]?[\s`{$]*$")
RULE_LINE = re.compile(r"^[\s\-=+]{3,}$")
# A KLD column of thresholds or ranges is an interpretation scale, not a measurement (R4).
THRESHOLD_CELL = re.compile(r"^\W{0,3}(?:[<>≤≥]|<=|>=|~)|^\s*-?[\d.]+(?:e-?\d+)?\s*(?:-|–|to)\s*-?[\d.]+(?:e-?\d+)?\s*$", I)
HEADING_OR_ITEM = re.compile(HEADING.pattern + "|" + LIST_ITEM.pattern)
