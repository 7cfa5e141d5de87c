"""The demo's evaluation text, which is also the corpus the predictive tiny model learns its bigram
statistics from (:mod:`kldcard.demo.predictive`).

Original prose written for kldcard (no third-party corpus is bundled, and the text must exist on
every machine the demo runs on, macOS included, so no system file is read). Eight numbered
paragraphs, about 330 Qwen3 tokens: long enough for every confidence bucket to fill, short enough
for a full-vocabulary capture of a 151,936-token model to stay a few hundred MB.
"""

from __future__ import annotations

DEMO_PARAGRAPHS = (
    "Quantization stores the weights of a language model with fewer bits. The model becomes smaller "
    "and faster, but its next-token predictions drift away from those of the original checkpoint.",
    "The Kullback-Leibler divergence measures that drift one position at a time: for every token of "
    "a text, it compares the full probability distribution of the reference with the candidate's.",
    "A number on a model card means little unless the card says which reference was used, on which "
    "engine and device, over which text, at which positions, in which direction and how it was averaged.",
    "Lower divergence means the candidate predicts more like the reference. It does not mean the "
    "candidate is smarter, and numbers measured on another stack or another text are not comparable.",
    "A block bootstrap resamples whole stretches of consecutive tokens, because neighbouring positions "
    "share their context and tend to diverge together. Counting them as independent would make the "
    "interval look narrower than the evidence allows.",
    "Bits per weight tell how much room each parameter takes on disk and in memory. A smaller file is "
    "worth choosing when its divergence stays close to that of the larger files, which is why the card "
    "plots one against the other.",
    "The reference runs once with the original weights. Every candidate then runs on the same tokens, "
    "and its logits are compared with the stored reference as they leave the engine, so no second copy "
    "of the vocabulary has to be kept.",
    "When two candidates cannot be told apart on this text, the card says so instead of ranking them. "
    "A longer evaluation text, or positions drawn from more varied documents, is the way to separate them.",
)
DEMO_TEXT = "\n\n".join(f"{i + 1}. {p}" for i, p in enumerate(DEMO_PARAGRAPHS)) + "\n"
