"""exllamav3's ``eval/qbench.py``: the quantization benchmark that streams every model of a YAML project
through the same test rows and compares each with the reference's cached logits. What it prints
(``print_stats`` in ``eval/qbench/measure.py``, turboderp-org/exllamav3 at 4f8ad01, 2026-08):

- one line per model, its label padded to 24 columns: " -- 4.0bpw   ppl    9.4518   kld 0.021380   median
  0.006122   p90 0.048300" (the reference's own line has the ppl only; a model that NaNs prints
  "INVALID"; excluded non-finite tokens add "!! 0.3% non-finite tokens excluded");
- under it, the reference-confidence buckets: "      ref conf [0.95, 1.01):  41.0% of tokens   mean
  0.001234   median 0.000101".

"Noise floor" is the reference rerun with bf16-rounding noise, the floor any kernel change shows.
Its defaults (the script's docstring: "KLD is reported as mean/median/p90 over tokens"; ``DiffStats`` in
measure.py; ``compute_kl_div`` in exllamav3/util/measures.py, "KL(softmax(target) || softmax(input))" with the
cached reference as target): forward KL(P_ref ‖ P_model) in nats, over the full vocabulary cut to the smallest
of the models' vocabularies, the ``kld`` column the mean over every scored token. The text, windows and scored
ranges come from the project file, so they are never inferred. These are documented in the source, not a user
manual, so the reading names the tool and keeps them as documentation (``infer`` off, as for MaxText). No
published qbench output was found in the stores (probes listed in named.py); the test sample follows the
print format.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.tools.grammar import NUMBER, PASTE_PREFIX, Grammar

I = re.IGNORECASE | re.ASCII

# " -- <label>   ppl <x>   kld <mean>   median <y>   p90 <z>": the number read is the mean ("kld")
MODEL_LINE = re.compile(
    PASTE_PREFIX + r"--[ \t]+\S[^\n]{0,80}?[ \t]ppl[ \t]+\d+\.\d+[ \t]+kld[ \t]+" + NUMBER
    + r"[ \t]+median[ \t]+\d+\.\d+[ \t]+p90[ \t]+\d+\.\d+",
    I,
)
# the shape only qbench prints: ppl, kld, median and p90 on one line, and its confidence buckets
PRINTED = re.compile(
    r"\bppl[ \t]+\d+\.\d+[ \t]+kld[ \t]+\d+\.\d+[ \t]+median[ \t]+\d+\.\d+[ \t]+p90[ \t]+\d+\.\d+"
    r"|^[ \t>]*ref conf \[\d\.\d\d, \d\.\d\d\):[ \t]+\d+\.\d% of tokens",
    I | re.MULTILINE,
)
# the lines between its model lines that carry no model's KLD: the buckets, the reference's ppl-only line,
# an INVALID model
BETWEEN = re.compile(
    PASTE_PREFIX + r"(?:ref conf \[|--[ \t]+\S[^\n]{0,80}?[ \t](?:ppl[ \t]+\d+\.\d+[ \t]*$|INVALID\b))", I | re.MULTILINE
)

GRAMMAR = Grammar(
    name="exllamav3 qbench",
    lines=(MODEL_LINE,),
    names=re.compile(r"\beval/qbench(?:\.py)?\b|\bqbench\.py\b", I),
    printed=PRINTED,
    between=BETWEEN,
    defaults={
        7: "forward KL(P_ref ‖ P_model), fixed (the cached reference logits are the target)",
        8: "full vocabulary, cut to the smallest of the models' vocabularies",
        9: "mean over every scored token (the kld column); median and p90 beside it",
    },
    values={
        7: {"direction": "forward", "unit": "nats"},
        8: {"scheme": "full"},
        9: {"statistic": "mean"},
    },
)
