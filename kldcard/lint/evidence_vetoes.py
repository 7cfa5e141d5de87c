"""The sentence vetoes of the disclosure evidence (kldcard.lint.evidence): what a match's sentence says that makes
it no statement of the measurement's protocol. A quantizer or a deployment is not the runtime that produced the
logits, a calibration corpus is not the evaluation text, a conditional or a rule of thumb describes no run, a
calibration withheld is not named. Split out of evidence.py (over STYLE's ~400 lines) as the one part that reads
only a sentence and its match; evidence.py applies them per disclosure."""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.claims import KLD_TERM
from kldcard.lint.markdown import Doc
from kldcard.lint.read import eval_text, eval_text_benchmarks, eval_text_cells, eval_text_uses
from kldcard.lint.read.sentence_terms import has
from kldcard.lint.read.terms import CONJUNCTIONS, KL_MENTION, KL_WORD

# ASCII: as evidence.py (every keyword here is ASCII; Unicode case folding is ~3x slower)
I = re.IGNORECASE | re.ASCII

CALIBRATION = re.compile(r"imatrix|importance matrix|calibrat|校准", I)
EVAL_WORDS = re.compile(r"\b" + KL_WORD + r"|\beval|measur|\bscor|\btest|perplexity", I)
QUANTIZER = re.compile(
    r"quantiz\w*\s+(?:was\s+|were\s+)?(?:performed\s+|done\s+)?(?:using|with)\b|for quantization|\bmade (?:with|using)\b|"
    r"made these quants|quants? (?:were\s+)?(?:made|created|produced)|converted (?:to|with|using|from)\b|\bt/s\b|"
    r"tok(?:ens)?/s|\bspeed|\bruns on\b|\b(?:can|could|will|to) run on\b|\bfits? (?:on|in)\b|\bdeploy\w*|\bspeciali[sz]ed for\b|at about \d|\bquants? of \S+ (?:using|made with|created with)\b|\bconver(?:sion|ter)\b",
    I,
)
# a sentence about memory, speed or serving: a context length in it is the deployment's, not the measurement's
SERVING = re.compile(r"\b\d+(?:\.\d+)?\s*(?:GB|GiB)\b|\bVRAM\b|\bKV cache room|t/s\b|tok(?:ens)?/s|\bthroughput|\bspeed|\bserv(?:e|es|ing)\b", I)
# narrower, for hardware (a card gives its GPU's memory with it: "RTX 4090 24GB"): where it is deployed
DEPLOYMENT = re.compile(r"\bserv(?:e|es|ing)\b|\bthroughput|\bfits?\b|\bdeploy|\b(?:can|could|able to) run\b", I)
KL_MENTIONED = re.compile(KL_MENTION, re.IGNORECASE)


def deployed(sentence: str, m: re.Match[str]) -> bool:
    """Hardware named where the model is deployed: a deployment word in its sentence, unless a KL term stands between
    that word and the hardware ("the first serving + KLD evidence ... on 4x RTX PRO 6000": the KLD ran there too), the
    rule read.runtime_targets applies to words of aim."""
    at = sentence.find(m.group(0))
    words = list(DEPLOYMENT.finditer(sentence))
    if not words:
        return False
    if at < 0 or any(w.start() >= at for w in words):
        return True
    return not KL_MENTIONED.search(sentence, words[-1].end(), at)
# A conditional or a rule of thumb describes no measurement ("If a quant's imatrix contains Wikipedia
# ...", "perplexity, typically on Wiki-test with 512-token context windows").
HYPOTHETICAL = re.compile(r"^[\s>*+\-]*(?:if|when|suppose)\b|\b(?:typically|usually|generally|in general|might|could)\b", I)
# a calibration withheld is not named: "not disclosed" (orcasaq2), "has not been released" (quant-damage report)
NEGATED = re.compile(r"\b(?:did not|didn't|do not know|unknown|not (?:been\s+)?(?:check|disclosed|known|released|published)|"
                     r"un(?:disclosed|released|published)\b|different calibration)", I)


CALIBRATION_SOURCE = re.compile(r"(?:imatrix|calibration|calibrated)\s+(?:\w+\s+){0,3}?(?:from|on|with|using|:)\s*[`'\"(\[]*$", I)


