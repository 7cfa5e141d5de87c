"""FlashAttention-2's split-KV heuristic: how many groups a GPU cuts the KV sequence into.

Attention over a long KV sequence is computed in *splits* (groups of KV blocks). Each split keeps
its own running maximum and partial sums, and the partials are combined at the end. Because bf16
rounding does not commute with the rescaling between maxima, a different split count gives a
different bf16 result although the exact result is the same (see :mod:`kldcard.stack.simulate`).
FlashAttention 2 chooses the split count from the GPU's SM count, so the same weights and prompt
produce different arithmetic on different GPUs.

This module re-implements the heuristic from its description in FlashAttention 2
(``num_splits_heuristic`` and ``set_params_splitkv`` in Dao-AILab/flash-attention,
``csrc/flash_attn/flash_api.cpp``):

- the kernel launches ``batch × heads × m_blocks × splits`` thread blocks; two fit on one SM
  (128 threads per block), so the number of concurrent slots is ``2 × SM count``;
- if ``batch × heads × m_blocks`` already reaches 80% of the slots, use 1 split;
- otherwise, for each candidate split count ``s`` up to ``min(128, 2 × SMs, n_blocks)``, skip ``s``
  when it gives the same blocks-per-split as ``s - 1`` (it would be ``s - 1`` splits in practice);
  its efficiency is ``w / ceil(w)`` with ``w = batch × heads × m_blocks × s / (2 × SMs)``;
- pick the smallest eligible ``s`` whose efficiency is at least 85% of the best.

For single-token decode with grouped-query attention, FA2 swaps the query-head groups into the
query-length dimension, so ``heads`` is the number of KV heads and ``m_blocks`` is
``ceil(q_heads_per_kv_head / 64)`` = 1 in practice. The kernel's arithmetic is float32; the
emulation below reproduces it in float32 arithmetic so that ties at the 80% / 85% thresholds fall
the same way.
"""

from __future__ import annotations

import math
import re
import struct
from dataclasses import asdict, dataclass

from kldcard.errors import UsageError

# FA2 caps the split count at 128 (TORCH_CHECK(num_splits <= 128)).
MAX_SPLITS = 128
# Two 128-thread blocks per SM: FA2 passes ``multiProcessorCount * 2`` as its ``num_SMs``.
BLOCKS_PER_SM = 2


@dataclass(frozen=True)
class GpuSpec:
    name: str  # canonical name shown to people
    sm_count: int
    compute_capability: str
    pattern: str  # regex over the normalised device name (see _normalise)
    source: str


