"""The llama-perplexity protocol as a pure function: which ids are fed, which positions are scored.

For the engines helper's ``kldcard capture --protocol llama-perplexity`` (and for reading base
files). llama-perplexity (pass 1 and pass 2 alike; ``shared/reference/llamacpp-kld.md`` §3):

1. tokenises the whole text once, with a leading BOS only if the vocabulary adds one;
2. needs at least ``2·n_ctx`` tokens, else it aborts;
3. cuts ``n_chunk = min(n_chunks, n_tokens // n_ctx)`` non-overlapping windows
   ``[c·n_ctx, (c+1)·n_ctx)`` (``n_chunks = -1``: all), dropping the tail; every chunk starts from an
   empty KV cache;
4. when the vocabulary adds BOS, *overwrites* token 0 of every chunk with ``bos_id`` (the original
   first token of the chunk is never seen; the base file stores the original ids);
5. scores the logits at chunk-local positions ``n_ctx//2 … n_ctx−2``; local position ``j`` predicts
   chunk token ``j+1``. Record ``k`` of chunk ``c`` in a base file is local position
   ``n_ctx//2 + k``, global position ``c·n_ctx + n_ctx//2 + k``.

How to use it in a capture (what kldcard's store calls "position ``i``" = the logits after feeding
``token_ids[0..i]``, here within the chunk that contains ``i``)::

    plan = llama_perplexity_plan(ids, n_ctx=512, add_bos=vocab_adds_bos, bos_id=bos)
    # token_ids for the capture:  plan.fed_ids   (BOS-overwritten chunk starts; int32 [n_chunk·n_ctx])
    # positions for the capture:  plan.positions (int64, global, strictly increasing)
    for c, fed in enumerate(plan.chunks):          # each int32 [n_ctx]; reset the KV cache per chunk
        logits = engine.eval(fed)                   # float32 [n_ctx, n_vocab], or only rows plan.scored_local
        writer.append(plan.chunk_positions(c), logits[plan.scored_local])

and record ``tokens.bos = "chunk-start-overwrite"`` (add_bos) or ``"none"``,
``positions.scheme = "llama-perplexity"``, ``context = {n_ctx, n_chunks: plan.n_chunk, stride: n_ctx}``.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from kldcard.errors import InputError


@dataclass(frozen=True)
class LlamaPerplexityPlan:
    """Chunks, fed ids and scored positions of llama-perplexity over one token sequence."""

    n_ctx: int
    n_chunk: int
    add_bos: bool
    bos_id: int | None
    original_ids: np.ndarray  # int32 [n_chunk·n_ctx]: the ids a base file stores
    fed_ids: np.ndarray  # int32 [n_chunk·n_ctx]: with the per-chunk BOS overwrite when add_bos

    @property
    def first_scored(self) -> int:
        """Chunk-local position of the first scored logits (n_ctx//2)."""
        return self.n_ctx // 2

    @property
    def scored_local(self) -> slice:
        """Chunk-local positions scored: n_ctx//2 … n_ctx−2 (as a slice over a chunk's rows)."""
        return slice(self.n_ctx // 2, self.n_ctx - 1)

    @property
    def per_chunk(self) -> int:
        """Scored positions per chunk: n_ctx − 1 − n_ctx//2."""
        return self.n_ctx - 1 - self.n_ctx // 2

    @property
    def n_scored(self) -> int:
        return self.n_chunk * self.per_chunk

    @property
    def chunks(self) -> list[np.ndarray]:
        """The fed ids of each chunk, int32 [n_ctx] each (views of ``fed_ids``)."""
        return [self.fed_ids[c * self.n_ctx : (c + 1) * self.n_ctx] for c in range(self.n_chunk)]

    def chunk_positions(self, chunk: int) -> np.ndarray:
        """Global positions (int64) scored in ``chunk``: c·n_ctx + n_ctx//2 + k, k = 0 … S−1."""
        return chunk * self.n_ctx + np.arange(self.n_ctx // 2, self.n_ctx - 1, dtype=np.int64)

    @property
    def positions(self) -> np.ndarray:
        """All scored global positions (int64, strictly increasing)."""
        if self.n_chunk == 0:
            return np.zeros(0, dtype=np.int64)
        return np.concatenate([self.chunk_positions(c) for c in range(self.n_chunk)])

    def targets(self) -> np.ndarray:
        """The token each scored position predicts: original_ids[position + 1] (never a chunk start)."""
        return self.original_ids[self.positions + 1]

    def record_to_position(self, chunk: int, k: int) -> int:
        """Base-file record ``k`` of ``chunk`` → global position."""
        if not (0 <= chunk < self.n_chunk and 0 <= k < self.per_chunk):
            raise IndexError(f"no record {k} in chunk {chunk}")
        return chunk * self.n_ctx + self.n_ctx // 2 + k

    def position_to_record(self, position: int) -> tuple[int, int]:
        """Global position → (chunk, record k); ``ValueError`` if the position is not scored."""
        c, j = divmod(int(position), self.n_ctx)
        k = j - self.n_ctx // 2
        if not (0 <= c < self.n_chunk and 0 <= k < self.per_chunk):
            raise ValueError(f"position {position} is not scored by llama-perplexity at n_ctx={self.n_ctx}")
        return c, k


def llama_perplexity_plan(
    token_ids: np.ndarray | list[int],
    n_ctx: int,
    *,
    add_bos: bool,
    bos_id: int | None = None,
    n_chunks: int = -1,
    require_two_chunks: bool = True,
) -> LlamaPerplexityPlan:
    """Plan llama-perplexity's chunks for ``token_ids`` (the whole text tokenised once, with BOS only
    if the vocabulary adds it). ``n_chunks = -1`` takes all whole chunks, as ``--chunks -1`` does.
    ``require_two_chunks`` mirrors llama-perplexity's abort below 2·n_ctx tokens."""
    ids = np.asarray(token_ids, dtype=np.int64)
    if ids.ndim != 1:
        raise InputError("token ids must be one-dimensional")
    if n_ctx < 4:
        raise InputError(f"n_ctx must be at least 4 for llama-perplexity scoring, got {n_ctx}")
    if add_bos and bos_id is None:
        raise InputError("add_bos needs bos_id (the id that overwrites token 0 of every chunk)")
    if require_two_chunks and len(ids) < 2 * n_ctx:
        raise InputError(
            f"llama-perplexity needs at least 2·n_ctx = {2 * n_ctx} tokens; the text has {len(ids)}"
        )
    n_chunk_max = len(ids) // n_ctx
    n_chunk = n_chunk_max if n_chunks < 0 else min(n_chunks, n_chunk_max)
    original = ids[: n_chunk * n_ctx].astype(np.int32)
    fed = original.copy()
    if add_bos and n_chunk:
        fed[:: n_ctx] = bos_id
    return LlamaPerplexityPlan(n_ctx, n_chunk, bool(add_bos), bos_id if add_bos else None, original, fed)
