"""What makes two KLD numbers the same quantity: the rule table, written down once.

Two published KLD numbers can be put side by side only when they measure the same thing. Each row of
:data:`RULES` is one aspect of a number (D1–D9, as in :mod:`kldcard.lint.reading`), what it takes for
two numbers to agree on it, and why:

- ``must-equal``: a difference makes the numbers different quantities (not comparable);
- ``caveat``: a difference is allowed but must be said next to the comparison;
- ``free``: a difference does not change the measurement (calibration is a property of the candidate),
  though a calibration set that overlaps the evaluation text is flagged.

A row compares the normalised values readers put in :class:`~kldcard.lint.reading.DisclosureReading`
(``value`` under :data:`~kldcard.lint.reading.VALUE_KEYS`); the verdicts are in
:mod:`kldcard.lint.quantity_verdict`. ``docs/comparable.md`` is generated from this table.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal

from kldcard import engines
from kldcard.lint.read import engine_names

Kind = Literal["must-equal", "caveat", "free"]


@dataclass(frozen=True)
class SameQuantityRule:
    """One row of the comparability table."""

    row: str  # short name used in verdicts: "reference", "context", ...
    disclosure: int  # D1..D9
    label: str  # the row's label in tables
    kind: Kind
    keys: tuple[str, ...]  # the reading's value keys this row compares
    reason: str  # why, in one or two sentences
    compatible: str = ""  # which differences do not change the quantity
    needs: tuple[str, ...] = ()  # keys both sides must give before the row can be decided
    asks: str = ""  # what a side that does not say leaves open ("which text")


RULES: tuple[SameQuantityRule, ...] = (
    SameQuantityRule(
        "reference", 1, "reference checkpoint", "must-equal", ("repo", "revision", "dtype"),
        "KLD measures the distance to the reference's distribution: against a Q8_0 reference a candidate "
        "is scored on how it differs from Q8_0, not from the original weights, so numbers against "
        "different references (or the same model in another dtype) are different distances.",
        "the same dtype spelled two ways (BF16, bfloat16); the same repo with and without its owner's "
        "case or a hf:// prefix; different names pinned to the same revision or sha256",
        needs=("repo", "dtype"), asks="which reference",
    ),
    SameQuantityRule(
        "runtime", 2, "runtime environment", "caveat", ("engine", "version", "backend"),
        "Logits depend on the engine, build and hardware: a reference and candidate run on different "
        "stacks carry the stack difference inside the KLD (as lint's KLD207 says). Numbers from "
        "different stacks can be compared only with that caveat stated.",
        "the engine named two ways (llama.cpp, llama-perplexity)",
        needs=("engine",), asks="which runtime",
    ),
    SameQuantityRule(
        "text", 3, "evaluation text", "must-equal", ("name", "sha256", "chat_template"),
        "KLD is an average over the tokens of one text; code, chat and encyclopaedia text give "
        "different means for the same pair of models. The text is the same by content (sha256), not "
        "by name; a chat template applied on one side only changes the tokens.",
        "the same text named two ways with the same sha256, or two names of one published file "
        "(wikitext-2 test, wikitext-2-raw-v1 test, wiki.test.raw)",
        needs=("name",), asks="which text",
    ),
    SameQuantityRule(
        "calibration", 4, "calibration data", "free", ("none", "dataset", "size", "overlaps"),
        "Calibration data is a property of the candidate (how it was quantized), not of the "
        "measurement; two candidates calibrated differently are exactly what one compares. But a "
        "calibration set that overlaps the evaluation text favours that candidate, so it is flagged.",
        needs=(), asks="which calibration data",
    ),
    SameQuantityRule(
        "context", 5, "context length", "must-equal", ("n_ctx", "stride", "chunks"),
        "A token predicted with 8192 tokens of left context is easier than with 512: the mean KLD "
        "depends on the context length and on how windows are laid over the text (stride, count).",
        needs=("n_ctx",), asks="which context length",
    ),
    SameQuantityRule(
        "positions", 6, "sampled positions", "must-equal", ("scheme", "count"),
        "Early positions in a window (little context) diverge more than late ones; scoring all "
        "positions, the second half (llama-perplexity) or every n-th gives different means.",
        "llama-perplexity's scheme and 'second-half' (the same positions)",
        needs=("scheme",), asks="which positions",
    ),
    SameQuantityRule(
        "direction", 7, "KL direction", "must-equal", ("direction", "unit"),
        "KL is not symmetric: KL(P_ref ‖ P_cand), KL(P_cand ‖ P_ref) and Jensen-Shannon are different "
        "numbers for the same pair of models. A number whose unit is not stated may be in bits (ln 2 "
        "smaller than in nats), so the row needs the unit on both sides.",
        "the same direction in bits and in nats (a factor ln 2: convert before comparing)",
        needs=("direction", "unit"), asks="which direction and unit",
    ),
    SameQuantityRule(
        "truncation", 8, "vocabulary truncation", "must-equal", ("scheme", "k", "floor"),
        "A KLD summed over the top-k tokens (a server's logprobs) or above a storage floor leaves "
        "out the tail: it is a lower bound of the full-vocabulary KLD, not the same number.",
        needs=("scheme",), asks="whether the whole vocabulary was summed",
    ),
    SameQuantityRule(
        "statistic", 9, "statistic", "must-equal", ("statistic",),
        "A mean, a median and a 99th percentile of per-token KLD are different statistics of one "
        "distribution; a median of 0.008 and a mean of 0.02 can describe the same model.",
        "'mean' and 'token-mean' (the mean over scored tokens)",
        needs=("statistic",), asks="which statistic",
    ),
    SameQuantityRule(
        "uncertainty", 9, "uncertainty method", "caveat", ("uncertainty",),
        "The interval's method (per-token bootstrap, window bootstrap, i.i.d. SE) does not change "
        "the mean, but intervals from different methods are not equally wide for the same data: "
        "compare the intervals only with that caveat.",
        needs=("uncertainty",), asks="how its interval was computed",
    ),
)

RULE_BY_ROW = {r.row: r for r in RULES}


# --------------------------------------------------------------------------------------------
# Normalisation: the spellings that name the same thing
# --------------------------------------------------------------------------------------------

_DTYPES = {"bfloat16": "BF16", "bf16": "BF16", "float16": "F16", "fp16": "F16", "f16": "F16", "half": "F16",
           "float32": "F32", "fp32": "F32", "f32": "F32", "float": "F32", "fp8": "FP8", "float8": "FP8"}

# Published files of one evaluation text under their usual names. wiki.test.raw is the file llama.cpp's
# get-wikitext-2 script downloads: the test split of wikitext-2-raw-v1.
_TEXT_ALIASES = {
    "wikitext-2-raw test": ("wikitext-2 test", "wikitext-2-raw-v1 test", "wiki.test.raw", "wikitext2 test",
                            "wikitext-2-raw", "wikitext-2 (raw, test)", "wikitext-2-raw-v1", "wikitext2",
                            "wikitext-2", "wikitext-2 test set", "salesforce/wikitext wikitext-2-raw-v1 test"),
}
_TEXT_CANON = {re.sub(r"[^a-z0-9.]+", " ", a).strip(): canon for canon, names in _TEXT_ALIASES.items()
               for a in (canon, *names)}

_STATISTICS = {"token-mean": "mean", "average": "mean", "avg": "mean", "mean": "mean", "p50": "median",
               "50": "median", "median": "median", "99": "p99", "p99.0": "p99", "99.0": "p99", "99.9": "p99.9"}
_SCHEMES_D6 = {"llama-perplexity": "second-half", "second half": "second-half", "every-n": "every:n"}
_UNCERTAINTY = {"window-bootstrap": "window bootstrap", "block-bootstrap": "block bootstrap",
                "bootstrap": "per-token bootstrap", "se-iid": "i.i.d. SE", "±": "i.i.d. SE", "se": "i.i.d. SE"}


def dtype(value: Any) -> str | None:
    if value is None:
        return None
    key = re.sub(r"[^a-z0-9_.]", "", str(value).lower())
    return _DTYPES.get(key, str(value).upper().replace("-", "_"))


def repo(value: Any) -> str | None:
    if value is None:
        return None
    text = re.sub(r"^(hf://|https?://huggingface\.co/)", "", str(value).strip(), flags=re.I).strip("/")
    return text.lower()


def text_name(value: Any) -> str | None:
    if value is None:
        return None
    key = re.sub(r"[^a-z0-9.]+", " ", str(value).lower()).strip()
    return _TEXT_CANON.get(key, key)


def engine(value: Any) -> str | None:
    """One engine however a block spells it: kldcard's own spellings of the engines it runs ("hf",
    "llamacpp", "llama-cpp-python": kldcard.engines), then the names cards write ("llama-perplexity",
    "vLLM", "exl3": kldcard.lint.read.engine_names); anything else as written, lower-cased."""
    if value is None:
        return None
    key = str(value).strip().lower()
    own = engines.lookup(key)
    return own.name if own is not None else engine_names.canonical(key, value=True) or key


def statistic(value: Any) -> str | None:
    """None for a claim that gives several statistics at once ("p99.9+mean"): not one number's statistic."""
    if value is None or "+" in str(value):
        return None
    key = str(value).strip().lower()
    return _STATISTICS.get(key, key)