OTHER_MEASUREMENT = re.compile(r"(?<![\w/.\-])benchmarks?\b(?![/.\-]\w)|\brefusals?\b", I)  # not a path's folder


# a text said to be kept apart from calibration is the evaluated one: the sentence describes the measurement's text, not
# the calibration ("8 held-out sequences kept out of calibration (7,672 positions)", h15/a glm53; "not used for
# calibration", prose eaddario and h3 peasantsmith; "disjoint from the calibration slice", h5/b)
# ... and in the card languages: "fuera del conjunto de calibracion de la imatrix" (h9/c es_ficha_hiwaifu), "ajena a la
# calibracion" (h15/c es_ficha_scorpoon), "un conjunto separado de la calibración" (h17/e es_ficha_frank8465), "fora da
# calibração" (accents as cards write them, or left out)
CALIBRATION_EXCLUDED = re.compile(r"\b(?:(?:kept|held|left)\s+out\s+of|exclud(?:ed|ing)\s+from|disjoint\s+from|separate\s+from|"
                                  r"not\s+used\s+(?:for|in|during))\s+(?:the\s+|any\s+)?(?:[\w-]+\s+)?calibrat|"
                                  r"\b(?:fuera|fora|separad[oa]s?|ajen[oa]s?|disjunt[oa]s?|exclu[i\u00ed]d[oa]s?)\s+(?:de|del|da|do|a|al)\s+"
                                  r"(?:(?:la|el|los|las|o|a)\s+)?(?:[\w-]+\s+){0,2}?calibra", re.IGNORECASE)


def calibration_only(sentence: str) -> bool:
    """A sentence about calibration alone. A clause that keeps a text apart from calibration speaks of the evaluated
    text, so the sentence is not calibration-only when every clause naming calibration is such an exclusion ("8
    held-out sequences kept out of calibration (7,672 positions)"); a sentence that also describes the calibration run
    in another clause ("the imatrix calibration covered 5,120 positions, and the chat set was kept out of calibration")
    stays calibration-only."""
    if not has(CALIBRATION, sentence) or has(EVAL_WORDS, sentence):
        return False
    clauses = [c for c in CLAUSE_BREAK.split(sentence) if CALIBRATION.search(c)]
    return not all(CALIBRATION_EXCLUDED.search(c) for c in clauses)


# clauses of one sentence: a comma or semicolon before a conjunction that opens a clause of its own (read.terms), a
# semicolon alone, or a spaced dash. A splitter: it consumes only the break (not claim_terms.CLAUSE_INSIDE, which reads
# the next clause's first letter)
CLAUSE_BREAK = re.compile(r"[,;]\s*(?:" + "|".join(CONJUNCTIONS["own clause"]) + r")\b|;|\s[\u2013\u2014]\s", re.IGNORECASE)


def not_eval_text(doc: Doc, sentence: str, m: re.Match[str]) -> bool:
    """Veto for D3: the sentence is only about calibration, or the match is the calibration source."""
    return (
        calibration_only(sentence)
        or has(HYPOTHETICAL, sentence)
        # a table row: the match's own cell or the row's label speaks of a text (not a benchmark's score column)
        or (sentence.lstrip().startswith("|") and not eval_text_cells.in_text_cell(doc.text, m))
        or (bool(CALIBRATION_SOURCE.search(doc.text[max(0, m.start() - 60) : m.start()]))
            and not eval_text.MEASURED_ON.search(doc.text[max(0, m.start() - 60) : m.start()]))  # "Measured on the calibration corpus: ..."
        # the text of another measurement (benchmark scores, refusals) in a sentence without KL (a perplexity
        # sentence is kept: llama-perplexity scores KLD on the text of its perplexity run)
        or (has(OTHER_MEASUREMENT, sentence) and not has(KLD_TERM, sentence) and not has(eval_text.FIDELITY, sentence))
        or eval_text_benchmarks.benchmark_only(sentence, m)
        or eval_text_uses.other_text(doc.text, m)  # a perplexity's or a benchmark's text, a cited page
    )
