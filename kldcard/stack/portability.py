"""Portability: which differences between two stacks change the arithmetic, and the lint rule for a
card that compares numbers across stacks (:data:`CROSS_STACK_RULE`, KLD207).

The comparison itself — the arithmetic-changing coordinates, :class:`StackDifference`,
:func:`stack_differences`, :func:`capture_differences` — lives in :mod:`kldcard.stack.differences`
and is re-exported here; this module reads a card's raw ``kld_evaluation`` block for the rule,
including the coordinates a candidate's ``cross_stack`` acknowledges.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from kldcard.stack.differences import (  # noqa: F401  (re-exported: where compare, lint and render import them)
    GPU_BACKENDS,
    NOT_A_FIXED_TARGET,
    QUANTIZATION_UNDER_TEST,
    STACK_COORDINATES,
    StackDifference,
    capture_differences,
    decode_lengths,
    portability_lines,
    sm_count_of,
    split_mismatches,
    stack_differences,
)

# KLD206 was asked for, but rules_structured.py already assigns KLD206 (model-index-mismatch); codes
# are never reused, so this takes the next free one. The lead registers it: ``rule(**CROSS_STACK_RULE)``.
CROSS_STACK_RULE: dict[str, str] = dict(
    code="KLD207",
    name="cross-stack-comparison",
    severity="warning",
    summary="a candidate's KLD was measured on a different stack than the reference",
    what="Compares each candidate's `runtime` with `reference.runtime` and flags coordinates that change "
    "arithmetic: backend and device (on GPUs, an SM count for which FlashAttention 2 predicts other "
    "split counts, or another compute capability), attention backend, engine and its version or build, "
    "tensor-parallel degree, compute and KV-cache dtypes, prefill chunk and micro-batch. The candidate's "
    "`weights_dtype` is the quantization under test and is not flagged. A candidate measured across stacks "
    "on purpose (an MLX file against a llama.cpp reference) says so in `cross_stack`: the coordinates it "
    "knowingly differs in and why. Those coordinates are not flagged (the rendered section states the "
    "comparison in its prose and runtime row); any other difference still is, and an acknowledged coordinate "
    "that does not differ, or is not one of the coordinates above, is reported as a misstatement.",
    why="A reference capture is a fixed target only for the stack that produced it. Attention kernels "
    "split and round the softmax differently on other GPUs, backends, engine builds and TP degrees, so "
    "the same bf16 weights give different logits. A KLD across stacks mixes the quantization error with "
    "the stack difference, and two candidates measured on different stacks cannot be ranked by it.",
    example="  reference:\n    runtime:\n      engine: vllm\n      device: NVIDIA H200\n      sm_count: 132\n"
    "      attention_backend: flash_attention_2\n      tensor_parallel: 1\n  candidates:\n  - runtime:\n"
    "      engine: vllm\n      device: NVIDIA B200\n      sm_count: 148\n      attention_backend: flashinfer\n"
    "      tensor_parallel: 2\n",
    fix="  reference:\n    runtime:\n      engine: vllm\n      device: NVIDIA H200\n      sm_count: 132\n"
    "      attention_backend: flash_attention_2\n      tensor_parallel: 1\n  candidates:\n  - runtime:\n"
    "      engine: vllm\n      device: NVIDIA H200\n      sm_count: 132\n      attention_backend: flash_attention_2\n"
    "      tensor_parallel: 1\n"
    "# or, when the other stack is the point (the KLD then includes the stack difference, and the card says so):\n"
    "  - runtime:\n      engine: vllm\n      device: NVIDIA B200\n      sm_count: 148\n"
    "      attention_backend: flashinfer\n      tensor_parallel: 2\n"
    "    cross_stack:\n      coordinates: [sm_count, attention_backend, tensor_parallel]\n"
    "      reason: the deployment stack this file is published for\n",
)


def _card_lengths(block: Mapping[str, Any]) -> list[int] | None:
    context = block.get("context")
    n_ctx = context.get("n_ctx") if isinstance(context, Mapping) else None
    if isinstance(n_ctx, int) and not isinstance(n_ctx, bool) and 0 < n_ctx <= 1 << 22:
        # Every KV length up to n_ctx can occur in decode; the heuristic sees only the block count.
        return list(range(64, n_ctx + 64, 64))
    return None


def check_cross_stack(block: Any, prefix: str = "/kld_evaluation") -> list[tuple[str, str]]:
    """Findings of :data:`CROSS_STACK_RULE` for a raw ``kld_evaluation`` mapping (as parsed from YAML).

    Returns ``(json_pointer, message)`` pairs; the pointer names the candidate's runtime field that
    differs (``/kld_evaluation/candidates/0/runtime/attention_backend``), or the runtime itself when the
    coordinate is derived (an SM count looked up from the device name points at ``device``). Malformed
    parts are skipped: other rules report them.
    """
    if not isinstance(block, Mapping):
        return []
    reference = block.get("reference")
    ref_rt = reference.get("runtime") if isinstance(reference, Mapping) else None
    candidates = block.get("candidates")
    if not isinstance(ref_rt, Mapping) or not isinstance(candidates, list):
        return []
    lengths = _card_lengths(block)
    out: list[tuple[str, str]] = []
    for i, cand in enumerate(candidates):
        rt = cand.get("runtime") if isinstance(cand, Mapping) else None
        if not isinstance(rt, Mapping):
            continue
        name = cand.get("name")
        label = f"candidate {name!r}" if isinstance(name, str) else f"candidate {i}"
        acknowledged = acknowledged_coordinates(cand)
        diffs = stack_differences(ref_rt, rt, lengths=lengths, ignore=QUANTIZATION_UNDER_TEST)
        for d in diffs:
            if d.coordinate in acknowledged:
                continue  # the card says so on purpose (cross_stack), and render states it
            field = d.coordinate if d.coordinate in rt else "device"
            pointer = f"{prefix}/candidates/{i}/runtime" + (f"/{field}" if field in rt else "")
            out.append((pointer, f"{label} was measured on another stack than the reference: {d.message}"))
        out.extend(_stale_acknowledgements(cand, diffs, label, f"{prefix}/candidates/{i}/cross_stack/coordinates"))
    return out


def acknowledged_coordinates(candidate: Any) -> set[str]:
    """The coordinates a raw candidate's ``cross_stack`` acknowledges (empty when malformed or absent)."""
    ack = candidate.get("cross_stack") if isinstance(candidate, Mapping) else None
    coords = ack.get("coordinates") if isinstance(ack, Mapping) else None
    return {c for c in coords if isinstance(c, str)} if isinstance(coords, list) else set()


