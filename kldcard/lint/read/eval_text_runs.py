"""D3: a count of texts given among the sizes of a run (for :func:`kldcard.lint.read.eval_text.vetoed`).

A described text (a count of its units, "4 prompts", "256 artigos") is read only in a sentence that speaks of the
measurement. Cards also write the texts as one item of the run's settings, beside how many tokens or positions were
scored or how long each context was, with no measuring word in the sentence: "the probe ran on DistilGPT2 with 4
prompts, 256-token contexts and all 6 layers" (holdout13/f enoch_kv_cache), a list item "Decode: four fixed prompts, 400
forced output tokens, temperature 0" (holdout13/a glm53_flash_exl3 tabbyapi lane), a KL table's header cell "forced-c1,
22 hidden prompts, 3,550 positions" (holdout14/a gemma4nv; :data:`kldcard.lint.read.eval_text_cells.CELL_WORDS` reads a cell
that counts positions as one about the measurement). A count of tokens, positions or a context length in the same
sentence makes the count of texts the scored text's. Not in a sentence about speed or memory ("8 prompts, 512 tokens
each, 41 tok/s": the prompts of a speed run), nor about calibrating or training ("Para calibrar se usaron 157
conversaciones ... de hasta 256K tokens", holdout9/c godenheim: the calibration's texts and their length).
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

from kldcard.lint.read.context_written import SPEED
from kldcard.lint.read.terms import POSITION_WORDS, alternation

# a size of the run: "256-token contexts", "3,550 positions", "400 forced output tokens", "4096 held-out tokens",
# "65.536 previsões", "51.175 posiciones"; not a rate ("128 tokens/s", "tokens per second")
RUN_SIZE = re.compile(
    r"(?<![\w.,])\d[\d,.]*\s*[kK]?[-\s](?:[\w-]{1,40}\s+){0,2}?(?:tokens?|positions|contexts?)\b(?!\s*/|\s+per\b)|"
    r"(?<![\w.,])\d[\d,.]*\s+(?:previsões|predicciones|" + alternation(POSITION_WORDS) + r")",
    re.IGNORECASE,
)
# calibrating or training, in the card languages (stems: calibrate / calibrar / calibrer, train / entrenar / treinar)
OTHER_STEP = re.compile(r"calibr|imatrix|importance matrix|\btrain|entren|trein|\bepochs?\b|[ée]pocas?\b|校准|校正|训练|訓練|キャリブレーション", re.IGNORECASE)


def among_run_sizes(sentence: str, m: re.Match[str]) -> bool:
    """Whether ``sentence`` also gives a size of the run (tokens, positions, a context length) beside the count of texts
    ``m``, and speaks of no speed, memory, calibration or training."""
    text = m.group(0)
    at = sentence.find(text)
    rest = sentence[:at] + " " + sentence[at + len(text) :] if at >= 0 else sentence
    return bool(RUN_SIZE.search(rest)) and not SPEED.search(sentence) and not OTHER_STEP.search(sentence)
