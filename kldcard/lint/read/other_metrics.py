"""The metrics that are not the KL, by name and spelling: one table that every reader of "this number is another
metric's" builds its pattern from (read.claim_numbers.METRIC_AFTER and OTHER_LABEL, claims_patterns.OTHER_METRIC).

Each entry is a name and its spellings, as regular-expression text read case-insensitively; each reader sets the
boundaries around the alternation and picks the groups it reads (see :func:`spellings`). The groups differ in where
a card writes the name: a score's name may follow its value ("6.21 PPL", "0.81 accuracy"), a size, a speed or a
setting's name stands before it ("size 15.3", "lr 1e-5"; after a value a unit says it, claim_numbers.UNIT_AFTER).

Not here: the words that make a top-k a metric of agreement rather than the KL's support ("top-10 overlap",
read.vocabulary.AGREEMENT_WORDS): those are read after a top-k, as parts of words ("accura", "agree").
"""

from __future__ import annotations

# scores measured on the model's output, printed beside a KL; English spellings
SCORES: dict[str, tuple[str, ...]] = {
    "perplexity": ("PPL", "perplexit(?:y|ies)"),
    "accuracy": ("accuracy",),
    # accuracy's short name: after a value, or before a value of its own ("kld 0.0123 acc 0.812"); between a KL term and
    # the KL's value it names an accumulator's format as often ("top-20 logprob KL vs fp32-acc 0.0015 nats", holdout9/d)
    "acc": ("acc",),
    "agreement": ("agreement",),
    "F1": ("F1",),
    "exact match": ("exact[- ]match",),
    "BLEU": ("BLEU",),
    "ROUGE": (r"ROUGE(?:-\w+)?",),
    "pass@k": (r"pass@\d+",),
    "win rate": ("win[- ]rate",),
    "precision": ("precision",),
}
# the scores read in a name before a value: not "precision", which there names the numeric format more often than
# the score ("KLD at bf16 precision: 0.0012"); after a value it is the score ("0.81 precision", claim_numbers)
NAMED_BEFORE = tuple(name for name in SCORES if name != "precision")
# and those read in the words between a KL term and its value (claims_patterns.OTHER_METRIC): not "acc" (above)
NAMED_BETWEEN = tuple(name for name in NAMED_BEFORE if name != "acc")
# the same scores in the other card languages ("0,81 de precisión", "0.81准确率", "KL 散度 0.012 困惑度 6.21")
SCORES_ELSEWHERE: dict[str, tuple[str, ...]] = {
    "perplexity": ("perplejidad", "perplexit[ée]", "困惑度"),
    "accuracy": ("exactitud", "Genauigkeit", "acur[áa]cia", "准确率", "正確率", "精度"),
    "precision": ("precisi[óo]n", "pr[ée]cision"),
}
# what a top-k, same-top or Δp check reports: the agreement of the two models' next tokens. A top-k of three or more
# digits is the vocabulary a KL was taken over ("KL vs FP16 KV at 4096 ctx / top-2000: 0.0179"), not an agreement
# metric (top-1, top-5, top-10), unless a metric word follows it ("top-256 logit cosine 0.854").
TOKEN_AGREEMENT: dict[str, tuple[str, ...]] = {
    "top-k": (r"top[- ]?\d{1,2}(?!\d)", r"top[- ]?\d+\s+(?:logit\s+)?(?:cosine|agreement|accuracy|overlap|match)",
              "top[- ]?k"),
    "same-top": ("same[- ]top",),
    "Δp": ("Δp", "delta[- ]p"),
}
# the run's own figures, by name: its size, memory and speed ("size 15.3 GB", "VRAM 24", "speed 30.5")
RUN_FIGURES: dict[str, tuple[str, ...]] = {"size": ("size",), "memory": ("VRAM",), "speed": ("speed",)}
# and by unit, written after their own value ("15.3 GB", "4.05bpw", "30.5 t/s", "12 minutes"): in the words before
# another number a unit ends the number before it ("4.05bpw branch on a sealed panel: 0.0255", holdout9/a), so the
# label read before a value (claim_numbers.OTHER_LABEL) takes the names only
RUN_UNITS: dict[str, tuple[str, ...]] = {
    "size": ("GB", "GiB", "bpw", "bits"),
    "speed": ("t/s",),
    "time": ("minutes?", "seconds?", "hours?"),
}
# a sampler's or a trainer's settings
SETTINGS: dict[str, tuple[str, ...]] = {
    "temperature": ("temp(?:erature)?",),
    "min-p": ("min-p",),
    "beta": ("beta", "β"),
    "learning rate": ("lr", "learning rate"),
}
# a score named only by that word, or a recovery figure ("score 0.81", "recovery 99.2%")
GENERIC: dict[str, tuple[str, ...]] = {"score": ("score",), "recovery": ("recovery",)}


def spellings(*groups: dict[str, tuple[str, ...]], only: tuple[str, ...] = (), ascii: bool | None = None) -> str:
    """The spellings of ``groups`` (of ``only`` those names where given; with ``ascii``, only the spellings that are,
    or are not, ASCII: a pattern with ASCII word boundaries sets the others outside them) as one alternation of
    regular-expression text, without a group around it."""
    return "|".join(s for group in groups for name, ss in group.items() if not only or name in only for s in ss
                    if ascii is None or s.isascii() == ascii)