def _stale_acknowledgements(cand: Mapping[str, Any], diffs: Sequence[StackDifference], label: str,
                            pointer: str) -> list[tuple[str, str]]:
    """An acknowledged coordinate that does not differ misstates how the candidate was measured: like an
    unused suppression, it is reported (under KLD207, whose findings it would otherwise silence)."""
    coords = _dict_get_list(cand.get("cross_stack"), "coordinates")
    found = [d.coordinate for d in diffs]
    actual = ", ".join(found) if found else "none"
    out = []
    for j, c in enumerate(coords):
        if not isinstance(c, str) or c in found:
            continue
        # the engine is reported once: its name, else its version, else its build
        covered = [e for e in _ENGINE_LEVELS[:_ENGINE_LEVELS.index(c)] if e in found] if c in _ENGINE_LEVELS else []
        if c in QUANTIZATION_UNDER_TEST:
            why = "the weights are the quantization under test, never a stack difference"
        elif covered:
            why = f"KLD207 reports {covered[0]}, which covers it"
        elif c not in STACK_COORDINATES:
            known = [k for k in STACK_COORDINATES if k not in QUANTIZATION_UNDER_TEST]
            why = f"it is not a coordinate KLD207 compares ({', '.join(known)})"
        else:
            why = "the candidate's runtime does not differ from the reference's there"
        out.append((f"{pointer}/{j}", f"{label} acknowledges a stack difference in {c} (cross_stack), but {why}; "
                    f"the differences found: {actual}"))
    return out


_ENGINE_LEVELS = ("engine", "engine_version", "engine_build")


def _dict_get_list(value: Any, key: str) -> list[Any]:
    got = value.get(key) if isinstance(value, Mapping) else None
    return got if isinstance(got, list) else []
