"""Counts and settings written as a record's fields (issue 28, D5 / D6 / D8): a key and its value in JSON, YAML,
TOML, ``key=value`` arguments and a tool's ``Label: value`` printout, whatever the quoting.

The prose patterns read "n_ctx = 4096" or "vocab size 151,936"; a JSON report writes the same setting with its key
in quotes (``"n_ctx": 4096``, ``"vocab_size": 154880``, ``"prediction_positions": 2047``) and a YAML or Python
config without them (``seq_len: 2048``, ``num_samples=64``). One grammar for the record (:data:`FIELD`: an optional
quote, the key, an optional quote, ``:`` / ``=`` / ``=>``, an optional quote, the value) and one list of key words
per disclosure, so the fields read the same in every record syntax:

- D5, the window length: ``n_ctx``, ``ctx_len``, ``context_length``, ``seq_len``, ``max_length``, ``window_size``,
  ``chunk_size`` (not a KV cache's or a quantizer's ``block_size``; not a model's trained or served length: ``n_ctx_train``, ``max_model_len``);
- D6, what was scored: a count of positions or tokens (``prediction_positions``, ``total_kld_tokens``,
  ``n_tokens``, ``scored_tokens``, ``total_tokens``) or of windows (``chunks``, ``n_chunks``, ``num_samples``,
  ``num_windows``), or a scheme (``positions: all``); not a generation budget or a usage counter
  (``max_new_tokens``, ``prompt_tokens``, ``completion_tokens``) nor a perplexity's own count (``ppl_tokens``);
- D8, the vocabulary: ``vocab_size`` / ``n_vocab`` with a size, ``vocab: full``, a KL's or a server's top-k
  (``top_k: 100``, ``kl_topk=32``, ``top_logprobs: 20``, ``logprobs=20``).

A field is evidence only in a record that names a KL term (:func:`vetoed`): the KL within :data:`RECORD_REACH`
characters, no blank line between (a model's ``config.json`` with ``vocab_size`` beside ``hidden_size`` is its
architecture; a sampler's ``top_k`` stands beside ``temperature``). Samples in tests/test_lint_record_fields.py.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from typing import Any

from kldcard.lint.read.numbers import COMMA_THOUSANDS, parse_int
from kldcard.lint.read.terms import KL_MENTION

I = re.IGNORECASE

SEP = r"[_\-. ]?"


def _key(*words: str) -> str:
    """A key made of ``words`` in order, joined as records join them (``n_ctx``, ``n-ctx``, ``nCtx``, ``n ctx``)."""
    return SEP.join(words)


# the record's grammar around a key: an optional quote, the key, an optional quote, the separator, an optional quote
OPEN = r"(?<![\w\-.])[\"'`]?"
# (and a full-width colon: "seq len：96", "预测：16 token")
CLOSE = r"[\"'`]?\s*(?:=>|[:=：])\s*[\"'`]?"
# a window length may also stand in a parameter table's next cell ("| `seq_len` | `256` |"); a vocabulary there is a
# model card's architecture table ("| Vocab | 248,320 |"), not the KL's
CELL_CLOSE = r"[\"'`]?\s*(?:=>|[:=：]|\|(?=[ \t]*[\"'`]?\d))\s*[\"'`]?"
# an integer count ("4096", "2,048", "2.1M", "250k"), not a decimal ("0.05" is a statistic's value)
NUMBER = r"(?P<n>" + COMMA_THOUSANDS + r"|\d+(?:\.\d+)?\s*[kKM]|\d+)(?![\w.,]\d|[\w-])"

CONTEXT_KEYS = "|".join([
    r"(?<=_)ctx",  # "EVAL_CTX", "kl_ctx": the bare "ctx" only as a key's last part (after KEY_PREFIX)
    _key("n", "ctx"), _key("ctx", r"(?:len|length|size)"), _key("context", r"(?:len|length|size|window)"),
    _key("seq", r"(?:len|length)"), "seqlen", _key("sequence", r"(?:len|length)"), "max" + SEP + r"(?:seq" + SEP + r")?(?:len|length)",
    _key("window", r"(?:len|length|size)"), _key("chunk", r"(?:len|length|size)"),
])
POSITION_KEYS = "|".join([
    # a count of positions or tokens, the key's last word "positions"/"tokens" (a usage counter or budget is vetoed)
    r"(?:[a-z0-9]+" + SEP + r"){0,3}(?:positions|tokens)(?:" + SEP + r"(?:per" + SEP + r"run|scored|evaluated))?",
    _key(r"(?:n|num|number" + SEP + "of)", r"(?:tokens|positions)"), _key("token", "count"),
    # a count of windows
    r"(?:(?:n|num|number" + SEP + r"of|total)" + SEP + r")?(?:chunks|windows|samples|sequences)",
])
# key words that make a token count something other than the scored positions
# (and a generation's budget: "max_new_tokens=4096", "max_tokens", "token_limit")
NOT_SCORED = re.compile(r"prompt|completion|special|added|vocab|train|ppl|perplex|per.?s(?:ec|econd)?\b"
                        r"|(?:^|[_\-. ])(?:max|new|budget|limit)(?:$|[_\-. ])", I)
SCHEME_VALUE = r"(?P<scheme>all|every|last|first|full)\b"
VOCAB_KEYS = "|".join([_key(r"(?:n|num)", "vocab"), _key(r"vocab(?:ulary)?", "size"), r"vocab(?:ulary)?"])
TOP_K_KEYS = "|".join([
    _key(r"(?:kl|kld|score|logit|logprob)", "top", "k"), _key(r"(?:kl|kld|score|logit|logprob)", "topk"), _key("top", "k"), "topk",
    _key("top", "logprobs"), _key(r"(?:n|num)", "logprobs"), "logprobs",
])

# a key's prefix words ("eval_", "score_"), not another run's: the draft model's, the server's, the speed run's,
# training's, generation's ("draft_ctx", "serve_n_ctx", "bench_ctx", "train_seq_len")
KEY_PREFIX = r"(?:(?!(?:draft|serve|server|bench|train|gen)_)[a-z]{2,8}_){0,2}"
CONTEXT = re.compile(OPEN + r"(?P<key>" + KEY_PREFIX + r"(?:" + CONTEXT_KEYS + r"))" + CELL_CLOSE + NUMBER, I)
POSITIONS = re.compile(OPEN + r"(?P<key>" + POSITION_KEYS + r")" + CLOSE + r"(?:" + NUMBER + r"|" + SCHEME_VALUE + r")", I)
VOCABULARY = re.compile(
    OPEN + r"(?P<key>" + VOCAB_KEYS + r")" + CLOSE + r"(?:" + NUMBER + r"|(?P<whole>full|all|complete|entire)\b)"
    r"|" + OPEN + r"(?P<topkey>" + TOP_K_KEYS + r")" + CLOSE + r"(?P<k>\d{1,6})(?![\w.,]\d|[\w-])",
    I,
)
PATTERNS = {5: [CONTEXT], 6: [POSITIONS], 8: [VOCABULARY]}

RECORD_REACH = 400  # characters either side in which the record names its KL
KL = re.compile(KL_MENTION, I)
BLANK = re.compile(r"\n[ \t]*\n")
# a model's architecture or a sampler's settings in the same record: the record is a config, not the KL's
CONFIG = re.compile(r"hidden[_ ]size|num[_ ](?:hidden[_ ])?layers|intermediate[_ ]size|num[_ ]attention[_ ]heads|"
                    r"\btemperature\b|\btop[_ -]?p\b|\bmin[_ -]?p\b|repeat[_ ]penalty|max[_ ]position[_ ]embeddings", I)


def _record(text: str, m: re.Match[str]) -> str:
    """The text around ``m`` up to :data:`RECORD_REACH` characters either side, cut at blank lines."""
    lo, hi = max(0, m.start() - RECORD_REACH), min(len(text), m.end() + RECORD_REACH)
    before = [b.end() for b in BLANK.finditer(text, lo, m.start())]
    after = BLANK.search(text, m.end(), hi)
    return text[before[-1] if before else lo : after.start() if after else hi]


def vetoed(text: str, m: re.Match[str]) -> bool:
    """A field in a record that names no KL term, one in a model's or a sampler's config, a count that is not of
    scored positions (a generation budget, a usage counter, a perplexity's own), a window length under 64 tokens."""
    record = _record(text, m)
    if not KL.search(record) and not (m.re is CONTEXT.compiled and settings_line(text, m)):
        return True
    key = (m.group("key") or m.groupdict().get("topkey") or "").lower()
    if m.re is POSITIONS.compiled and m.group("n") and NOT_SCORED.search(key):
        return True
    if m.re is CONTEXT.compiled and (re.search(r"train|model|embed", key) or (parse_int(m.group("n")) or 0) < 64):
        return True
    if m.re is VOCABULARY.compiled and m.group("n") and (parse_int(m.group("n")) or 0) < 1000:
        return True  # a vocabulary has thousands of entries ("vocab: 3" is something else)
    line_start = text.rfind("\n", 0, m.start()) + 1
    near = text[max(line_start, m.start() - 120) : m.end() + 120]
    return m.re is not POSITIONS.compiled and bool(CONFIG.search(near))


# a field that is a line of its own in a settings list, table or script: the line opens on the key (after a bullet, a
# table's pipe, indentation) and the value closes it or its cell ("- seq len：96", "| `seq_len` | `256` | ... |",
# "EVAL_CTX = 4096"); not a JSON or config entry (a comma after it: a model's `"seq_length": 4096,`)
LINE_OPEN = re.compile(r"[ \t>*+|\-]*$")
LINE_CLOSE = re.compile(r"[\"'`]?[ \t]*(?:\||#|$)", re.M)


def settings_line(text: str, m: re.Match[str]) -> bool:
    """``m`` is a settings block's line of its own: the run's setup, whose KL the document reports further on."""
    line_start = text.rfind("\n", 0, m.start()) + 1
    return bool(LINE_OPEN.match(text, line_start, m.start())) and bool(LINE_CLOSE.match(text, m.end()))


WINDOW_KEY = re.compile(r"chunks|windows|samples|sequences", I)


def read(span: str) -> dict[str, Any]:
    """The value of a field in ``span``: ``n_ctx`` (D5), ``count`` or ``scheme`` (D6; a window count gives none),
    ``scheme`` with ``k`` (D8); {} when no field of :data:`PATTERNS` is in it."""
    if (m := CONTEXT.search(span)) is not None:
        return {"n_ctx": parse_int(m.group("n"))}
    if (m := POSITIONS.search(span)) is not None:
        if m.group("scheme"):
            return {"scheme": "all" if m.group("scheme").lower() in ("all", "every", "full") else m.group("scheme").lower() + "-token"}
        return {} if WINDOW_KEY.search(m.group("key")) else {"count": parse_int(m.group("n"))}
    if (m := VOCABULARY.search(span)) is not None:
        if m.group("k"):
            return {"scheme": "top-k", "k": int(m.group("k"))}
        return {"scheme": "full"}
    return {}


# a line that is one field of a record or a tool's printout ("Evaluated positions: 372,675", "seq_len = 2048"): the
# line is its own statement, whatever prose follows without a full stop (a sentence splitter joins the lines of a
# printout to the next paragraph's sentence, "... could become possible!", and a hedge there is not the field's)
# (a key of at most four words, one value: "targets at k=1024, sequence length 1024." is a sentence's clause)
FIELD_LINE = re.compile(r"[ \t>*+\-]*(?:[\w\"'`()./\-]+[ \t]){0,3}[\w\"'`()./\-]+[ \t]*(?:=>|[:=])[ \t]*(?:(?!,\s)[^\n]){1,80}")


def statement(text: str, sentence: str, m: re.Match[str]) -> str:
    """``sentence``, or the match's line alone when that line is a record's field holding the match."""
    lo = text.rfind("\n", 0, m.start()) + 1
    hi = text.find("\n", m.end())
    line = text[lo : len(text) if hi < 0 else hi]
    return line if "\n" not in m.group(0) and FIELD_LINE.fullmatch(line) else sentence
