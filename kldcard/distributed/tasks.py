"""The task functions a Dask worker runs. Pure: the output depends only on the arguments and on
immutable capture files, so the scheduler may run a task twice (a worker died holding its result)
and nothing changes.

Each function reads one row range of its captures and computes per-token values with kldcard's own
float64 kernel (:class:`kldcard.compare.divergence.RowKernel`), converting stored rows exactly as the local
stream (:mod:`kldcard.compare.stream`) and the many-stack code (:mod:`kldcard.compare.stacks`) do, so every value
is bit-for-bit the local one. Divergences in nats; forward = KL(P_ref ‖ P_cand).

Errors that carry structured arguments (non-finite logits) are returned as data, not raised: a
worker's exception must survive pickling, and the client re-raises them with the right positions.
"""

from __future__ import annotations

import time

import numpy as np

from kldcard.capture.store import to_float64
from kldcard.compare.divergence import RowKernel, TokenDivergence
from kldcard.compare.stream import nonfinite_side, single_threaded_blas
from kldcard.distributed.urls import cached_capture

__all__ = ["COMPARE_FIELDS", "compare_rows", "stack_rows"]

# per-token outputs of compare_rows, in RowKernel's result order
COMPARE_FIELDS = ("forward_kl", "reverse_kl", "js", "top1_ref", "top1_cand", "p_ref", "p_cand", "nll_ref",
                  "nll_cand", "robust", "p_top_ref", "rank_ref", "rank_cand")


def compare_rows(ref_url: str, cand_url: str, n_vocab: int, i0: int, i1: int, mmap: bool = True,
                 slow_s: float = 0.0, fingerprints: tuple[str | None, str | None] = (None, None)) -> dict:
    """Per-token values of rows ``[i0, i1)`` of two aligned captures over their first ``n_vocab``
    entries: a dict of arrays named as :data:`COMPARE_FIELDS` plus ``i0``, ``i1`` and
    ``nonfinite`` ({"reference"|"candidate": [positions]}). ``slow_s`` sleeps before returning (fault
    injection in tests: it never changes the values). ``fingerprints``: the captures' content as
    planned (see :attr:`UrlCapture.fingerprint`)."""
    ref, cand = cached_capture(ref_url, mmap, fingerprints[0]), cached_capture(cand_url, mmap, fingerprints[1])
    td = TokenDivergence.empty(ref.positions[i0:i1], ref.next_token_ids()[i0:i1])
    bad: dict[str, list[int]] = {"reference": [], "candidate": []}
    br, bc = ref.read_rows(i0, i1)[:, :n_vocab], cand.read_rows(i0, i1)[:, :n_vocab]
    for k in RowKernel(n_vocab).fill(br, bc, td, 0):  # exactly as the local stream calls it
        bad[nonfinite_side(to_float64(br[k]), to_float64(bc[k]))].append(int(td.positions[k]))
    del br, bc  # release the memory map before sleeping
    out = {f: getattr(td, f) for f in COMPARE_FIELDS}
    if slow_s:
        time.sleep(slow_s)
    out.update(i0=i0, i1=i1, nonfinite=bad)
    return out


def stack_rows(urls: list[str], labels: list[str], start: int, stop: int, mmap: bool = True,
               slow_s: float = 0.0, fingerprints: list[str | None] | None = None) -> dict:
    """Many-stack per-position values of rows ``[start, stop)``: ``kl`` [N, N, b] with
    KL(P_i ‖ P_j), ``to_centroid`` [N, b] with KL(P_i ‖ M), ``top1`` [N, b]; computed as
    :func:`kldcard.compare.stacks.compare_stacks` computes one block (the values of a row depend on
    that row only). ``nonfinite``: (label, position) of the first bad row, or None."""
    from kldcard.compare.stacks import log_mean_prob, log_softmax

    caps = [cached_capture(u, mmap, f) for u, f in zip(urls, fingerprints or [None] * len(urls))]
    n_stacks, n_vocab, b = len(caps), caps[0].n_vocab, stop - start
    positions = caps[0].positions
    kl = np.zeros((n_stacks, n_stacks, b))
    to_centroid = np.zeros((n_stacks, b))
    with single_threaded_blas():
        logits = np.stack([to_float64(c.read_rows(start, stop)) for c in caps])
        logp = np.empty_like(logits)
        with np.errstate(invalid="ignore", over="ignore"):
            for k in range(n_stacks):
                logp[k] = log_softmax(logits[k])
            log_m = log_mean_prob(logp)
        top1 = logits.argmax(axis=-1)
        kernel = RowKernel(n_vocab)
        for r in range(b):
            for i in range(n_stacks):
                for j in range(i + 1, n_stacks):
                    res = kernel(logits[i, r], logits[j, r])
                    if res is None:
                        return {"start": start, "stop": stop, "nonfinite": (labels[i], int(positions[start + r]))}
                    kl[i, j, r], kl[j, i, r] = res[0], res[1]
                res = kernel(logp[i, r], log_m[r])
                if res is None:
                    return {"start": start, "stop": stop, "nonfinite": (labels[i], int(positions[start + r]))}
                to_centroid[i, r] = res[0]
    if slow_s:
        time.sleep(slow_s)
    return {"start": start, "stop": stop, "kl": kl, "to_centroid": to_centroid, "top1": top1, "nonfinite": None}
