"""D8, the vocabulary a KLD was summed over: the ways cards say it beyond evidence_patterns.D8's "full
vocabulary", "top-40 logprobs" and "16-nat floor".

- a top-k comparison by what it compares: "the top-4096 comparison", "top-40 logits", "over the top 100
  tokens", "over Q8_0's top 256", a server's "top-N" logprobs, "top-k (k = 64)", "truncated to the top 20", a scoring option ("--score-topk 100", "--kl-topk=32");
  "上位100トークン", "前100个token";
- the whole vocabulary in other words ("over the entire vocabulary", "all 151,936 tokens of the vocabulary", "all
  vocabulary logits", "full-logit KL");
- the vocabulary size stated for the comparison: "vocab size 151,936", a logits tensor's shape
  ("logits ... [2047, 154880]": positions by vocabulary);
- a per-token log-ratio estimator, which reads only the sampled token's probability: "each token's
  logprob", "log p_ref(t*) - log p_q(t*)" (read.direction.LOGRATIO), "the log-ratio of the trajectory token".

A top-k that is another metric ("top-10 tokens matching", "top-5 overlap", "top-1 agreement") is not a
vocabulary statement (:func:`veto`), nor is a vocabulary size in a list of the model's architecture ("Vocab:
248,320, max context: 262,144", "vocab_size = 50368" beside "hidden_size"), nor "no truncation" with no KL,
vocabulary, logits, top-k or softmax in its sentence ("needs no truncation" of a long input). :func:`value` gives the scheme ("top-k" with k, "full", or
"sampled-token"); samples in tests/test_lint_read_d789.py.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.claims_patterns import TRAINING_CONTEXT
from kldcard.lint.read import record_fields, vocabulary_forms
from kldcard.lint.read.direction import LOGRATIO
from kldcard.lint.read.numbers import COMMA_THOUSANDS
from kldcard.lint.read.terms import KL_WORD

I = re.IGNORECASE

COUNT = COMMA_THOUSANDS + r"|\d{4,6}"
TOP_K = re.compile(
    r"\btop[- _]?(?P<k>" + COMMA_THOUSANDS + r"|\d{1,6})\s+(?:comparison|logits?|log-?probs?|mass|distribution|entries|candidates|vocab\w*|"
    r"" + KL_WORD + r"|tokens?(?:\s+support)?|approximation|truncation|support)|\b(?P<k5>\d{1,6})\s+most\s+(?:likely|probable)\s+(?:tokens|candidates|entries)\b|\btop-?k\s*\(\s*k\s*=\s*(?P<k2>\d{1,6})\s*\)|\btruncat\w*\s+to\s+(?:the\s+)?top[- _]?(?P<k3>\d{1,6})\b|"
    r"(?:上位|前)\s*(?P<k4>\d{1,6})\s*(?:个|個|件)?\s*(?:token|トークン|词|語)|"
    # what the KL was summed over, a possessive between: "over Q8_0's top 256 plus one bucket", "over the reference's top 64"
    r"\b(?:over|across|within|restricted\s+to|limited\s+to)\s+(?:the\s+)?[\w.\-]+'s\s+top[- _]?(?P<k6>\d{1,6})\b|"
    # a server's top-N logprobs, the N not given: "approximate (server top-N)", "top-N logprobs from the server"
    r"\b(?:server|API|endpoint)(?:'s)?\s+top[- _]?[NK]\b|\btop[- _]?[NK]\s+log-?probs\s+(?:from|returned\s+by|of)\s+(?:the\s+)?(?:server|API|endpoint)\b",
    I,
)
# "top-K 256", "top_k=64", "--top-k 10" of a KL tool: the k written after the word (a sampler's "--top-k 40" is vetoed
# by its sentence: sampling words, :data:`SAMPLER`)
TOP_K_AFTER = re.compile(
    r"(?<![\w-])(?:--)?top[- _]?k(?:\s*[=:]\s*|[ \t]+)(?P<k>\d{1,6})\b(?![,.]\d)(?!\s*(?:%|accuracy|agreement|match|overlap|layers?|experts?))", I
)  # not a recipe's name ("q3floor_q4topk20") nor a count of layers
# a sampler's or an architecture's top-k (sparse attention, expert routing), not the KL's vocabulary
SAMPLER = re.compile(r"\bsampl\w*|\btemp(?:erature)?\b|\btop[- _]?p\b|\bmin[- _]?p\b|\brepeat|\bgenerat\w*\s+(?:settings|params|parameters)|"
                     r"\battention\b|\bexperts?\b|\brout(?:e|ing|er)\b|\bMoE\b|\bindex\w*", I)
# an option of a scoring tool that keeps the top k ("--score-topk 100"); a sampler's "--top-k 40" is not one
OPTION = re.compile(r"--(?=[\w-]*(?:score|kl|logit|logprob))(?=[\w-]*top-?k)[\w-]{4,40}[= ]\s*(?P<k>\d{1,6})\b", I)
VOCAB_SIZE = re.compile(
    r"\bvocab(?:ulary)?(?:[ _-]size)?\s*(?:of|=|:|is)?\s*(?P<v>" + COUNT + r")\b(?!\s*(?:tokens?\s+(?:of|from)|positions))", I
)
# a logits tensor's shape, positions by vocabulary ("[2047, 154880]", "(1, 512, 151936)"); read only near "logits" or
# "softmax"
SHAPE = re.compile(r"[\[(]\s*\d{1,7}\s*,\s*(?:\d{1,7}\s*,\s*)?(?P<v>\d{5,6})\s*[\])]")
# the whole vocabulary in other words: "over the entire vocabulary", "all 151,936 tokens of the vocabulary"
WHOLE = re.compile(
    r"\b(?:whole|entire|complete)\s+vocab(?:ulary)?\b|\ball\s+(?:" + COUNT + r")\s+tokens\s+(?:of|in)\s+the\s+vocab|"
    # "all vocab entries", "every vocabulary token", "no vocabulary truncation", "the full softmax", "vocabulary: complete"
    r"\b(?:all|every)\s+(?:the\s+)?vocab(?:ulary)?\s+(?:entries|tokens?|ids|items|logits|log-?probs|probabilities)\b|\bno\s+(?:vocab(?:ulary)?\s+)?truncation\b|"
    # the KL named by the logits it read whole, as "full-vocabulary KL" is ("Full-logit KL vs ...": q3x; general grammar)
    r"\bfull[- ]logits?\s+" + KL_WORD + r"|"
    r"\b(?:full|whole|entire|complete)\s+softmax\b|\bvocab(?:ulary)?\s*:\s*(?:full|complete|all)\b",
    I,
)
# the logits or the distribution read whole, bound to a KL term in its sentence (:func:`veto`): "34 matched full-logit
# samples (mean KL ...)" (rtx3090 forensics), "the same thing with the full distribution" under a KL header (mtp_head),
# "full-distribution metrics" (automodel pr3855); all three labelled D8 S
# (a modifier of what was scored, or what the KL was taken over; "Full logits, tokenwise KLD, ... sit in the datasets"
# lists stored files)
FULL_READ = re.compile(
    r"\bfull[- ](?:logits?|distributions?)(?=[ \t]+[A-Za-z])|\b(?:over|across|with|from|on)\s+the\s+full[- ](?:logits?|distributions?)\b", I
)
SAMPLED = re.compile(
    r"\b(?:each|every|the)\s+(?:sampled\s+|generated\s+|observed\s+|target\s+)?token'?s\s+log-?prob\w*|"
    r"\blog-?ratio\s+of\s+the\s+(?:\w+\s+)?token\b",
    I,
)

PATTERNS = [TOP_K, OPTION, VOCAB_SIZE, SHAPE, WHOLE, SAMPLED, LOGRATIO, TOP_K_AFTER, FULL_READ]
PATTERNS += vocabulary_forms.PATTERNS  # the card languages, a support after its noun, a shared vocabulary (read.vocabulary_forms)
PATTERNS += record_fields.PATTERNS[8]  # a record's field: `"vocab_size": 154880`, `top_k: 100` (read.record_fields)

# a top-k that names another metric: agreement, overlap, hits (parts of words read after the top-k, "accura", "agree":
# not the names of read.other_metrics, which say a number is another metric's)
AGREEMENT_WORDS = re.compile(r"match|overlap|agree|same|accura|\bhits?\b|recall|jaccard|identical|precision", I)
LOGITS_NEAR = 200  # characters around a tensor shape in which "logits" must stand
# "top 10 tokens" is the KL's support only where the sentence binds it to the KL ("KL over the top 100 tokens") or a
# preposition makes it what was summed over; a checker's "--- model top 10 tokens ---" heading lists predictions
KL_TERM = re.compile(r"(?<![A-Za-z_])(?:KLD?|D_?KL)(?![A-Za-z_])|KL[- ]?div|Kullback|divergen|散度|ダイバージェンス", I)
OVER = re.compile(r"\b(?:over|across|on|within|to|among|restricted\s+to|limited\s+to|in)\s+(?:the\s+)?$", I)


SERVED_TOP_N = re.compile(r"server|API|endpoint", I)
# a model's architecture listed on the vocabulary size's line: its config, not what a KL was summed over
ARCHITECTURE = re.compile(
    r"\b(?:hidden[_ ]size|num_\w+|layers?|heads?|head[_ ]dim|parameters|max(?:imum)?[_ ]?(?:context|position)|"
    r"max_position_embeddings|intermediate[_ ]size|d_model|embedding\s+dim\w*)\b",
    I,
)
ARCHITECTURE_NEAR = 80  # characters either side, on the size's line (a pasted paragraph is one line)
# what a bare "no truncation" must stand with to be the vocabulary's: a KL, a vocabulary, logits, top-k, a softmax
BOUND = re.compile(KL_TERM.pattern + r"|vocab|logit|top[- _]?k\b|softmax|語彙|词表", I)


# an equality test of whole logit rows ("each full-vocabulary logit row was identical bit for bit"): the vocabulary of a
# comparison that is no KL
IDENTICAL = re.compile(r"\bidentical\b|\bbit[- ]for[- ]bit\b|\bbit-?(?:wise|exact|identical)\b", I)


def veto(sentence: str, m: re.Match[str], text: str) -> bool:
    """Whether a match is no vocabulary statement: a top-k metric, a shape that is not the logits'."""
    if "vocab" in m.group(0).lower() and IDENTICAL.search(sentence) and not KL_TERM.search(sentence):  # a row equality check
        return True
    if re.made_by(m, record_fields.PATTERNS[8]):
        return record_fields.vetoed(text, m)
    if m.re is SHAPE.compiled:
        # the logits, or their softmax (its input is the logits row: "one fp32 log-softmax over `[200, 151936]`")
        near = text[max(0, m.start() - LOGITS_NEAR) : m.end() + LOGITS_NEAR].lower()
        return "logit" not in near and "softmax" not in near
    if m.re is VOCAB_SIZE.compiled:  # the model's size in a list of its architecture ("Vocab: 248,320, max context: ...")
        start = max(text.rfind("\n", 0, m.start()) + 1, m.start() - ARCHITECTURE_NEAR)
        end = min((text.find("\n", m.end()) + 1 or len(text) + 1) - 1, m.end() + ARCHITECTURE_NEAR)
        return bool(ARCHITECTURE.search(text, start, end))
    if re.fullmatch(r"no\s+truncation", m.group(0), I):  # "needs no truncation" of a long input is no vocabulary's
        return not BOUND.search(sentence)
    if m.re is FULL_READ.compiled:  # "bit-identical full logits are needed": no KL, no vocabulary statement
        return not KL_TERM.search(sentence)
    if m.re is vocabulary_forms.FORMULA.compiled:
        return vocabulary_forms.formula_vetoed(text, m)
    if m.re is vocabulary_forms.QUALIFIER.compiled:  # a training loss's top-k ("the loss is the KL ..., top-256 plus tail") is no measurement's
        return bool(TRAINING_CONTEXT.search(sentence))
    if m.re is LOGRATIO.compiled or m.re is SAMPLED.compiled or re.made_by(m, vocabulary_forms.PATTERNS):
        return False
    if m.re is TOP_K.compiled and SERVED_TOP_N.search(m.group(0)):  # a server's top-N: the agreement line beside it is another metric's
        return False
    if m.re is TOP_K_AFTER.compiled and SAMPLER.search(sentence):
        return True
    if any(m.group(g) == "1" for g in m.re.groupindex if m.group(g)):  # "top-1" is an agreement, never a vocabulary
        return True
    if m.re is TOP_K.compiled and re.search(r"tokens?$", m.group(0), I) and not KL_TERM.search(sentence) \
            and not OVER.search(text[max(0, m.start() - 30) : m.start()]):
        return True
    if m.re is TOP_K.compiled and m.group(0).lower().endswith("support"):  # "top-8,192 token support": what was summed over
        return False
    if m.re is TOP_K.compiled and m.group("k6"):  # "KL over the original's top-64": what the KL summed over, whatever metric stands beside
        return False
    if "top" in m.group(0).lower() or m.re is OPTION.compiled:
        near = text[max(0, m.start() - 40) : m.start()] + " " + text[m.end() : m.end() + 40]
        return bool(AGREEMENT_WORDS.search(near)) and m.re is not OPTION.compiled
    return False


def value(span: str) -> dict[str, object] | None:
    """The scheme a span found by :data:`PATTERNS` states; None when none of them reads it."""
    if (v := vocabulary_forms.value(span)) is not None:
        return v
    if (v := record_fields.read(span)) and "scheme" in v:
        return v
    for p in (TOP_K, OPTION, TOP_K_AFTER):
        m = p.search(span)
        if m is not None:
            k = next((g for g in m.groups() if g), None)
            return {"scheme": "top-k", "k": int(k.replace(",", ""))} if k else {"scheme": "top-k"}  # "top-8,192"
    if SAMPLED.search(span) or LOGRATIO.search(span):
        return {"scheme": "sampled-token"}
    if VOCAB_SIZE.search(span) or SHAPE.search(span) or WHOLE.search(span) or FULL_READ.search(span):
        return {"scheme": "full"}
    return None