def direction(value: Any) -> str | None:
    """None for "both" (a claim reporting forward and reverse) or "as-written": not one number's direction."""
    key = str(value).strip().lower() if value is not None else None
    return None if key in (None, "both", "as-written") else key


def positions_scheme(value: Any) -> str | None:
    if value is None:
        return None
    key = str(value).strip().lower()
    return _SCHEMES_D6.get(key, key)


def uncertainty(value: Any) -> str | None:
    if value is None:
        return None
    key = str(value).strip().lower()
    return _UNCERTAINTY.get(key, key)


def plain(value: Any) -> Any:
    return value.strip().lower() if isinstance(value, str) else value


# The normaliser of each (row, key); keys not listed compare as plain values.
NORMALISERS = {
    ("reference", "repo"): repo, ("reference", "dtype"): dtype, ("runtime", "engine"): engine,
    ("text", "name"): text_name, ("statistic", "statistic"): statistic, ("direction", "direction"): direction,
    ("positions", "scheme"): positions_scheme, ("uncertainty", "uncertainty"): uncertainty,
}


def normalise(row: str, key: str, value: Any) -> Any:
    return NORMALISERS.get((row, key), plain)(value)


def rules_markdown() -> str:
    """``docs/comparable.md``: the table above in words (generated; a test checks it for drift)."""
    kinds = {"must-equal": "must be equal", "caveat": "may differ only with a caveat", "free": "does not matter"}
    out = [
        "# When are two KLD numbers the same quantity?",
        "",
        "Generated by `python scripts/generate.py` from `kldcard.lint.quantity.RULES`; do not edit by hand.",
        "",
        "`kldcard comparable` reads each number's nine disclosures (from the card's `kld_evaluation` block,",
        "the card's prose, or a kldcard results file) and compares them row by row. A row's verdict is",
        "`same`, `compatible` (spelled differently, the same quantity), `differs` (both values shown) or",
        "`unknown` (a side does not say). The overall verdict is **not comparable** when a row that must be",
        "equal differs, **cannot tell** when such a row is unknown, and **comparable** otherwise (with the",
        "caveats of the rows that may differ). A calibration set that overlaps the evaluation text is",
        "flagged whatever the verdict.",
        "",
        "**Not stated: one rule.** A must-equal row that a number does not state is `unknown` and the",
        "verdict is **cannot tell**, unless every number compared comes from one card and none of them",
        "states it. One card means one content (sha256 of the file): `kldcard comparable CARD`, the same card",
        "given twice or as a file and as `hf://`, two of its claims (`CARD#LINE`, `CARD::NAME`). A card",
        "presents its numbers as measured together, so its silence is the same unknown for all of them: a",
        "caveat (\"the card does not say ... for any of its numbers\"). Two cards that both leave a disclosure",
        "out are **cannot tell**: two silences are not one measurement. Within one card several statistics",
        "side by side (a mean and a p99 column) are a caveat too; a table column or row with its own context,",
        "or a number quoted from another party's page, is its own column. The linter's KLD212 applies the",
        "same rules to a card that ranks its numbers.",
        "",
        "**What is read.** A card with a `kld_evaluation` block is read from the block only, and only as far",
        "as `kldcard lint` accepts it. A value the linter rejects (its structure and schema errors, KLD0xx",
        "and KLD1xx: `schema_version: 2`, a mean written as the string `'213e-4'`, a revision that is a",
        "branch name, an unknown key) and a candidate without its `results` are not read: an error inside",
        "one candidate leaves that number out, an error elsewhere in the block leaves out every number, each",
        "named on a `not read:` line with its rule (`unreadable` in JSON). An input with no usable number",
        "left is unusable input: one line, exit 2. A disclosure the block leaves out altogether (a KLD1xx",
        "\"is missing\" error) is read for what it is, not stated, and so is a scaffold's `TODO` placeholder",
        "(KLD013). A card without a block is read from its prose; a kldcard results JSON from its manifests.",
        "At most 100 columns (numbers that read differently) are put side by side; more is one line, exit 2",
        "(narrow an input with `CARD#LINE`, any line of a claim or candidate, or `CARD::NAME`).",
        "",
        "**Values.** A KL divergence is >= 0. A negative or non-finite value, or one above 100 nats (a",
        "quantization's mean KLD is well under 1 nat; more is a unit, scale or transcription error), is named",
        "on a `value:` line (`implausible_values` in JSON) whatever the verdict, and nothing is ranked.",
        "",
        "**What each number says.** Every number is printed with its unit as read (nats, bits, `(inferred)`",
        "from a tool's documented defaults, or \"unit not stated\"), its statistic and direction",
        "(KL(P_ref ‖ P_cand) is the forward direction), and the positions and vocabulary of its column.",
        "",
        "Numbers that are comparable rank only with their intervals: kldcard results with per-token files go",
        "to `kldcard rank` (paired intervals on the same positions; `kldcard comparable --rank FILE`); card",
        "numbers are listed with the intervals the cards give, because a published mean without its interval",
        "cannot rank two close candidates.",
        "",
        "| row | disclosure | rule | compares |",
        "|---|---|---|---|",
    ]
    for r in RULES:
        out.append(f"| {r.label} | D{r.disclosure} | {kinds[r.kind]} | {', '.join(r.keys)} |")
    for r in RULES:
        out += ["", f"## {r.label} (D{r.disclosure}): {kinds[r.kind]}", "", r.reason]
        if r.compatible:
            out += ["", f"Compatible (not a difference): {r.compatible}."]
    return "\n".join(out) + "\n"
