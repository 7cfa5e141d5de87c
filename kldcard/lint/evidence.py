"""Per-card disclosure evidence: for each of the nine disclosures, stated / inferred / missing.

Evidence is searched in the whole body (prose, tables, command lines and pasted logs), because cards
put their protocol anywhere. Each pattern may be vetoed by its sentence (kldcard.lint.evidence_vetoes): a quantizer version is not
the runtime that produced the logits, an imatrix corpus is not the evaluation text, a training KL
penalty is not a direction. Patterns are compiled once at import; see disclosure-patterns.md §2 for
the phrasings they cover.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from dataclasses import dataclass, field
from typing import Any, Literal

from kldcard.lint.claims import TRAINING_CONTEXT, Claim
from kldcard.lint.evidence_patterns import (
    ARROW,
    CALIBRATED_ON,
    D1,
    D2,
    D3,
    D4_NONE,
    D4_WORD,
    D5,
    D5_K_CONTEXT,
    D6,
    D7,
    D8,
    D9,
    DATASET_HINT,
    EVAL_FROM_CALIBRATION,
    QUANTIZED_REF,
    SEPARATION,
)
from kldcard.lint.evidence_vetoes import (
    CALIBRATION,
    EVAL_WORDS,
    HYPOTHETICAL,
    KL_MENTIONED,
    NEGATED,
    QUANTIZER,
    SERVING,
    calibration_only,
    deployed,
    not_eval_text,
)
from kldcard.lint.markdown import Doc
from kldcard.lint.read import (
    aggregation,
    calibration,
    comparison,
    context,
    direction,
    eval_text,
    eval_text_uses,
    positions,
    record_fields,
    reference,
    reference_scope,
    reference_words,
    runtime,
    runtime_roles,
    tensor_shapes,
    vocabulary,
)
from kldcard.lint.read.sentence_terms import Sentence, SentenceTerms, has
from kldcard.lint.reading import NAMES  # noqa: F401  (evidence.NAMES: read by callers)
from kldcard.lint.scan import finditer, spans_with
from kldcard.lint.tool_defaults import Tool, defaults, recognise

Status = Literal["stated", "inferred", "missing"]
# ASCII: case-insensitive matching with Unicode case folding is ~3x slower, and every keyword here
# is ASCII (μ, ‖, × and Δ are matched literally either way).
I = re.IGNORECASE | re.ASCII


@dataclass(frozen=True)
class Evidence:
    """What the card says about one disclosure. ``offset`` is a body offset (None when missing)."""

    disclosure: int
    status: Status
    offset: int | None = None
    text: str = ""  # the matched text, or the tool default when inferred
    tool: str | None = None


@dataclass(frozen=True)
class Flag:
    kind: str  # "quantized-reference" | "eval-from-calibration"
    offset: int
    text: str


@dataclass
class CardEvidence:
    disclosures: dict[int, Evidence]
    flags: list[Flag] = field(default_factory=list)
    tool: Tool | None = None


# A veto reads the match's sentence, clipped to this many characters either side: a pasted page
# without full stops is one "sentence", and reading all of it per match would be quadratic.
SENTENCE_CLIP = 1000


def _sentence_span(doc: Doc, m: re.Match[str]) -> tuple[int, int]:
    s, e = doc.sentence_at(m.start())
    return max(s, m.start() - SENTENCE_CLIP), min(e, m.end() + SENTENCE_CLIP)


def _sentence(doc: Doc, m: re.Match[str]) -> str:
    return doc.text[slice(*_sentence_span(doc, m))]


def _veto_sentence(doc: Doc, terms: SentenceTerms, m: re.Match[str]) -> Sentence:
    """:func:`_sentence`, as a :class:`Sentence` that knows its card sentence (read.sentence_terms)."""
    s, e = whole = doc.sentence_at(m.start())
    return Sentence(terms, max(s, m.start() - SENTENCE_CLIP), min(e, m.end() + SENTENCE_CLIP), whole)


# Every match of a disclosure's patterns is a candidate for the reading of some claim (the nearest
# wins); a pattern that matches more often than this on one card adds no new evidence, only work.
MAX_PER_PATTERN = 64


def _all(doc: Doc, patterns: list[re.Pattern[str]], veto: Any = None) -> list[re.Match[str]]:
    """The matches of the patterns whose sentence the veto does not reject (at most
    :data:`MAX_PER_PATTERN` per pattern), by position."""
    out: list[re.Match[str]] = []
    # the veto's sentence knows its card sentence: a term the veto looks for there (sentence_terms.has) is found once
    # per sentence, not once per match (a long line of matches read its whole clip per match)
    terms = SentenceTerms(doc.text)
    for pattern in patterns:
        kept = 0
        for m in finditer(pattern, doc.scanned):
            if veto is not None and veto(_veto_sentence(doc, terms, m), m):
                continue
            out.append(m)
            kept += 1
            if kept >= MAX_PER_PATTERN:
                break
    out.sort(key=lambda m: m.start())
    return out


# a slash between numbers (also a range over its total: "0-1/100") or before a per-unit word is a score or a unit,
# not a dataset's path: "**20/24**" in a quant ladder's row, "Matrix bits/weight" in a table's header (holdout12 abstention_campaign, cpu_decode; plain
# number and unit notation); a Markdown file is a report ("`viability/RESULT_AD_QUANT_LADDER.md`"), not data
NOT_A_PATH = re.compile(r"\d+(?:\.\d+)?(?:-\d+(?:\.\d+)?)?/\d+(?:\.\d+)?|[\w.\-]+/(?:weights?|tokens?|toks?|s|sec|params?|parameters?|GB|GiB)|"
                        r"[\w.\-/]+\.md|"
                        # the language's slashed abbreviations ("n/a" in a table cell, "w/o", "and/or", "I/O")
                        r"n/a|w/o|w/|and/or|i/o|"
                        # a slashed list of quant or format names ("K_P/K_L", "Q4_K/Q5_K"): alternatives, not a path
                        r"(?-i:[A-Z][A-Z0-9_]{0,7}(?:/[A-Z][A-Z0-9_]{0,7})+)",
                        re.IGNORECASE)


def _dataset_hint(sentence: str) -> bool:
    """Whether the sentence names calibration data (:data:`DATASET_HINT`), a fraction or unit ratio aside, nor a
    model, a page or a source file (kldcard.lint.read.calibration.names_no_data)."""
    return any(not NOT_A_PATH.fullmatch(h.group(0)) and not calibration.names_no_data(sentence, h)
               for h in DATASET_HINT.finditer(sentence))


def _d4_all(doc: Doc) -> list[re.Match[str]]:
    def veto(sentence: str, m: re.Match[str]) -> bool:
        if doc.text[max(0, m.start() - 2) : m.start()] == "--" or HYPOTHETICAL.search(calibration.own_sentence(sentence, m.start() - _sentence_span(doc, m)[0])):
            return True
        if m.group(0).lower() == "calibrated" and not CALIBRATED_ON.match(doc.text, m.end()):
            return True
        if calibration.not_data(doc.text, m) or calibration.required(doc.text, m):  # "Calibration targets ...", "needs a calibration corpus"
            return True
        return bool(NEGATED.search(sentence)) or not _dataset_hint(sentence) or calibration.in_link(doc.text, m)

    def veto_more(sentence: str, m: re.Match[str]) -> bool:  # kldcard.lint.read.calibration
        # (a conditional is the match's own sentence's: one ended by "**" before it is another, read.calibration.own_sentence)
        if HYPOTHETICAL.search(calibration.own_sentence(sentence, m.start() - _sentence_span(doc, m)[0])) or NEGATED.search(sentence) or calibration.required(doc.text, m):
            return True
        return calibration.veto(sentence, m, doc.text[max(0, m.start() - 200) : m.start()], doc.text)

    found = _all(doc, [D4_NONE]) + _all(doc, [D4_WORD], veto) + _all(doc, calibration.PATTERNS, veto_more)
    return sorted(found, key=lambda m: m.start())


def _d1_all(doc: Doc) -> list[re.Match[str]]:
    # the reference named by a comparison, a label or a KL's argument; and (kldcard.lint.read.reference) by
    # its role or an assignment ("the original BF16 output distribution", "base = the f16-KV logits")
    def veto(s: str, m: re.Match[str]) -> bool:
        return has(HYPOTHETICAL, s) or reference.veto(s, m, doc.text[m.end() : m.end() + 30])

    # a comparison of sizes or speeds is not the KL's reference ("27.9% of the cache size vs fp16", read.comparison)
    # ... nor the baseline of another metric's table or figure (read.reference_scope)
    # ... nor a rival's figure ("vs q8_0's 0.0023", read.comparison)
    def elsewhere(m: re.Match[str], worded: bool = True) -> bool:  # worded: the match starts with its comparison word
        return (worded and comparison.of_size(doc.text, m)) or comparison.rival_value(doc.text, m) or reference_scope.vetoed(doc.text, m)

    # ... nor a pair that a sentence without a KL term sets side by side ("the gap that remains between the bf16 kernels
    # of RDNA4 and RDNA3/RDNA3.5", "stood between a hybrid MoE model and a zero train/generation gap": the real holdout's
    # gfx1201 note, holdout9/b megatron_pr7562): "between X and Y" is a KL's pair only where the sentence names the KL
    def unpaired(s: str, m: re.Match[str]) -> bool:
        return m.re is D1[1].compiled and m.group(0)[:7].lower() == "between" and not KL_MENTIONED.search(s)

    found = sorted(_all(doc, D1, lambda s, m: elsewhere(m) or unpaired(s, m))
                   # (comparison.KL_FROM starts with its KL term, "the KL from bf16": what it compares is a KL, whatever size
                   # or speed the words before it name: "ran 1.33x faster, and the KL from bf16 was 0.0045")
                   + _all(doc, reference.PATTERNS, lambda s, m: veto(s, m) or elsewhere(m, re.made_by(m, (comparison.VERSUS, reference_words.BEFORE)))),
                   key=lambda m: m.start())
    # a "Base model:" field names what the model derives from; it names the KL's reference only where the text says
    # the KL is taken against the base / original (rule 15c.2, real_cards/CONVENTIONS.md): another match that names
    # such a reference, not one that names another ("vs Q8_0")
    others = [m for m in found if not reference_scope.base_field(m)]
    return found if any(reference_scope.BASE_ROLE.search(m.group(0)) for m in others) else others


# a conversion checked by its KL ("the conversion was verified stage by stage: ... a mean KL of 7.6e-6 between the GGUF
# and the HF logits"): the engine named in that sentence ran the check, not the converter (port parity, general)
CONVERSION = re.compile(r"\bconver(?:sion|ter)\b", I)


def _checked_conversion(sentence: str) -> bool:
    """Whether the only quantizer word of ``sentence`` is a conversion, and a KL term measures it there."""
    return bool(CONVERSION.search(sentence)) and not QUANTIZER.search(CONVERSION.sub(" ", sentence)) and bool(KL_MENTIONED.search(sentence))


def _d2_all(doc: Doc) -> list[re.Match[str]]:
    # an engine with its version, or hardware; and (kldcard.lint.read.runtime) the engine named without a
    # version, by itself or by its tool. Hardware in a sentence about memory or serving is where the model
    # runs, not where it was measured.
    def veto(s: str, m: re.Match[str]) -> bool:
        hardware = m.re is D2[2].compiled  # the hardware table (read.hardware_names)
        # a KLD tool named is the measurement's whatever else its sentence says ("runs ... with llama-perplexity")
        quantizer = m.re is not runtime.NAMED_TOOL.compiled and has(QUANTIZER, s) and not _checked_conversion(s)
        near = doc.text[max(0, m.start() - 12) : m.start()], doc.text[m.end() : m.end() + 40]
        if m.re is not runtime.NAMED_TOOL.compiled and runtime_roles.vetoed(doc.text, m):  # named for another job (kldcard.lint.read.runtime_roles)
            return True
        if runtime_roles.training_section(doc.text, m, s):  # in a training section, for training
            return True
        if hardware and runtime.measured_on(doc.text, m):
            quantizer = False  # "measured on an RTX 4090": the measurement's hardware, whatever else the sentence runs
        return quantizer or (hardware and (deployed(s, m) or runtime.hardware_veto(s, m, *near))) or runtime.veto(s, m, *near, title=runtime.in_title(doc.text, m.start()))

    return sorted(_all(doc, D2, veto) + _all(doc, runtime.PATTERNS, veto), key=lambda m: m.start())


def _d7_all(doc: Doc) -> list[re.Match[str]]:
    out = _all(doc, D7, direction.in_training)
    # and (kldcard.lint.read.direction) a formula under another name or joined by an arrow, roles, code, words
    out += _all(doc, direction.PATTERNS, lambda s, m: direction.in_training(s, m) or not direction.is_formula(m))
    arrows = list(finditer(ARROW, doc.scanned))  # "(q→o)" next to "(o→q)": both directions, labelled
    pairs = {(a.group(1), a.group(2)) for a in arrows}
    # (between roles: "(hf->tt)" next to "(tt->hf)" are two conversions, not two directions of KL)
    out += [a for a in arrows if (a.group(2), a.group(1)) in pairs and direction.names_a_role(a.group(1), a.group(2))][:MAX_PER_PATTERN]
    return sorted(out, key=lambda m: m.start())


def collect(doc: Doc) -> dict[int, list[re.Match[str]]]:
    """Every place the body states something about each disclosure (D1–D9), by position: the
    candidates the reader (:mod:`kldcard.lint.reader`) picks from for each claim."""
    calib_only = lambda s, _m: calibration_only(s) or has(HYPOTHETICAL, s)  # noqa: E731
    # llama-perplexity scores PPL and KLD in one run over the same windows; elsewhere a perplexity's windows are its own
    both = recognise(doc.scanned) is not None
    return {
        1: _d1_all(doc),
        # hardware in a sentence about memory or serving is where the model runs, not where it was measured
        2: _d2_all(doc),
        # a file given to a KL run's text option is its text whatever its name says (read.eval_text_uses). (eval_text.vetoed
        # first: both only read, and its sentence-wide test, read once per sentence, settles most matches of a long line
        # that repeats a text's description; not_eval_text reads a statement window and links around every match)
        3: _all(doc, D3, lambda s, m: not eval_text_uses.kl_run_file(doc.text, m) and (eval_text.vetoed(doc.text, s, m) or not_eval_text(doc, s, m))),
        4: _d4_all(doc),
        # a record's field line is its own statement (read.record_fields.statement)
        5: _all(doc, D5, lambda s, m: calib_only(record_fields.statement(doc.text, context.cjk_sentence(doc.text, s, m), m), m)
                or (m.re is D5_K_CONTEXT.compiled and bool(SERVING.search(s))) or context.vetoed(doc.text, s, m)
                or (not both and context.perplexity_only(doc.text, m)) or tensor_shapes.is_shape(doc.text, m)),
        6: _all(doc, D6, lambda s, m: calib_only(record_fields.statement(doc.text, context.cjk_sentence(doc.text, s, m), m), m) or positions.vetoed(doc.text, s, m)
                or (not both and context.perplexity_only(doc.text, m)) or tensor_shapes.is_shape(doc.text, m)),
        7: _d7_all(doc),
        8: sorted(_all(doc, D8 + vocabulary.PATTERNS, lambda s, m: vocabulary.veto(s, m, doc.text)), key=lambda m: m.start()),
        9: sorted(_all(doc, D9 + aggregation.PATTERNS, lambda s, m: bool(TRAINING_CONTEXT.search(s)) or aggregation.veto(s, m, doc.text)),
                  key=lambda m: m.start()),
    }


def assess(doc: Doc, claims: list[Claim], metadata: dict[str, Any] | None = None,
           found_all: dict[int, list[re.Match[str]]] | None = None) -> CardEvidence:
    """Card-level disclosure evidence for a card whose body is ``doc`` and whose KLD claims are
    ``claims``: the first statement of each disclosure (``found_all``: :func:`collect`'s result)."""
    found_all = found_all if found_all is not None else collect(doc)
    result: dict[int, Evidence] = {}
    for n, ms in found_all.items():
        if ms:
            result[n] = Evidence(n, "stated", ms[0].start(), ms[0].group(0).strip())
    labelled = next((c for c in claims if c.labelled), None)
    if labelled is not None and (9 not in result or labelled.offset < (result[9].offset or 0)):
        result[9] = Evidence(9, "stated", labelled.offset, labelled.text)
    if 4 not in result and metadata and _metadata_calibration(metadata):
        result[4] = Evidence(4, "stated", None, "front matter datasets: " + _metadata_calibration(metadata))
    tool = recognise(doc.scanned)
    if tool is not None:
        for n, default in defaults(tool).items():
            if n not in result:
                result[n] = Evidence(n, "inferred", tool.offset, default, tool.name)
    for n in NAMES:
        result.setdefault(n, Evidence(n, "missing"))
    return CardEvidence(dict(sorted(result.items())), _flags(doc), tool)


def _metadata_calibration(metadata: dict[str, Any]) -> str:
    datasets = metadata.get("datasets")
    items = datasets if isinstance(datasets, list) else [datasets]
    hits = [str(d) for d in items if isinstance(d, str) and re.search(r"calib|imatrix", d, re.I)]
    return ", ".join(hits)


DATASET_NAME = re.compile(r"(?<![\w.\-/])[\w.\-]+/(?P<short>[\w.\-]*[A-Za-z][\w.\-]*)|(?<![\w.\-])[\w\-]+\.(?:txt|parquet|jsonl?)\b")


MAX_DATASET_NAMES = 32
TRAIN_SPLIT = re.compile(r"\btrain(?:ing)?\b|wiki\.train", I)
HELD_OUT_SPLIT = re.compile(r"\b(?:test|validation|valid|val|dev|held-out)\b|wiki\.test", I)


def _shared_dataset(doc: Doc) -> list[Flag]:
    """Eval text named with the same dataset as the calibration ("calibration: 512 samples of
    NeelNanda/pile-10k" and "KLD over 512 pile-10k samples")."""
    names: set[str] = set()
    train_split = False  # "imatrix from Salesforce/wikitext train" vs an eval on its test split
    for k in spans_with(CALIBRATION, doc.scanned, doc.sentences, doc.sentence_starts):
        sentence = doc.text[doc.sentences[k][0] : doc.sentences[k][1]]
        if CALIBRATION.search(sentence):
            train_split |= bool(TRAIN_SPLIT.search(sentence))
            for m in DATASET_NAME.finditer(sentence):
                names.add(m.group(0).lower().rstrip("."))
                short = (m.group("short") or "").rstrip(".")
                if len(short) >= 4:
                    names.add(short.lower())
    if not names:
        return []
    # An alternation is tried name by name at each position: cap it (real cards name a few datasets)
    kept = sorted(names, key=lambda n: (-len(n), n))[:MAX_DATASET_NAMES]  # ties alphabetical: the same in every process
    found = re.compile("|".join(rf"(?<![\w.\-/]){re.escape(n)}(?![\w\-])" for n in kept), I)
    out = []
    for k in spans_with(found, doc.scanned, doc.sentences, doc.sentence_starts):
        s, e = doc.sentences[k]
        sentence = doc.text[s:e]
        if CALIBRATION.search(sentence) or SEPARATION.search(sentence) or not EVAL_WORDS.search(sentence):
            continue
        if train_split and HELD_OUT_SPLIT.search(sentence):
            continue
        m = found.search(sentence)
        if m is not None:
            out.append(Flag("eval-from-calibration", s + m.start(), sentence.strip()))
    return out


def _flags(doc: Doc) -> list[Flag]:
    flags: list[Flag] = []
    for pattern in D1:
        for m in finditer(pattern, doc.scanned):
            q = QUANTIZED_REF.search(m.group("ref"))
            if q is not None:
                flags.append(Flag("quantized-reference", m.start(), m.group(0).strip()))
    for pattern in EVAL_FROM_CALIBRATION:
        for m in finditer(pattern, doc.scanned):
            if not SEPARATION.search(_sentence(doc, m)):
                flags.append(Flag("eval-from-calibration", m.start(), m.group(0).strip()))
    flags.extend(_shared_dataset(doc))
    flags.sort(key=lambda f: f.offset)
    seen: set[tuple[str, int]] = set()
    unique = []
    for f in flags:  # one flag per kind per line of text
        key = (f.kind, doc.line_index(f.offset))
        if key not in seen:
            seen.add(key)
            unique.append(f)
    return unique
