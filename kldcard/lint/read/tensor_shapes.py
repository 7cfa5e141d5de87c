"""A product of two numbers that is a tensor's shape, not windows × length.

Quantization cards write weight layouts the way KLD cards write their windows: "FP8 block scales of
128x128", "static 128x128 weight blocks", "bloques de pesos de 128x128", "tiles of 64×256". The product
is a shape when the words right before it (same line, a few words) or right after it name a weight
layout: a block, tile, group, matrix, tensor or weights (in the card languages too). A window count is
written next to its windows ("20 x 2048 tokens", "64 chunks × 512"), which none of these words are.
"""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)

I = re.IGNORECASE

PRODUCT = re.compile(r"\d\s*(?:×|x)\s*\d", I)
# the layout nouns (English, Spanish, Portuguese, French, German, Chinese, Japanese)
LAYOUT = (
    r"blocks?|blockwise|block-wise|tiles?|tiled|groups?|matri(?:x|ces)|tensors?|weights?|kernels?|GEMMs?|"
    r"bloques?|pesos|grupos?|matri(?:z|ces)|blocos?|tuiles?|poids|Blöcke|Gewichte|块|矩阵|权重|ブロック|行列|重み"
)
BEFORE = re.compile(r"(?:^|[^\w])(?:" + LAYOUT + r")(?:\s+\S+){0,3}\s*$", I)
# what only windows are: "... 20 x 2048 tokens", "... 8x2048 windows"
WINDOWS = re.compile(r"^[\s-]*(?:\S+\s+)?(?:tokens?|chunks?|windows?|rows?|sequences?|ctx|context)\b", I)
AFTER = re.compile(r"^\s*(?:\S+\s+){0,1}(?:" + LAYOUT + r")\b", I)


def is_shape(text: str, m: re.Match[str]) -> bool:
    """``m`` (a D5 or D6 match) holds a product that the words around it call a weight layout."""
    if not PRODUCT.search(m.group(0)):
        return False
    line_start = text.rfind("\n", 0, m.start()) + 1
    before = text[max(line_start, m.start() - 40) : m.start()]
    line_end = text.find("\n", m.end())
    after = text[m.end() : min(line_end if line_end >= 0 else len(text), m.end() + 30)]
    if WINDOWS.match(after) or re.search(r"tokens?|chunks?|windows?|rows", m.group(0), I):
        return False
    return bool(BEFORE.search(before) or AFTER.search(after))
