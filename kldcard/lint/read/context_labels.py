"""D5, the context length, written as the label of a KL figure rather than as a length with its unit:

- the length a figure was taken at, bare: "At 8192, U4 has a mean KLD of 0", "the mean KL comes to 0.0377, 0.0377
  and 0.0367 at 512/2k/8k" (:data:`AT_LENGTH`);
- a length in k that heads the figure it qualifies: "(16K: 6.9e-9 vs 9.0e-9)" after "the median KL", "4k KL 0.015,
  8k KL 0.028" (:data:`K_LABEL`).

The number has no unit in these forms, so each is evidence only in a sentence that names the KL (:func:`vetoed`):
there a bare length beside the figure is the length the figure was measured at. A bare number must be a multiple of
64 (a window length, as :data:`kldcard.lint.read.context.SHORT`); a number before a unit or a noun is no length
("at 512 tokens" is :data:`kldcard.lint.read.context.AT_TOKENS`; "at 1024 experts" is not a context).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.terms import KL_MENTION

# a length: "2k", "16K" (k = 1024 tokens) or a bare "8192"; no thousands separator (a "," separates a list's items)
LENGTH = r"(?:\d{1,3}[kK]|\d{3,6})"
# a stop after the length: the figure's clause goes on ("at 512/2k/8k, and ...", "At 8192, U4 ...")
STOP_AFTER = r"(?=\s*[,;.)\]](?!\d)|\s*$)"
# "at 8192,", "at 512/2k/8k," (at most eight lengths, each bounded: linear on a long line)
AT_LENGTH = re.compile(r"(?<![\w-])(?:at|At|AT|@)\s+(" + LENGTH + r"(?:\s*/\s*" + LENGTH + r"){0,7})(?![\w/.,]\d|[\w-])" + STOP_AFTER, re.M)
# "(16K: 6.9e-9 vs ...", "4k KL 0.015": a length in k right before a figure or the KL term that heads one
# ("100k KL samples", "2k KL evaluations": a noun after the KL term makes the number a count of it, no length)
K_LABEL = re.compile(r"(?<![\w.,/-])(\d{1,3}[kK])(?:\s*:\s*(?=[<~≈]?\d)|\s+(?:mean\s+|median\s+)?(?=KLD?\b(?!\s+[a-z])))")
PATTERNS = [AT_LENGTH, K_LABEL]
# a setting named just before "at" whose value the number is, not a length ("top-k at 128,", "group size at 128,", "batch
# at 256,")
SETTING_BEFORE = re.compile(r"\b(?:top[- ]?k|group(?:[ _]size)?|batch(?:[ _]size)?|rank|block(?:[ _]size)?|bits?|experts?|heads?|"
                            r"seeds?|steps?|layers?|temperature|lr)\s*$", re.I)
KL = re.compile(KL_MENTION, re.I)
NUMBER = re.compile(r"(\d+)([kK]?)")


def lengths(m: re.Match[str]) -> list[int]:
    """The lengths ``m`` writes, in tokens (k = 1024)."""
    return [int(n) * 1024 if k else int(n) for n, k in NUMBER.findall(m.group(1))]


# the label as the evidence keeps it, the figure after it cut off ("16K:")
K_ALONE = re.compile(r"(?<![\w.,/-])(\d{1,3}[kK])(?![\w-])")


def vetoed(sentence: str, m: re.Match[str]) -> bool:
    """A bare length in a sentence that names no KL, or a bare number that is no window length (not a multiple of 64)."""
    if not KL.search(sentence):
        return True
    if m.re is AT_LENGTH.compiled and SETTING_BEFORE.search(m.string, max(0, m.start() - 24), m.start()):
        return True
    return any(n % 64 for n in lengths(m))


def read(span: str) -> dict[str, int]:
    """``n_ctx``: the longest length written (the context of the figures it labels)."""
    for p in (AT_LENGTH, K_LABEL, K_ALONE):
        m = p.search(span)
        if m is not None and (found := lengths(m)):
            return {"n_ctx": max(found)}
    return {}