# SM counts. Sources (why each number is trusted):
#   [hopper-wp]    NVIDIA H100 Tensor Core GPU Architecture whitepaper (2022): H100 SXM5 132 SMs,
#                  H100 PCIe 114 SMs; H200/H800/GH200/H100 NVL ship the same 132-SM GH100 configuration
#                  as H100 SXM5 (16,896 CUDA cores = 132 × 128 in their datasheets).
#   [ampere-wp]    NVIDIA A100 Tensor Core GPU Architecture whitepaper (2020): A100 108 SMs (SXM4 and
#                  PCIe); A800 is the same part with reduced NVLink.
#   [ga102-wp]     NVIDIA Ampere GA102 GPU Architecture whitepaper: RTX 3090 82 SMs; A40 / RTX A6000
#                  84 SMs (10,752 cores); A10 72 SMs (9,216 cores); A10G 80 SMs (10,240 cores, AWS).
#   [ada-wp]       NVIDIA Ada GPU Architecture whitepaper: RTX 4090 128 SMs (16,384 cores), RTX 4080
#                  76 SMs; L40 / L40S / RTX 6000 Ada 142 SMs (18,176 cores); L4 58 SMs (7,424 cores).
#   [rtx-bw-wp]    NVIDIA RTX Blackwell GPU Architecture whitepaper (2025): RTX 5090 170 SMs
#                  (21,760 cores), RTX 5080 84 SMs, RTX PRO 6000 Blackwell 188 SMs (24,064 cores).
#   [issue]        the worked example this module is tested against (H200 132, B200 148, an SM120
#                  part with 188 SMs); B200's 148 SMs is also what its device query reports.
#   CUDA cores per SM are 128 on all of these except A100/A30 (64 FP32 cores per SM).
# Order matters: more specific names first (``h100 pcie`` before ``h100``, ``l40s`` before ``l40``).
_GPUS: tuple[GpuSpec, ...] = (
    GpuSpec("H100 PCIe", 114, "9.0", r"\bh100\b.*\bpcie\b", "hopper-wp"),
    GpuSpec("H100 NVL", 132, "9.0", r"\bh100\b.*\bnvl\b", "hopper-wp"),
    GpuSpec("H100 SXM", 132, "9.0", r"\bh100\b", "hopper-wp"),
    GpuSpec("H200", 132, "9.0", r"\bh200\b", "hopper-wp; issue"),
    GpuSpec("GH200", 132, "9.0", r"\bgh200\b", "hopper-wp"),
    GpuSpec("H800", 132, "9.0", r"\bh800\b", "hopper-wp"),
    GpuSpec("B200", 148, "10.0", r"\bb200\b", "issue"),
    GpuSpec("A100", 108, "8.0", r"\ba100\b", "ampere-wp"),
    GpuSpec("A800", 108, "8.0", r"\ba800\b", "ampere-wp"),
    GpuSpec("A10G", 80, "8.6", r"\ba10g\b", "ga102-wp"),
    GpuSpec("A10", 72, "8.6", r"\ba10\b", "ga102-wp"),
    GpuSpec("A40", 84, "8.6", r"\ba40\b", "ga102-wp"),
    GpuSpec("RTX A6000", 84, "8.6", r"\brtx a6000\b", "ga102-wp"),
    GpuSpec("RTX 3090", 82, "8.6", r"\brtx 3090\b(?! ti)", "ga102-wp"),
    GpuSpec("L40S", 142, "8.9", r"\bl40s\b", "ada-wp"),
    GpuSpec("L40", 142, "8.9", r"\bl40\b", "ada-wp"),
    GpuSpec("L4", 58, "8.9", r"\bl4\b", "ada-wp"),
    GpuSpec("RTX 6000 Ada", 142, "8.9", r"\brtx 6000 ada\b", "ada-wp"),
    GpuSpec("RTX 4090", 128, "8.9", r"\brtx 4090\b(?! d)", "ada-wp"),
    GpuSpec("RTX 4080", 76, "8.9", r"\brtx 4080\b(?! super)", "ada-wp"),
    GpuSpec("RTX PRO 6000 Blackwell", 188, "12.0", r"\brtx pro 6000\b", "rtx-bw-wp; issue"),
    GpuSpec("RTX 5090", 170, "12.0", r"\brtx 5090\b", "rtx-bw-wp"),
    GpuSpec("RTX 5080", 84, "12.0", r"\brtx 5080\b", "rtx-bw-wp"),
)

GPU_SM_COUNTS: dict[str, int] = {g.name: g.sm_count for g in _GPUS}


def _normalise(name: str) -> str:
    # torch reports e.g. "NVIDIA H100 80GB HBM3", "NVIDIA A100-SXM4-80GB", "NVIDIA GeForce RTX 4090".
    s = re.sub(r"[^a-z0-9]+", " ", name.lower())
    s = re.sub(r"\b(nvidia|geforce|tesla)\b", " ", s)
    return " ".join(s.split())


def lookup_gpu(name: str) -> GpuSpec | None:
    """The table entry for a GPU name as people or ``torch.cuda.get_device_name`` write it."""
    norm = _normalise(name)
    for g in _GPUS:
        if re.search(g.pattern, norm):
            return g
    return None


def gpu_table() -> list[GpuSpec]:
    return list(_GPUS)


def block_n_for_head_dim(head_dim: int) -> int:
    """KV block size of FA2's split-KV kernel for a head dimension (256 ≤ 64, 128 ≤ 128, else 64)."""
    if head_dim <= 0:
        raise UsageError(f"head dimension must be positive, got {head_dim}")
    return 256 if head_dim <= 64 else 128 if head_dim <= 128 else 64


def f32(x: float) -> float:
    """``x`` rounded to the nearest float32 (as a Python float). One float64 operation on float32
    inputs followed by this rounding equals the float32 operation (53 ≥ 2·24 + 2 bits: double rounding
    is innocuous for +, −, ×, ÷), so FA2's float32 heuristic is reproduced without numpy."""
    return struct.unpack("f", struct.pack("f", x))[0]


