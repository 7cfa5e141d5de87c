"""Where a D1 (reference) match belongs to another measurement than the KL's.

- a reference word in a table that names no KL term: "原始模型 | 第二阶段" over refusal counts, "| Original |
  Edited |" over benchmark scores: the table compares another metric, not the KL;
- a copula that judges the reference instead of naming it: "the Python reference was already right";
- the reference by its role with words that name nothing: "against the saved reference logits";
- a comparison word right after another metric's figure: "PPL 14.28 (+5.3% vs FP32)" is the perplexity's
  baseline, even in a sentence that mentions KLD elsewhere;
- a "Base model:" field names the model the card's model derives from, not what its KL is measured
  against: it counts only next to a statement that the KL is against the base / original (rule 15c.2 of
  real_cards/CONVENTIONS.md; the caller drops it when it is the card's only D1 statement).

A table is a run of non-blank lines that start with "|" or hold two or more gaps of three spaces between
cells (a pasted pipe-less table); its KL term may stand in any of its lines or in the line above it.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.markdown import line_run
from kldcard.lint.read.terms import KL_MENTION

I = re.IGNORECASE

KL = re.compile(KL_MENTION, I)
TABLE_LINE = re.compile(r"^[ \t]*\||\S[ \t]{3,}\S[^\n]*\S[ \t]{3,}\S|^[ \t]{8,}\S+[ \t]{3,}\S")
# another metric's figure right before the comparison word: "PPL 14.28 (+5.3% ", "perplexity of 6.1 ("
OTHER_FIGURE = re.compile(
    r"(?:(?<![A-Za-z_])PPL(?![A-Za-z_])|perplexity|accuracy|MMLU|tok/s|t/s)[^.;:\n]{0,6}?\d[\d.,]*[ \t]*\(?\s*[+\-−±]?\s*[\d.,]*[ \t]*%?[ \t]*$", I
)
MAX_LINES = 40


def _line(text: str, pos: int) -> tuple[int, int]:
    start = text.rfind("\n", 0, pos) + 1
    end = text.find("\n", pos)
    return start, (end if end >= 0 else len(text))


def table_without_kl(text: str, m: re.Match[str]) -> bool:
    """``m`` stands in a table (see the module doc) in which no line, nor the line above it, names a KL term."""
    start, end = _line(text, m.start())
    if not TABLE_LINE.search(text[start:end]):
        return False
    lo, hi = line_run(text, start, end, _in_block, MAX_LINES, MAX_LINES)
    if lo > 0 and text.count("\n", lo, start) < MAX_LINES:  # the line that ended the walk up (a fence's info string)
        lo = text.rfind("\n", 0, lo - 1) + 1
    return not any(KL.search(line) for line in text[lo:hi].split("\n"))


def _in_block(line: str) -> bool:
    """A table here is every line up to a blank line or a fence: a pasted table has no pipes to tell its rows by."""
    return bool(line.strip()) and not line.lstrip().startswith("```")


def after_other_figure(text: str, m: re.Match[str]) -> bool:
    """A comparison word that follows another metric's figure ("PPL 14.28 (+5.3% vs FP32)")."""
    before = text[max(0, m.start() - 40, text.rfind("\n", 0, m.start()) + 1) : m.start()]
    return bool(OTHER_FIGURE.search(before)) and not KL.search(before)


# a copula that judges the reference instead of naming it: "the Python reference was already right", "the baseline is
# broken" (general grammar: an adjective of state is no model)
JUDGED = re.compile(
    r"^(?:the\s+)?(?:[\w.\-]+\s+)?(?:reference|baseline|base)(?:\s+model)?\s+(?:is|was)\s+(?:already\s+|still\s+|not\s+|also\s+)?"
    r"(?:right|correct|wrong|broken|fine|ok|okay|stale|unchanged|missing|available|fixed|buggy|off)\b",
    I,
)


# the reference by its role alone, with a word that names nothing ("against the reference", "vs the same reference"):
# a bare reference stays M (CONVENTIONS round 21, item 3). A reference the run kept ("against the saved reference
# logits", "relative to the stored reference": holdout9/b automodel_pr3500, holdout12/b exl3_bf16_io, two authors) is a
# role tied to the KL, D1 S with 1 since that round, which replaced the earlier "role only is M" this veto was made for
ROLE_ONLY = re.compile(
    r"(?:(?:the|a|an|our|its|their|that|this)\s+)?(?:(?:same|given|usual)\s+)*reference"
    r"(?:\s+(?:logits?|log-?probs?|outputs?|distributions?|values?|run))?",
    I,
)
NOUN_AFTER = re.compile(r"[ \t]+(?!(?:logits?|log-?probs?|outputs?|distributions?|values?)\b)[A-Za-z]", I)  # "the reference GEMM": the role qualifies a noun that names a thing
COMPARISON_WORD = re.compile(r"(?:vs\.?|versus|against|compared\s+(?:to|with)|relative\s+to)\s", I)


def vetoed(text: str, m: re.Match[str]) -> bool:
    ref = m.groupdict().get("ref") or ""
    return (table_without_kl(text, m) or after_other_figure(text, m) or bool(JUDGED.match(m.group(0)))
            or bool(COMPARISON_WORD.match(m.group(0)) and ROLE_ONLY.fullmatch(ref.strip()) and not NOUN_AFTER.match(text, m.end())))


# a labelled field whose label is the base model ("Base model: Qwen/Qwen3-4B", "**Base Model**: ..."); a bare "base:" is
# llama-perplexity's word for the KL's reference ("base: f16", "Base: the BF16 GGUF")
BASE_FIELD = re.compile(r"base[ \t]+model\W*[:：]", I)


# what a KL taken against the base model is said to be against (rule 15c.2): its role, or its unquantized weights
BASE_ROLE = re.compile(r"\b(?:base|original|parent|unmodified|teacher|unquantized|full[- ]precision|bf16|fp16|f16|fp32|f32)\b", I)


def base_field(m: re.Match[str]) -> bool:
    """Whether ``m`` is a "Base model:" field (rule 15c.2: the model's parent, a reference only with other words)."""
    return bool(BASE_FIELD.match(m.group(0)))
