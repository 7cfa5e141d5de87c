"""Stack differences: which coordinates of two stacks change the arithmetic (portability).

A reference capture is a fixed target only for the stack that produced it. When a candidate (or a
second card's reference) ran on a stack that differs in a coordinate that changes arithmetic, part
of the measured divergence is the stack difference, not the model difference. This module lists
those coordinates; compare, lint (rule :data:`~kldcard.stack.portability.CROSS_STACK_RULE`) and render
print them.

Arithmetic-changing coordinates, in the order they are reported:

- ``backend`` (cpu / cuda / rocm / metal) and, on CPUs and Apple chips, ``device`` / ``chip_family``;
- on GPUs, the SM count *where FlashAttention 2's split heuristic predicts different split counts at
  the captured lengths* (:mod:`kldcard.stack.splits`; two GPUs with the same SM count, e.g. H100 SXM
  and H200, split identically), and ``compute_capability`` (another architecture runs other kernels);
  a GPU whose SM count is unknown is compared by ``device`` name;
- ``attention_backend``; ``engine``, ``engine_version``, ``engine_build``; ``tensor_parallel``;
- dtypes: ``weights_dtype``, ``compute_dtype``, ``kv_cache_dtype``;
- prefill chunking: ``prefill_chunk``, ``n_ubatch``.

Threads, OS, driver and Python versions are not listed: they are disclosed but do not change the
kernels' reduction order in the engines kldcard drives.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass
from functools import lru_cache
from typing import Any

from kldcard.stack.splits import ceil_div, fa2_num_splits, lookup_gpu

NOT_A_FIXED_TARGET = "the reference is not a fixed target for that stack"
GPU_BACKENDS = ("cuda", "rocm")
# In a reference-vs-candidate comparison the candidate's weights differ by design: that difference is
# what is being measured. Pass this as ``ignore`` there.
QUANTIZATION_UNDER_TEST = ("weights_dtype",)
_SCHEMA_DEFAULTS = {"tensor_parallel": 1, "device_count": 1}
# Every coordinate :func:`stack_differences` compares for a card's candidate (``sm_count`` may be derived
# from the device name). A card's ``cross_stack.coordinates`` names some of these.
STACK_COORDINATES = ("backend", "device", "chip_family", "sm_count", "compute_capability",
                     "attention_backend", "engine", "engine_version", "engine_build", "tensor_parallel",
                     "weights_dtype", "compute_dtype", "kv_cache_dtype", "prefill_chunk", "n_ubatch")


@dataclass(frozen=True)
class StackDifference:
    """One arithmetic-changing coordinate on which two stacks differ."""

    coordinate: str  # a StackFingerprint field name (sm_count may be derived from the device name)
    reference: Any
    candidate: Any
    detail: str = ""

    @property
    def message(self) -> str:
        extra = f"; {self.detail}" if self.detail else ""
        return (
            f"stack coordinate {self.coordinate} differs (reference: {_show(self.reference)}; "
            f"candidate: {_show(self.candidate)}){extra}: {NOT_A_FIXED_TARGET}"
        )

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "message": self.message}


def _show(value: Any) -> str:
    return "not recorded" if value is None else str(value)


def _as_mapping(stack: Any) -> Mapping[str, Any] | None:
    if stack is None:
        return None
    if isinstance(stack, Mapping):
        # A raw card block may omit fields that have schema defaults; they mean the default.
        return {**_SCHEMA_DEFAULTS, **stack}
    dump = getattr(stack, "model_dump", None)
    if callable(dump):
        return dump()
    raise TypeError(f"not a stack fingerprint: {type(stack).__name__}")


def _norm(value: Any) -> Any:
    if isinstance(value, str):
        s = re.sub(r"[\s_\-]+", "_", value.strip().lower())
        return {"bfloat16": "bf16", "float16": "f16", "fp16": "f16", "float32": "f32", "fp32": "f32"}.get(s, s)
    return value


def _scalar(value: Any) -> bool:
    return value is None or isinstance(value, str | int | float | bool)


def sm_count_of(stack: Mapping[str, Any]) -> int | None:
    """The recorded SM count, or the table's for the recorded device name; None when unknown."""
    sm = stack.get("sm_count")
    if isinstance(sm, int) and not isinstance(sm, bool) and sm > 0:
        return sm
    device = stack.get("device")
    spec = lookup_gpu(device) if isinstance(device, str) else None
    return spec.sm_count if spec else None


