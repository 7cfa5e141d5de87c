"""D3: a text described in the paragraph right over a KL table (for :func:`kldcard.lint.read.eval_text.vetoed`).

A described text is read only in a sentence that speaks of the measurement, or on a line ending with a colon over a
KL block (:func:`kldcard.lint.read.eval_text.introduces_kl`). Cards also set up a table in a paragraph of plain
sentences right above it, none of which names the measuring: "A prompt cap raised by hand let the original 664-token
prompt through. Generation stopped at 32 tokens; ..." over "| Policy | Packed MiB | ... | Mean KL vs FP16 |". The
paragraph that ends right where a table headed by a KL term starts is that table's setup.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.claims_patterns import KLD_TERM

# the words of a speed run, in the paragraph and in the table's header
SPEED = re.compile(r"\b(?:prefill|decode|t/s|tok/s|tokens?/s|pp\d+|tg\d+|throughput|latency|speed)\b", re.IGNORECASE)
# a paragraph is read up to this many characters after the match (a long one is not one table's setup)
REACH = 600


def over_kl_table(text: str, m: re.Match[str]) -> bool:
    """Whether the match's paragraph ends right over a Markdown table whose header row names a KL term."""
    end = text.find("\n\n", m.end(), m.end() + REACH)
    if end < 0:
        return False
    nxt = end + 2
    while text.startswith("\n", nxt):
        nxt += 1
    line_end = text.find("\n", nxt)
    header = text[nxt : len(text) if line_end < 0 else line_end]
    # (a table that also times the run, "| Quant | pp512 t/s | Mean KLD |", set up by a sentence on prefill or decode:
    # the prompt is the speed run's)
    if SPEED.search(text, max(0, m.start() - 200), end) and SPEED.search(header):
        return False
    return header.lstrip().startswith("|") and bool(KLD_TERM.search(header))
