"""Weights that predict a text: a bigram model of the demo text written into a tiny checkpoint.

Random weights give next-token distributions no language model has (the label is never near the top,
no position is confident), so the numbers a card shows on them are not the numbers a user will see.
Training even a tiny model over a 151,936-token vocabulary is too slow for CI, so the statistics are
written in directly:

1. the corpus (:data:`kldcard.demo.text.DEMO_TEXT`) is tokenized with the real tokenizer;
2. its bigram log-probabilities over the K distinct tokens, ``τ · log P(y | x)`` with Dirichlet
   smoothing towards the unigram (``α``), are centred per row (a softmax ignores a row's constant);
3. the column means become a per-token bias and the rest is factorised by SVD into
   ``A √Σ`` (the input embedding of x) and ``B √Σ`` (the output head row of y) — exact at rank K;
4. every effective input vector is padded to the same norm, so the final RMSNorm is a fixed scale and
   ``logits(y | x) = a_x · v_y`` holds after it; one channel carries the bias (a constant 1·c in
   ``a_x``, ``b_y / c`` in ``v_y``);
5. the ~151,000 tokens the corpus never uses get a bias far below the seen ones plus a random
   per-position spread (their rows of the head are Gaussian), so the tail is a real tail: thin, but
   wide enough that llama.cpp's 16-nat base-file floor drops part of it;
6. the transformer layers keep seeded random weights with their output projections scaled by
   ``layer_gain``: they add a context-dependent perturbation, as a real model's layers do, and give
   the quantizers attention and feed-forward matrices to work on.

The embedding is untied from the head (Qwen3's larger checkpoints are untied too): a tied matrix
would make ``logits(y | x) = e_x · e_y`` symmetric, which a bigram is not. Everything is float64
numpy with a fixed seed, rounded to BF16 at the end: bit-reproducible on one machine.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np

__all__ = ["LmParams", "corpus_ids", "bigram_logits", "lm_weights"]


@dataclass(frozen=True)
class LmParams:
    """Knobs of the bigram weights (part of the tiny model's cache key)."""

    smoothing: float = 0.6  # Dirichlet pseudo-count towards the unigram distribution
    temperature: float = 1.25  # τ: scales the bigram log-probabilities (peakier above 1)
    bias_gap: float = 9.0  # nats between the least likely seen token's bias and the unseen tokens'
    tail_std: float = 1.6  # spread (nats) of the unseen tokens' logits at a position
    layer_gain: float = 0.08  # scale of the layers' output projections (their perturbation)
    bias_channel: float = 4.0  # value of the bias channel in every effective input vector


def corpus_ids(tok_dir: Path, text: str) -> np.ndarray:
    """Token ids of ``text`` as the engines see it (special tokens such as BOS added as configured)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(Path(tok_dir) / "tokenizer.json"))
    return np.asarray(tok.encode(text, add_special_tokens=True).ids, dtype=np.int64)


def bigram_logits(ids: np.ndarray, lp: LmParams) -> tuple[np.ndarray, np.ndarray]:
    """``(seen, L)``: the distinct token ids (sorted) and ``L[i, j] = τ · log P(seen[j] | seen[i])``."""
    seen, inv = np.unique(ids, return_inverse=True)
    k = len(seen)
    counts = np.zeros((k, k))
    np.add.at(counts, (inv[:-1], inv[1:]), 1.0)
    uni = np.bincount(inv, minlength=k).astype(np.float64)
    uni /= uni.sum()
    p = (counts + lp.smoothing * uni) / (counts.sum(1, keepdims=True) + lp.smoothing)
    return seen, lp.temperature * np.log(p)


def lm_weights(ids: np.ndarray, vocab: int, hidden: int, lp: LmParams, rng: np.random.Generator
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """``(embed [V, d], head [V, d], final_norm [d])`` in float32 (not yet BF16-rounded) such that
    ``RMSNorm(embed[x]) * final_norm @ head.T`` are the bigram logits of ``ids`` for every seen x."""
    d = hidden
    seen, logits = bigram_logits(ids, lp)
    k = len(seen)
    m = logits - logits.mean(1, keepdims=True)  # a row's constant does not change its softmax
    bias = m.mean(0)
    a, s, bt = np.linalg.svd(m - bias, full_matrices=False)
    rank = min(k, d - 2 - 16)  # channels: bias, rank, 16 of shared noise, norm padding
    a, s, b = a[:, :rank] * np.sqrt(s[:rank]), s[:rank], bt[:rank].T * np.sqrt(s[:rank])
    c = lp.bias_channel
    # the largest low-rank vector must fit under the common norm sqrt(d) next to the bias channel
    scale = np.sqrt(0.85 * d - c * c) / max(np.linalg.norm(a, axis=1).max(), 1e-12)
    noise_dims = slice(1 + rank, d - 1)

    eff = np.zeros((vocab, d))  # effective input vectors (after the final RMSNorm): rms 1, norm sqrt(d)
    eff[:, 0] = c
    eff[seen, 1 : 1 + rank] = a * scale
    eff[seen, noise_dims] = rng.normal(0.0, 0.15, (k, d - 2 - rank))
    unseen = np.setdiff1d(np.arange(vocab), seen)
    eff[unseen, 1 : d - 1] = rng.normal(0.0, 1.0, (len(unseen), d - 2))
    eff[unseen, 1 : d - 1] *= np.sqrt(0.5 * d - c * c) / np.linalg.norm(eff[unseen, 1 : d - 1], axis=1, keepdims=True)
    eff[:, d - 1] = np.sqrt(np.maximum(d - (eff[:, : d - 1] ** 2).sum(1), 0.0))

    head = np.zeros((vocab, d))
    head[seen, 0] = bias / c
    head[seen, 1 : 1 + rank] = b / scale
    low = np.linalg.norm(eff[seen, 1 : 1 + rank], axis=1).mean()
    head[unseen, 0] = (bias.min() - lp.bias_gap) / c
    head[unseen, 1 : 1 + rank] = rng.normal(0.0, lp.tail_std / low, (len(unseen), rank))
    head[:, noise_dims] = rng.normal(0.0, 0.5 / np.sqrt(d), (vocab, d - 2 - rank))
    return eff.astype(np.float32), head.astype(np.float32), np.ones(d, dtype=np.float32)