@lru_cache(maxsize=65536)
def _splits(work: int, sms: int, n_blocks: int) -> int:
    return fa2_num_splits(work, sms, n_blocks)


def split_mismatches(
    sm_a: int, sm_b: int, lengths: Iterable[int], kv_heads: int, *, block_n: int = 64, batch: int = 1, m_blocks: int = 1
) -> list[tuple[int, int, int]]:
    """Lengths (KV tokens) at which FA2 picks different split counts: ``(length, splits_a, splits_b)``.

    Only one length per distinct KV-block count is checked (the heuristic sees block counts).
    """
    work = batch * kv_heads * m_blocks
    seen: dict[int, int] = {}
    for length in lengths:
        nb = ceil_div(int(length), block_n)
        if nb >= 1 and nb not in seen:
            seen[nb] = int(length)
    out = []
    for nb, length in sorted(seen.items()):
        a, b = _splits(work, sm_a, nb), _splits(work, sm_b, nb)
        if a != b:
            out.append((length, a, b))
    return out


def decode_lengths(positions: Sequence[int], stride: int | None = None) -> list[int]:
    """KV lengths seen when the logits at ``positions`` are computed one token at a time.

    Position ``i`` (chunk-local ``i mod stride``) attends over ``i + 1`` tokens. Prefill passes with many
    query tokens fill the GPU and take 1 split (FA2's 80% rule), so decode is where splits differ.
    """
    return sorted({(int(x) % stride if stride else int(x)) + 1 for x in positions})


def _kv_heads_of(*stacks: Mapping[str, Any]) -> int | None:
    # StackFingerprint allows extra fields; engines may record the model's KV heads there.
    for s in stacks:
        for key in ("kv_heads", "num_key_value_heads", "n_head_kv"):
            v = s.get(key)
            if isinstance(v, int) and not isinstance(v, bool) and v > 0:
                return v
    return None


def _gpu_differences(
    ref: Mapping[str, Any],
    cand: Mapping[str, Any],
    lengths: Iterable[int] | None,
    kv_heads: int | None,
    block_n: int,
    batch: int,
    m_blocks: int,
) -> list[StackDifference]:
    out: list[StackDifference] = []
    sm_a, sm_b = sm_count_of(ref), sm_count_of(cand)
    if sm_a is None or sm_b is None:
        if _norm(ref.get("device")) != _norm(cand.get("device")):
            out.append(
                StackDifference(
                    "device", ref.get("device"), cand.get("device"), "the SM count of one GPU is unknown, so "
                    "split counts cannot be predicted",
                )
            )
    elif sm_a != sm_b:
        kv = kv_heads or _kv_heads_of(ref, cand)
        lens = list(lengths) if lengths is not None else None
        if kv is None or not lens:
            out.append(
                StackDifference(
                    "sm_count", sm_a, sm_b, f"devices {ref.get('device')} and {cand.get('device')}; "
                    "FlashAttention-2-style kernels pick the number of KV groups from the SM count "
                    "(give the captured lengths and KV heads to predict them)",
                )
            )
        else:
            bad = split_mismatches(sm_a, sm_b, lens, kv, block_n=block_n, batch=batch, m_blocks=m_blocks)
            if bad:
                n_checked = len({ceil_div(int(x), block_n) for x in lens})
                length, a, b = bad[-1]
                out.append(
                    StackDifference(
                        "sm_count", sm_a, sm_b,
                        f"devices {ref.get('device')} and {cand.get('device')}; FlashAttention 2 predicts "
                        f"different split counts at {len(bad)} of {n_checked} captured KV-block counts "
                        f"(e.g. {length} tokens, {kv} KV heads, block {block_n}: {a} vs {b} groups)",
                    )
                )
    cc_a, cc_b = ref.get("compute_capability"), cand.get("compute_capability")
    if cc_a is not None and cc_b is not None and _norm(cc_a) != _norm(cc_b):
        out.append(StackDifference("compute_capability", cc_a, cc_b, "another GPU architecture runs other kernels"))
    return out


