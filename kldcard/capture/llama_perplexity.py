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

import hashlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import Any, Protocol

import numpy as np

from kldcard.errors import InputError, UsageError


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
        # llama-perplexity itself accepts any n_ctx > 0, but below 4 a chunk scores nothing useful.
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


# ------------------------------------------------------------------------------------------------
# Batch layout: how llama-perplexity feeds the chunks (tools/perplexity/perplexity.cpp, vendored in
# llama-cpp-python 0.3.36; line references in docs/llamacpp.md). The layout changes the candidate's
# arithmetic (matmul and attention shapes), so it is a stack coordinate and part of the fingerprint.
# ------------------------------------------------------------------------------------------------

DEFAULT_N_CTX = 512  # llama-perplexity sets params.n_ctx = 512 before parsing -c
DEFAULT_N_BATCH = 2048  # common_params.n_batch (-b)
DEFAULT_N_UBATCH = 512  # common_params.n_ubatch (-ub)


@dataclass(frozen=True)
class LlamaPerplexityBatching:
    """llama-perplexity's batch composition for ``-c n_ctx -b n_batch -ub n_ubatch``.

    ``n_seq = max(1, n_batch // n_ctx)`` chunks are decoded together, each as its own sequence
    (seq ids 0 … m−1, sequence-major), in a context of ``n_seq·n_ctx`` tokens with ``n_seq_max =
    n_seq`` and a non-unified KV cache (one stream per sequence); the KV cache is cleared before each
    group. When ``n_ctx > n_batch`` one chunk is fed in ``ceil(n_ctx / n_batch)`` decodes. Logits are
    requested for every chunk-local position ``≥ n_ctx//2`` (including ``n_ctx−1``, which is never
    scored: the set of output rows shapes the last layer's matmuls). Flash attention ``auto`` (on for
    the CPU backend), ``swa_full`` off (common's default, not the C API's), f16 KV cache.
    """

    n_ctx: int
    n_batch: int  # the logical batch as llama-perplexity clamps it: min(-b, n_seq·n_ctx)
    n_ubatch: int
    n_seq: int
    kv_unified: bool = False
    flash_attn: str = "auto"
    swa_full: bool = False
    n_batch_requested: int = DEFAULT_N_BATCH

    @property
    def context_size(self) -> int:
        """Tokens of the llama.cpp context: n_seq·n_ctx (llama.cpp pads each stream to 256 cells)."""
        return self.n_seq * self.n_ctx

    @property
    def decodes_per_chunk(self) -> int:
        return -(-self.n_ctx // self.n_batch)

    def groups(self, n_chunk: int) -> Iterator[tuple[int, int]]:
        """(first chunk, number of chunks) of each decode group; the last group can be smaller."""
        for i in range(0, n_chunk, self.n_seq):
            yield i, min(self.n_seq, n_chunk - i)

    def fingerprint_fields(self) -> dict[str, Any]:
        """The stack coordinates this layout sets (recorded in the capture's stack fingerprint)."""
        return {
            "prefill_chunk": self.n_batch,
            "n_ubatch": self.n_ubatch,
            "batch_layout": {
                "protocol": "llama-perplexity",
                "sequences_per_decode": self.n_seq,
                "n_seq_max": self.n_seq,
                "tokens_per_sequence": self.n_ctx,
                "n_batch": self.n_batch,
                "n_batch_requested": self.n_batch_requested,
                "n_ubatch": self.n_ubatch,
                "context_size": self.context_size,
                "kv_unified": self.kv_unified,
                "swa_full": self.swa_full,
                "output_rows": f"{self.n_ctx // 2}..{self.n_ctx - 1} of each chunk",
            },
        }

    def describe(self) -> str:
        return (
            f"llama-perplexity batch layout: up to {self.n_seq} sequence(s) of {self.n_ctx} tokens per llama_decode "
            f"(n_batch {self.n_batch}, n_ubatch {self.n_ubatch}, n_seq_max {self.n_seq}, "
            f"{'unified' if self.kv_unified else 'non-unified'} KV cache, flash attention {self.flash_attn}, "
            f"swa_full {'on' if self.swa_full else 'off'}), logits for positions {self.n_ctx // 2}..{self.n_ctx - 1}"
        )


def llama_perplexity_batching(
    n_ctx: int = DEFAULT_N_CTX, n_batch: int | None = None, n_ubatch: int | None = None
) -> LlamaPerplexityBatching:
    """The layout llama-perplexity resolves for ``-c n_ctx -b n_batch -ub n_ubatch`` (``None``: its
    defaults 2048 and 512)."""
    b = DEFAULT_N_BATCH if n_batch is None else int(n_batch)
    ub = DEFAULT_N_UBATCH if n_ubatch is None else int(n_ubatch)
    if n_ctx < 4 or b < 1 or ub < 1:
        raise UsageError(f"llama-perplexity needs n_ctx >= 4 and positive batch sizes (got {n_ctx}, {b}, {ub})")
    n_seq = max(1, b // n_ctx)  # n_parallel, overwritten for perplexity and KLD runs
    n_batch_eff = min(b, n_seq * n_ctx)
    return LlamaPerplexityBatching(n_ctx, n_batch_eff, min(ub, n_batch_eff), n_seq, n_batch_requested=b)


class SequenceDecoder(Protocol):
    """What an engine offers to run llama-perplexity's layout (llama.cpp's adapter does)."""

    n_vocab: int

    def begin_batch_layout(self, batching: LlamaPerplexityBatching) -> None: ...

    def clear_sequences(self) -> None: ...

    def decode_sequences(self, pieces: list[np.ndarray], start: int, first_output: int) -> np.ndarray:
        """The scored rows; may be a view that the next call overwrites."""
        ...


def run_batch_layout(
    engine: SequenceDecoder,
    plan: LlamaPerplexityPlan,
    batching: LlamaPerplexityBatching,
    sink: Callable[[np.ndarray, np.ndarray], None] | None,
    advance: Callable[[int], None] | None = None,
    digest: bool = True,
) -> str | None:
    """Feed ``plan``'s chunks in ``batching``'s layout; hand (global positions, float32 logits of the
    scored rows) to ``sink`` chunk by chunk in chunk order; return the sha256 of positions and logits
    (the same digest the capture loop computes for other layouts), or None when not ``digest``.

    The rows handed to ``sink`` may be a view of the engine's buffer: the sink uses them before it
    returns (writes, compares), never keeps them."""
    h = hashlib.sha256() if digest else None
    n_ctx, first, per = plan.n_ctx, plan.first_scored, plan.per_chunk
    rows_out = n_ctx - first  # logits come back for first … n_ctx−1
    engine.begin_batch_layout(batching)
    for g0, m in batching.groups(plan.n_chunk):
        engine.clear_sequences()
        chunks = plan.chunks[g0 : g0 + m]
        if m == 1:  # one sequence per decode (n_ctx >= n_batch): its rows go to the sink decode by decode
            _stream_chunk(engine, batching, plan, g0, sink, h)
            if advance:
                advance(n_ctx)
            continue
        parts = []
        last = batching.decodes_per_chunk - 1
        for j in range(batching.decodes_per_chunk):
            a, b = j * batching.n_batch, min((j + 1) * batching.n_batch, n_ctx)
            rows_j = engine.decode_sequences([c[a:b] for c in chunks], a, first)
            parts.append(rows_j if j == last else rows_j.copy())  # the next decode overwrites a view
        logits = np.concatenate(parts) if len(parts) > 1 else parts[0]
        if logits.shape != (m * rows_out, engine.n_vocab):
            raise RuntimeError(f"llama.cpp returned {logits.shape[0]} logits rows, expected {m * rows_out}")
        for s in range(m):
            rows = logits[s * rows_out : s * rows_out + per]
            pos = plan.chunk_positions(g0 + s)
            if h is not None:
                h.update(pos.astype("<i8"))
                h.update(np.ascontiguousarray(rows, dtype="<f4"))
            if sink is not None:
                sink(pos, rows)
        if advance:
            advance(m * n_ctx)
    return None if h is None else h.hexdigest()


def _stream_chunk(engine: SequenceDecoder, batching: LlamaPerplexityBatching, plan: LlamaPerplexityPlan, c: int,
                  sink: Callable[[np.ndarray, np.ndarray], None] | None, h: Any) -> None:
    """One chunk alone in its decodes: each decode's scored rows are handed on before the next decode,
    so memory holds one decode's rows (n_batch x n_vocab), never the chunk's (n_ctx/2 x n_vocab). The
    digest is the same bytes as the whole-chunk path: the chunk's positions, then its rows in order."""
    n_ctx, first, per = plan.n_ctx, plan.first_scored, plan.per_chunk
    pos = plan.chunk_positions(c)
    if h is not None:
        h.update(pos.astype("<i8"))
    done = got = 0
    for j in range(batching.decodes_per_chunk):
        a, b = j * batching.n_batch, min((j + 1) * batching.n_batch, n_ctx)
        rows = engine.decode_sequences([plan.chunks[c][a:b]], a, first)
        got += len(rows)
        take = min(len(rows), per - done)  # the chunk's last row (position n_ctx-1) is not scored
        if take > 0:
            if h is not None:
                h.update(np.ascontiguousarray(rows[:take], dtype="<f4"))
            if sink is not None:
                sink(pos[done : done + take], rows[:take])
            done += take
    if got != n_ctx - first or rows.shape[1:] != (engine.n_vocab,):
        raise RuntimeError(f"llama.cpp returned {got} logits rows, expected {n_ctx - first}")


def llama_perplexity_text(text: str) -> str:
    """The text llama-perplexity tokenizes for ``-f FILE``: the file minus one trailing newline."""
    return text[:-1] if text.endswith("\n") else text


def tokenize_as_llama_perplexity(engine: Any, text: str) -> Any:
    """Tokenize ``text`` (already through :func:`llama_perplexity_text`) as llama-perplexity does: BOS
    as the vocabulary adds it, special-token strings (``<|endoftext|>`` …) read as plain text
    (``parse_special = false``), never as their control ids."""
    return engine.tokenize(text, parse_special=False)
