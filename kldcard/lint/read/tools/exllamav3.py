"""exllamav3's ``eval/model_diff.py`` (and exllamav2's): what it prints and what names it.

It prints both directions, " -- KL divergence (A, B):  0.01842000" and " -- KL divergence (B, A): ...",
where cards often replace A and B by the models' labels ("-- KL divergence (3.0bpw-h6, original):
0.23334818"), and a per-token line " -- KL divergence (A, B), per-token: median 0.00412345   p90
0.03456789". KL(A, B) treats B as the reference. Cards that tabulate it use the columns
"KL-div (q→o)" / "KL-div (o→q)" or "KL-div (quant, FP16)".
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from kldcard.lint.read import command_lines

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
# its options for the rows and their length ("model_diff.py -ma ... -mb ... -r 50 -l 4096"; defaults 100 and 2048,
# the stride always the length), read where they follow the script on its command (:func:`option`)
ROWS_OPTION = re.compile(r"(?<!\S)(?:-r|--rows)[ \t=]+(\d{1,6})\b")
LENGTH_OPTION = re.compile(r"(?<!\S)(?:-l|--length)[ \t=]+(\d{2,6})\b")
# its model B, the reference of the KL(A, B) it prints ("model_diff.py -ma q4 -mb /models/Foo-8B"; exllamav2's script
# takes the same option): read where its command names the script (reference.veto)
# (not a placeholder: "-mb $BASE", "-mb <path>", "-mb {base}" name no model)
REFERENCE_OPTION = re.compile(r"(?<!\S)(?:-mb|--model_b)[ \t=]+[\"']?(?P<ref>[^\s`'\"$<{-][^\s`'\"]{0,200})")
# what ends one program's arguments: a code span's end, a pipe, a chain, a sentence
_COMMAND_END = re.compile(r"[`;|&]|\.\s")


def option_of_model_diff(text: str, at: int) -> bool:
    """Whether the option at ``at`` belongs to a model_diff command: the script is named before it on its line
    (or on the lines a backslash joins to it), with no end of command between."""
    names = list(MODEL_DIFF.finditer(text, command_lines.span(text, at)[0], at))
    return bool(names) and not _COMMAND_END.search(text, names[-1].end(), at)


def option(text: str, pattern: re.Pattern[str]) -> int | None:
    """The number of the first of model_diff's options ``pattern`` that follows the script on its command."""
    return next((int(m.group(1)) for m in pattern.finditer(text) if option_of_model_diff(text, m.start())), None)