def stack_differences(
    reference: Any,
    candidate: Any,
    *,
    lengths: Iterable[int] | None = None,
    kv_heads: int | None = None,
    block_n: int = 64,
    batch: int = 1,
    m_blocks: int = 1,
    ignore: Iterable[str] = (),
) -> list[StackDifference]:
    """Arithmetic-changing coordinates on which two stacks differ (empty list: same arithmetic).

    ``reference`` / ``candidate`` are :class:`kldcard.schema.StackFingerprint` objects or plain mappings
    (a card's ``runtime`` block); a missing stack is itself reported (coordinate ``stack``). ``lengths``
    are the KV lengths (tokens) at the captured positions, e.g. :func:`decode_lengths`; ``kv_heads`` the
    model's KV heads. ``ignore`` lists coordinates that differ by design (see
    :data:`QUANTIZATION_UNDER_TEST`).
    """
    ref, cand = _as_mapping(reference), _as_mapping(candidate)
    if ref is None or cand is None:
        return [
            StackDifference(
                "stack",
                "recorded" if ref is not None else None,
                "recorded" if cand is not None else None,
                "without both stacks nobody can tell whether the arithmetic matched",
            )
        ]
    skip = set(ignore)
    out: list[StackDifference] = []

    def plain(field: str, detail: str = "") -> None:
        a, b = ref.get(field), cand.get(field)
        if field in skip or not (_scalar(a) and _scalar(b)):
            return
        if a is not None and b is not None and _norm(a) != _norm(b):
            out.append(StackDifference(field, a, b, detail))

    backend_a, backend_b = _norm(ref.get("backend")), _norm(cand.get("backend"))
    if "backend" not in skip and backend_a != backend_b and None not in (backend_a, backend_b):
        out.append(
            StackDifference(
                "backend", ref.get("backend"), cand.get("backend"),
                f"devices {ref.get('device')} and {cand.get('device')}",
            )
        )
    elif backend_a in GPU_BACKENDS and "device" not in skip:
        out.extend(_gpu_differences(ref, cand, lengths, kv_heads, block_n, batch, m_blocks))
    elif "device" not in skip:
        plain("device", "other CPU/GPU models run other SIMD or GPU kernels")
        plain("chip_family")
    plain("attention_backend", "attention kernels group and round the softmax differently")
    if _norm(ref.get("engine")) != _norm(cand.get("engine")):
        plain("engine")
    elif _norm(ref.get("engine_version")) != _norm(cand.get("engine_version")):
        plain("engine_version")
    else:
        plain("engine_build")
    plain("tensor_parallel", "tensor-parallel shards sum partial matmuls in another order")
    for field in ("weights_dtype", "compute_dtype", "kv_cache_dtype"):
        plain(field)
    plain("prefill_chunk", "a different prefill chunk changes batch shapes and kernel choices")
    plain("n_ubatch")
    return out


def capture_differences(reference_capture: Any, candidate_capture: Any, *, kv_heads: int | None = None,
                        ignore: Iterable[str] = ()) -> list[StackDifference]:
    """:func:`stack_differences` for two opened captures, at the captured positions' decode lengths."""
    m_ref, m_cand = reference_capture.manifest, candidate_capture.manifest
    context = getattr(m_ref, "context", None)
    if isinstance(context, Mapping):
        stride = context.get("stride") or context.get("n_ctx")
    else:
        stride = getattr(context, "stride", None) or getattr(context, "n_ctx", None)
    lengths = decode_lengths(reference_capture.positions, stride if isinstance(stride, int) else None)
    if kv_heads is None:
        # The model section allows extra keys; a capturer may record the KV heads there.
        models = [getattr(m, "model", None) for m in (m_ref, m_cand)]
        kv_heads = _kv_heads_of(*(_as_mapping(m) or {} for m in models if m is not None))
    return stack_differences(m_ref.stack, m_cand.stack, lengths=lengths, kv_heads=kv_heads, ignore=ignore)


def portability_lines(differences: Sequence[StackDifference]) -> list[str]:
    """One line per difference, for compare and render output."""
    return [f"portability: {d.message}" for d in differences]