def ceil_div(a: int, b: int) -> int:
    return -(-a // b)


def fa2_num_splits(work_tiles: int, sm_count: int, n_blocks: int, max_splits: int = MAX_SPLITS) -> int:
    """The split count FA2 picks.

    ``work_tiles`` is ``batch × heads × m_blocks`` (thread blocks without splitting), ``sm_count`` the
    GPU's streaming multiprocessors (the function doubles it, as FA2 does), ``n_blocks`` the number of
    KV blocks ``ceil(seqlen_k / block_n)``.
    """
    if work_tiles < 1 or sm_count < 1 or n_blocks < 1:
        raise UsageError("work tiles, SM count and KV blocks must all be at least 1")
    slots = BLOCKS_PER_SM * sm_count
    # "Enough to almost fill the SMs": float32 comparison, as in the kernel launcher.
    if f32(work_tiles) >= f32(f32(0.8) * f32(slots)):
        return 1
    limit = min(max_splits, slots, n_blocks)

    def eligible(s: int) -> bool:
        return s == 1 or ceil_div(n_blocks, s) != ceil_div(n_blocks, s - 1)

    eff: dict[int, float] = {}
    for s in range(1, limit + 1):
        if eligible(s):
            waves = f32(f32(work_tiles * s) / f32(slots))
            eff[s] = f32(waves / f32(math.ceil(waves)))
    best = max(eff.values())
    for s in range(1, limit + 1):
        # 0.85 is a double literal in the kernel: the comparison happens in float64.
        if s in eff and float(eff[s]) >= 0.85 * float(best):
            return s
    return 1


@dataclass(frozen=True)
class SplitPrediction:
    """A predicted FA2 split layout for one attention call (lengths in tokens)."""

    seqlen_k: int
    kv_heads: int
    batch: int
    m_blocks: int
    block_n: int
    sm_count: int
    gpu: str | None
    n_blocks: int
    splits: int
    blocks_per_split: int
    tokens_per_split: int  # group size: ceil(n_blocks / splits) × block_n (the last group may be shorter)
    shortcut: bool  # True when the 80%-occupancy rule chose 1 split without searching

    def boundaries(self) -> list[tuple[int, int]]:
        """Token ranges [start, end) of the groups, as the split kernel assigns them."""
        out = []
        for i in range(self.splits):
            start = i * self.tokens_per_split
            end = min(start + self.tokens_per_split, self.seqlen_k)
            if start < end:
                out.append((start, end))
        return out

    def to_dict(self) -> dict[str, object]:
        return asdict(self)


def resolve_sm_count(gpu: str | None = None, sm_count: int | None = None) -> tuple[int, str | None]:
    """SM count and canonical GPU name from ``--gpu NAME`` or ``--sms N`` (exactly one)."""
    if (gpu is None) == (sm_count is None):
        raise UsageError("give exactly one of a GPU name (--gpu) or an SM count (--sms)")
    if sm_count is not None:
        if sm_count < 1:
            raise UsageError(f"SM count must be at least 1, got {sm_count}")
        return sm_count, None
    spec = lookup_gpu(gpu or "")
    if spec is None:
        known = ", ".join(GPU_SM_COUNTS)
        raise UsageError(f"unknown GPU {gpu!r}; pass its SM count with --sms N (known: {known})")
    return spec.sm_count, spec.name


def predict_splits(
    seqlen_k: int,
    kv_heads: int,
    *,
    gpu: str | None = None,
    sm_count: int | None = None,
    block_n: int = 64,
    batch: int = 1,
    m_blocks: int = 1,
) -> SplitPrediction:
    """Predict FA2's split count and group size for attention over ``seqlen_k`` KV tokens.

    Decode of one token with GQA: ``kv_heads`` KV heads, ``m_blocks`` = 1. Give ``gpu`` (a name in
    :data:`GPU_SM_COUNTS` or a ``torch`` device name) or ``sm_count``.
    """
    if seqlen_k < 1 or kv_heads < 1 or block_n < 1 or batch < 1 or m_blocks < 1:
        raise UsageError("sequence length, KV heads, block size, batch and m-blocks must all be at least 1")
    sms, name = resolve_sm_count(gpu, sm_count)
    n_blocks = ceil_div(seqlen_k, block_n)
    work = batch * kv_heads * m_blocks
    splits = fa2_num_splits(work, sms, n_blocks)
    per = ceil_div(n_blocks, splits)
    shortcut = f32(work) >= f32(f32(0.8) * f32(BLOCKS_PER_SM * sms))
    return SplitPrediction(
        seqlen_k=seqlen_k,
        kv_heads=kv_heads,
        batch=batch,
        m_blocks=m_blocks,
        block_n=block_n,
        sm_count=sms,
        gpu=name,
        n_blocks=n_blocks,
        splits=splits,
        blocks_per_split=per,
        tokens_per_split=per * block_n,
        shortcut=shortcut,
    )
