"""exllamav3's ``eval/model_diff.py`` (and exllamav2's): what it prints and what names it.

It prints both directions, " -- KL divergence (A, B):  0.01842000" and " -- KL divergence (B, A): ...",
where cards often replace A and B by the models' labels ("-- KL divergence (3.0bpw-h6, original):
0.23334818"), and a per-token line " -- KL divergence (A, B), per-token: median 0.00412345   p90
0.03456789". KL(A, B) treats B as the reference. Cards that tabulate it use the columns
"KL-div (q→o)" / "KL-div (o→q)" or "KL-div (quant, FP16)".
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

I = re.IGNORECASE | re.ASCII

PASTE_PREFIX = r"^(?:[ \t]*+(?:>|[-*+](?=\s))[ \t]*+)*+[ \t]*+"
_ARGS = r"\(\s*[^(),\n]{1,40}?\s*,\s*[^(),\n]{1,40}?\s*\)"
# the mean line of one direction; the arguments are "A, B" or the card's own labels
STAT = re.compile(PASTE_PREFIX + r"--\s*KL[- ]?div(?:ergence)?\s*" + _ARGS + r"\s*:\s*(-?\d+\.\d+)", I)
# the robust per-token line: its median and p90
PER_TOKEN = re.compile(
    PASTE_PREFIX + r"--\s*KL[- ]?div(?:ergence)?\s*" + _ARGS + r",\s*per-token:\s*median\s+(?P<median>-?\d+\.\d+)\s+p90\s+(?P<p90>-?\d+\.\d+)",
    I,
)

# naming the tool
MODEL_DIFF = re.compile(r"\bmodel_diff(?:\.py)?\b", I)
EXLLAMA_V2 = re.compile(r"\bexllamav2\b|\bEXL2\b", I)
EXLLAMA_V3 = re.compile(r"\bexllamav3\b|\bEXL3\b", I)
# ("q→o" / "o→q", also spelt out: "quant→orig", "orig -> quant")
LABELS = re.compile(
    r"KL-div\s*\((?:q(?:uant\w*)?\s*(?:→|->)\s*o(?:rig\w*)?|o(?:rig\w*)?\s*(?:→|->)\s*q(?:uant\w*)?|quant,\s*FP16|FP16,\s*quant)\)", I
)
# the printed line itself names it: no other tool prints "-- KL divergence (x, y):"
PRINTED = re.compile(r"--\s*KL[- ]?div(?:ergence)?\s*" + _ARGS + r"(?:\s*:|,\s*per-token)", I)
