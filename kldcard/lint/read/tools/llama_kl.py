"""``llama_kl.py`` (Ttl's gist, gist.github.com/Ttl/0d51f739dc59254b4b2183e259c97d82; read through a
commented copy that names it, code index id 28020762658): the llama-cpp-python script that measured KLD
before llama-perplexity could. It prints

- a running line per window, "[12] kl 0.4387, top1 0.73" (the mean over the windows so far);
- a summary under "KL-divergence:": "mean: 0.438655, [0.415236 - 0.462073]", then "q90: 1.052,
  [0.9993 - 1.104]", "q95: ...", "q99: ..." with their intervals, and "max: 9.058".

The bare "max: 9.058" line is too plain to be read alone; the other lines carry the script's own shape.

Documented defaults (the copy's ``kl_div``, ``main`` and argument parser): each token's KL is
``sum(rel_entr(softmax(eval), softmax(ref)))``, i.e. KL(P_candidate ‖ P_reference) (reverse KL, in nats),
over the full vocabulary; the text is cut into non-overlapping windows of ``-c 512`` tokens (511 of
text after a BOS) and every position of every window is scored; the mean comes with a 99% Bayesian
interval (``bayes_mvs``, alpha 0.01) and the 90/95/99% quantiles with Maritz-Jarrett intervals. The
text is whatever ``-t`` names (no default).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.tools.grammar import NUMBER, PASTE_PREFIX, Grammar

I = re.IGNORECASE | re.ASCII

_NUM = r"-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?"
PROGRESS = re.compile(PASTE_PREFIX + r"\[\d+\]\s+kl\s+" + NUMBER + r",\s+top1\s+" + _NUM + r"\s*$", I)
SUMMARY = re.compile(
    PASTE_PREFIX + r"(?:mean|q\d{2}):\s+" + NUMBER + r",\s+\[" + _NUM + r"\s+-\s+" + _NUM + r"\]\s*$", I
)

GRAMMAR = Grammar(
    name="llama_kl.py",
    lines=(PROGRESS, SUMMARY),
    names=re.compile(r"\bllama_kl\.py\b", I),
    printed=re.compile(r"Computing KL-divergence against:|^[ \t>]*\[\d+\]\s+kl\s+\d+\.\d+,\s+top1\b", I | re.MULTILINE),
    defaults={
        5: "-c 512: non-overlapping 512-token windows (511 tokens of text after a BOS) (default)",
        6: "every position of every window",
        7: "reverse KL(P_candidate ‖ P_reference), fixed (rel_entr(eval, ref))",
        8: "full vocabulary (float32 logits)",
        9: "token mean with a 99% Bayesian interval; q90/q95/q99 with Maritz-Jarrett intervals; max",
    },
    values={
        5: {"n_ctx": 512, "stride": 511},
        6: {"scheme": "all"},
        7: {"direction": "reverse", "unit": "nats"},
        8: {"scheme": "full"},
        9: {"statistic": "mean", "uncertainty": "99% Bayesian interval (scipy bayes_mvs)"},
    },
)
