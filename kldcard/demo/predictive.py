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
   ``logits(y | x) = a_x · v_y`` holds after it; one channel carries the bias (a constant c in
   ``a_x``, ``b_y / c`` in ``v_y``); the padding sits in the last channel of every 32, one large value
   per quantization block like the outlier features of real LLMs (what makes 4-bit blocks lossy);
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

    smoothing: float = 0.4  # Dirichlet pseudo-count towards the unigram distribution
    temperature: float = 1.15  # τ: scales the bigram log-probabilities (peakier above 1)
    bias_gap: float = 9.0  # nats between the least likely seen token's bias and the unseen tokens'
    tail_std: float = 1.6  # spread (nats) of the unseen tokens' logits at a position
    layer_gain: float = 0.08  # scale of the layers' output projections (their perturbation)
    bias_channel: float = 4.0  # value of the bias channel in every effective input vector
    jitter: float = 3.0  # pair weights in [1, 1 + jitter): breaks the bigram's exact ties
    jitter_seed: int = 0
    low_rank_share: float = 0.2  # share of the squared norm the largest low-rank vector may take


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
    # A language model has no exact ties; a bigram of a short text has many (a word followed by five
    # others once each). Weights in [1, 1 + jitter) per pair break them, seeded, so that a tie
    # does not turn every quantization's perturbation into a top-1 flip.
    counts *= 1.0 + lp.jitter * np.random.default_rng(lp.jitter_seed).random((k, k))
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
    # Channels: 0 carries the bias; the last of every 32 carries the norm padding (one large value per
    # 32-wide quantization block, as the outlier features of real LLMs: what makes 4-bit blocks lossy);
    # the rest hold the low-rank factors, then shared noise.
    pad = np.arange(31, d, 32)
    free = np.setdiff1d(np.arange(1, d), pad)
    rank = min(k, len(free) - 16)
    lr, noise = free[:rank], free[rank:]
    a, s, bt = np.linalg.svd(m - bias, full_matrices=False)
    a, b = a[:, :rank] * np.sqrt(s[:rank]), bt[:rank].T * np.sqrt(s[:rank])
    c = lp.bias_channel
    # the largest low-rank vector must fit under the common norm sqrt(d) next to the bias channel
    scale = np.sqrt(lp.low_rank_share * d - c * c) / max(np.linalg.norm(a, axis=1).max(), 1e-12)

    eff = np.zeros((vocab, d))  # effective input vectors (after the final RMSNorm): rms 1, norm sqrt(d)
    eff[:, 0] = c
    eff[np.ix_(seen, lr)] = a * scale
    eff[np.ix_(seen, noise)] = rng.normal(0.0, 0.15, (k, len(noise)))
    unseen = np.setdiff1d(np.arange(vocab), seen)
    eff[np.ix_(unseen, free)] = rng.normal(0.0, 1.0, (len(unseen), len(free)))
    eff[np.ix_(unseen, free)] *= np.sqrt(0.5 * d - c * c) / np.linalg.norm(eff[np.ix_(unseen, free)], axis=1, keepdims=True)
    rest = np.maximum(d - (eff ** 2).sum(1), 0.0)
    eff[:, pad] = np.sqrt(rest / len(pad))[:, None]

    head = np.zeros((vocab, d))
    head[seen, 0] = bias / c
    head[np.ix_(seen, lr)] = b / scale
    low = np.linalg.norm(eff[np.ix_(seen, lr)], axis=1).mean()
    head[unseen, 0] = (bias.min() - lp.bias_gap) / c
    head[np.ix_(unseen, lr)] = rng.normal(0.0, lp.tail_std / low, (len(unseen), rank))
    head[:, noise] = rng.normal(0.0, 0.5 / np.sqrt(d), (vocab, len(noise)))
    return eff.astype(np.float32), head.astype(np.float32), np.ones(d, dtype=np.float32)
