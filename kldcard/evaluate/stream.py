"""One pass: compare a candidate's logits with the reference as they leave the engine.

:class:`StreamingComparer` stands where :class:`~kldcard.capture.store.CaptureWriter` stands in
:func:`kldcard.capture.run.run_capture` (same constructor, ``meta`` and ``append``), so the engine
loop, its chunks, windows and protocol are the capture's own, bit for bit. Each block of rows goes
straight through the compiled :class:`~kldcard.compare.divergence.RowKernel` against the same rows
of the reference capture (read from disk once per block, each thread its share, never converted in
Python) into a :class:`~kldcard.compare.divergence.TokenDivergence`; no candidate logit is stored
unless ``keep`` names a capture directory (then the rows are also written there, atomically, for
later). The candidate rows are a view of the engine's own logits buffer (llama.cpp: no copy), used
before the engine's next decode overwrites them.

The reference is shared across candidates through the page cache: one capture on disk, read block
by block by each candidate's pass (a page-cache copy, split across the kernel's threads), rather than
held whole in memory (2.2 GB for the benchmark's job, ~15 GB at 512 tokens × 100 chunks × 150k).

Divergences are in nats; forward = KL(P_ref ‖ P_cand), over the full vocabulary (or the common
prefix when ``align_vocab="common-prefix"``).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import numpy as np

from kldcard import __version__
from kldcard.capture.manifest import CaptureManifest, CaptureMeta, FileInfo
from kldcard.capture.reader import sha256_array
from kldcard.capture.store import Capture, CaptureWriter
from kldcard.compare.divergence import RowKernel, TokenDivergence
from kldcard.errors import CaptureMismatch, NonFiniteLogits

__all__ = ["StreamedCandidate", "StreamingComparer", "comparer_for"]


class StreamedCandidate:
    """What :func:`~kldcard.compare.run.build_result` needs of a candidate capture, without shards:
    its manifest (provenance; ``shards`` empty, a note says the logits were compared as produced)."""

    def __init__(self, path: Path, manifest: CaptureManifest, token_ids: np.ndarray, positions: np.ndarray,
                 divergence: TokenDivergence):
        self.path, self.manifest, self.token_ids, self.positions = path, manifest, token_ids, positions
        self.divergence = divergence

    n_vocab = property(lambda self: self.manifest.n_vocab)
    n_positions = property(lambda self: self.manifest.n_positions)


class StreamingComparer:
    """A capture sink that compares instead of storing (see the module docstring)."""

    def __init__(self, out_dir: str | os.PathLike, *, meta: CaptureMeta, n_vocab: int, token_ids: np.ndarray,
                 reference: Capture, align_vocab: str | None = None, keep: Path | None = None,
                 keep_dtype: str = "bf16", dtype: str = "f32", shard_positions: int = 4096,
                 overwrite: bool = False):
        ids = np.asarray(token_ids, np.int32)
        ref = reference
        # The same guards as compare's check_comparable, applied before the engine runs a token.
        if not np.array_equal(ids, ref.token_ids):
            n = min(len(ids), len(ref.token_ids))
            diff = np.flatnonzero(ids[:n] != ref.token_ids[:n])
            at = int(diff[0]) if len(diff) else n
            raise CaptureMismatch(f"token ids differ from the reference capture's at index {at} "
                                  f"(candidate {len(ids)} tokens, reference {len(ref.token_ids)})")
        if n_vocab != ref.n_vocab and align_vocab != "common-prefix":
            raise CaptureMismatch(
                f"vocabulary sizes differ: reference {ref.n_vocab} vs candidate {n_vocab}; if one is padded, "
                f"set align_vocab: common-prefix to compare the first {min(n_vocab, ref.n_vocab)} entries")
        self.out_dir, self.meta, self.ref, self.token_ids = Path(out_dir), meta, ref, ids
        self.n_vocab, self.n_compared = int(n_vocab), min(int(n_vocab), ref.n_vocab)
        self.alignment = "identical" if n_vocab == ref.n_vocab else "common-prefix"
        self.out = TokenDivergence.empty(ref.positions, ref.next_token_ids())
        from kldcard.compare.stream import default_threads

        # the engine waits while a block is compared: the block's rows go to every core (the compiled
        # kernel releases the GIL), one kernel (scratch rows) per thread
        self.threads = default_threads()
        self.kerns = [RowKernel(self.n_compared) for _ in range(self.threads)]
        self.pool = None
        self.buf: np.ndarray | None = None
        self.filled = 0
        self.bad: dict[str, list[int]] = {"reference": [], "candidate": []}
        self.keep = None if keep is None else CaptureWriter(keep, meta=meta, n_vocab=n_vocab, token_ids=ids,
                                                           dtype=keep_dtype, shard_positions=shard_positions,
                                                           overwrite=True)
        self.capture: StreamedCandidate | None = None

    def append(self, positions: np.ndarray, logits: np.ndarray) -> None:
        pos = np.asarray(positions, np.int64)
        i0 = self.filled
        i1 = i0 + len(pos)
        if i1 > len(self.ref.positions) or not np.array_equal(self.ref.positions[i0:i1], pos):
            raise CaptureMismatch(f"the candidate scored positions {int(pos[0])}..{int(pos[-1])} where the "
                                  f"reference capture has others; use the reference's positions and context")
        if self.buf is None or len(self.buf) < len(pos):
            self.buf = np.empty((len(pos), self.ref.n_vocab), dtype=self.ref.raw_dtype)
        buf = self.buf[: len(pos)]
        zr = buf[:, : self.n_compared]
        zc = logits[:, : self.n_compared]
        n, t = len(pos), self.threads
        cuts = [n * j // t for j in range(t + 1)] if n >= 2 * t and t > 1 else [0, n]

        def run(j: int) -> list[int]:
            a, b = cuts[j], cuts[j + 1]
            # each thread reads its own reference rows (a page-cache copy: done serially, it left the
            # other core idle while the engine waits; ~1.4 s of the benchmark's candidate profile)
            self.ref.read_rows_into(i0 + a, i0 + b, buf[a:b])
            return [a + k for k in self.kerns[j].fill(zr[a:b], zc[a:b], self.out, i0 + a)]

        if len(cuts) == 2:
            bad = run(0)
        else:
            if self.pool is None:
                from concurrent.futures import ThreadPoolExecutor

                self.pool = ThreadPoolExecutor(max_workers=t, thread_name_prefix="kldcard-evaluate")
            bad = [k for part in self.pool.map(run, range(t)) for k in part]
        for k in bad:
            from kldcard.capture.store import to_float64
            from kldcard.compare.stream import nonfinite_side

            self.bad[nonfinite_side(to_float64(zr[k]), to_float64(zc[k]))].append(int(pos[k]))
        if self.keep is not None:
            self.keep.append(pos, logits)
        self.filled = i1

    def _manifest(self) -> CaptureManifest:
        tok_sha = sha256_array(self.token_ids, "<i4")
        data: dict[str, Any] = self.meta.model_dump()
        data["notes"] = [*data.get("notes", []), "streamed by kldcard evaluate: logits compared with the reference "
                         "as they left the engine (float32), none stored"]
        return CaptureManifest.model_validate({
            **data, "kldcard_version": __version__, "n_vocab": self.n_vocab, "dtype": "f32",
            "n_positions": self.filled, "n_tokens": len(self.token_ids), "token_ids_sha256": tok_sha,
            "positions_sha256": sha256_array(self.ref.positions, "<i8"),
            "tokens_file": FileInfo(file="(streamed)", bytes=self.token_ids.nbytes, sha256=tok_sha), "shards": [],
        })

    def __enter__(self) -> StreamingComparer:
        return self

    def __exit__(self, exc_type, exc, tb) -> None:
        if self.pool is not None:
            self.pool.shutdown(wait=True)
            self.pool = None
        if exc_type is not None:
            if self.keep is not None:
                self.keep.abort()
            return
        if self.filled != len(self.ref.positions):
            raise CaptureMismatch(f"the candidate scored {self.filled} positions, the reference {len(self.ref.positions)}")
        for side in ("reference", "candidate"):
            if self.bad[side]:
                raise NonFiniteLogits(side, sorted(self.bad[side]))
        if self.keep is not None:
            self.keep.finalize()
        self.capture = StreamedCandidate(self.keep or self.out_dir, self._manifest(), self.token_ids,
                                         self.ref.positions, self.out)
        if self.keep is not None:
            self.capture.path = self.keep.out_dir


def comparer_for(reference: Capture, **options: Any):
    """A ``writer`` for :func:`~kldcard.capture.run.run_capture` bound to ``reference``."""

    def make(out_dir, *, meta, n_vocab, token_ids, dtype="f32", shard_positions=4096, overwrite=False):
        return StreamingComparer(out_dir, meta=meta, n_vocab=n_vocab, token_ids=token_ids, reference=reference,
                                 shard_positions=shard_positions, overwrite=overwrite, **options)

    return make
