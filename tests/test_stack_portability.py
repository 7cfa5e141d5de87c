"""Portability warnings: arithmetic-changing stack differences, on real captures and on card blocks."""

from __future__ import annotations

import numpy as np
import pytest
from helpers_stack import CPU, H200, make_capture, stack

from kldcard.stack.portability import (
    CROSS_STACK_RULE,
    NOT_A_FIXED_TARGET,
    QUANTIZATION_UNDER_TEST,
    capture_differences,
    check_cross_stack,
    decode_lengths,
    split_mismatches,
    stack_differences,
)

V, N = 257, 40


@pytest.fixture
def tokens_and_logits():
    rng = np.random.default_rng(7)
    return rng.integers(0, V, N).astype(np.int32), rng.standard_normal((N, V)).astype(np.float32) * 4


def test_warning_fires_for_captures_differing_only_in_the_gpu(tmp_path, tokens_and_logits):
    tokens, logits = tokens_and_logits
    # Decode positions around the worked example's length: H200 and B200 pick 54 vs 62 splits there.
    positions = np.arange(27_500, 27_500 + N, dtype=np.int64)
    tokens = np.resize(tokens, 27_600)
    h200 = make_capture(tmp_path / "h200", logits, tokens, stack(H200), positions)
    b200 = make_capture(
        tmp_path / "b200", logits, tokens, stack(H200, device="NVIDIA B200", sm_count=148, compute_capability="9.0"),
        positions,
    )
    diffs = capture_differences(h200, b200, kv_heads=4)
    assert [d.coordinate for d in diffs] == ["sm_count"]
    msg = diffs[0].message
    assert "132" in msg and "148" in msg and "54 vs 62 groups" in msg and NOT_A_FIXED_TARGET in msg


def test_same_sm_count_on_another_gpu_model_is_not_flagged(tmp_path, tokens_and_logits):
    tokens, logits = tokens_and_logits
    a = make_capture(tmp_path / "a", logits, tokens, stack(H200))
    b = make_capture(tmp_path / "b", logits, tokens, stack(H200, device="NVIDIA H100 80GB HBM3"))
    # Same SM count, same architecture: FA2 splits identically, the arithmetic is the same.
    assert capture_differences(a, b, kv_heads=4) == []


def test_warning_fires_for_captures_differing_only_in_attention_backend(tmp_path, tokens_and_logits):
    tokens, logits = tokens_and_logits
    a = make_capture(tmp_path / "a", logits, tokens, stack(CPU))
    b = make_capture(tmp_path / "b", logits, tokens, stack(CPU, attention_backend="eager"))
    diffs = capture_differences(a, b)
    assert len(diffs) == 1 and diffs[0].coordinate == "attention_backend"
    assert diffs[0].reference == "sdpa" and diffs[0].candidate == "eager"
    assert diffs[0].message.endswith(NOT_A_FIXED_TARGET)


def test_missing_stack_is_reported(tmp_path, tokens_and_logits):
    tokens, logits = tokens_and_logits
    a = make_capture(tmp_path / "a", logits, tokens, stack(CPU))
    b = make_capture(tmp_path / "b", logits, tokens, None)
    diffs = capture_differences(a, b)
    assert [d.coordinate for d in diffs] == ["stack"]


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("engine", "llama.cpp"),
        ("engine_version", "5.1.0"),
        ("engine_build", "deadbee"),
        ("tensor_parallel", 2),
        ("weights_dtype", "f32"),
        ("compute_dtype", "f32"),
        ("kv_cache_dtype", "q8_0"),
        ("prefill_chunk", 256),
        ("n_ubatch", 128),
        ("device", "Intel Xeon 8480"),
        ("backend", "metal"),
    ],
)
def test_each_arithmetic_coordinate_is_named(field, value):
    ref = {**CPU, "engine_build": "abc1234", "compute_dtype": "bf16", "n_ubatch": 512}
    cand = {**ref, field: value}
    if field == "backend":
        cand["chip_family"] = "M2"
    diffs = stack_differences(ref, cand)
    assert [d.coordinate for d in diffs] == [field]
    assert field in diffs[0].message and NOT_A_FIXED_TARGET in diffs[0].message


def test_threads_and_os_do_not_change_arithmetic():
    assert stack_differences(CPU, {**CPU, "threads": 16, "os": "Linux 6.1"}) == []
    # Spelling of dtypes is normalised.
    assert stack_differences(CPU, {**CPU, "weights_dtype": "bfloat16"}) == []


def test_quantization_under_test_can_be_ignored():
    cand = {**CPU, "weights_dtype": "q4_k_m"}
    assert stack_differences(CPU, cand, ignore=QUANTIZATION_UNDER_TEST) == []


def test_sm_difference_without_lengths_is_reported_conservatively():
    diffs = stack_differences(H200, {**H200, "device": "NVIDIA H100 PCIe", "sm_count": 114})
    assert [d.coordinate for d in diffs] == ["sm_count"]
    assert "KV heads" in diffs[0].message


def test_sm_difference_that_never_changes_splits_is_not_reported():
    # 64 KV heads fill 80% of both GPUs' slots: FA2 uses 1 split on each, whatever the length.
    b200 = {**H200, "device": "NVIDIA B200", "sm_count": 148}
    assert stack_differences(H200, b200, lengths=range(1, 5000), kv_heads=128) == []
    assert split_mismatches(132, 148, [27525], 4) == [(27525, 54, 62)]


def test_decode_lengths_are_chunk_local():
    assert decode_lengths([0, 1, 511, 512, 513], stride=512) == [1, 2, 512]


def _card_block(**cand_runtime_changes):
    rt = {**H200}
    return {
        "context": {"n_ctx": 4096},
        "reference": {"runtime": rt},
        "candidates": [
            {"name": "Q4_K_M", "runtime": {**rt, "weights_dtype": "q4_k_m"}},
            {"name": "Q8_0", "runtime": {**rt, "weights_dtype": "q8_0", **cand_runtime_changes}},
        ],
    }


def test_card_check_ignores_the_quantization_under_test():
    assert check_cross_stack(_card_block()) == []


def test_card_check_points_at_the_differing_runtime_field():
    found = check_cross_stack(_card_block(attention_backend="flashinfer", tensor_parallel=2))
    assert [p for p, _ in found] == [
        "/kld_evaluation/candidates/1/runtime/attention_backend",
        "/kld_evaluation/candidates/1/runtime/tensor_parallel",
    ]
    assert all("'Q8_0'" in m and NOT_A_FIXED_TARGET in m for _, m in found)


def test_card_check_derives_sm_count_from_the_device_name():
    block = _card_block(device="NVIDIA B200")
    del block["candidates"][1]["runtime"]["sm_count"]
    found = check_cross_stack(block)
    assert [p for p, _ in found] == ["/kld_evaluation/candidates/1/runtime/device"]
    assert "148" in found[0][1]


@pytest.mark.parametrize("block", [None, [], {"reference": "x"}, {"reference": {"runtime": {}}, "candidates": "x"},
                                   {"reference": {"runtime": H200}, "candidates": [3, {"runtime": None}]}])
def test_card_check_skips_malformed_blocks(block):
    assert check_cross_stack(block) == []


def _acknowledging(block: dict, *coordinates: str) -> dict:
    block["candidates"][1]["cross_stack"] = {"coordinates": list(coordinates), "reason": "the deployment stack"}
    return block


def test_card_check_is_quiet_for_exactly_the_acknowledged_coordinates():
    block = _card_block(attention_backend="flashinfer", tensor_parallel=2)
    assert check_cross_stack(_acknowledging(block, "attention_backend", "tensor_parallel")) == []
    # an unacknowledged difference still warns
    found = check_cross_stack(_acknowledging(block, "attention_backend"))
    assert [p for p, _ in found] == ["/kld_evaluation/candidates/1/runtime/tensor_parallel"]
    # the acknowledgement belongs to its candidate: the first one's differences are not covered by it
    block["candidates"][0]["runtime"]["kv_cache_dtype"] = "f16"
    assert [p for p, _ in check_cross_stack(block)] == ["/kld_evaluation/candidates/0/runtime/kv_cache_dtype",
                                                        "/kld_evaluation/candidates/1/runtime/tensor_parallel"]


@pytest.mark.parametrize(("coordinate", "why"), [
    ("tensor_parallel", "does not differ from the reference's there"),
    ("weights_dtype", "quantization under test"),
    ("attn_backend", "not a coordinate KLD207 compares"),
    ("engine_version", "KLD207 reports engine, which covers it"),
])
def test_card_check_reports_an_acknowledged_difference_that_does_not_exist(coordinate, why):
    block = _acknowledging(_card_block(attention_backend="flashinfer", engine="sglang", engine_version="0.4"),
                           "engine", "attention_backend", coordinate)
    found = check_cross_stack(block)
    assert [p for p, _ in found] == ["/kld_evaluation/candidates/1/cross_stack/coordinates/2"]
    assert f"acknowledges a stack difference in {coordinate}" in found[0][1] and why in found[0][1]
    assert "the differences found: attention_backend, engine" in found[0][1]


def test_an_acknowledged_card_lints_clean_and_says_so_when_rendered(tmp_path):
    import yaml
    from helpers_lint import EXAMPLES

    from kldcard.lint.runner import lint_card
    from kldcard.render.section import render_section
    from kldcard.schema import KldEvaluation

    text = (EXAMPLES / "KLD207-cross-stack-comparison.md").read_text(encoding="utf-8")
    ack = ("    cross_stack:\n      coordinates: [engine, attention_backend]\n"
           "      reason: llama.cpp is what this file is for\n")
    acked = text.replace("    calibration:\n      dataset: bartowski", ack + "    calibration:\n      dataset: bartowski", 1)
    card = tmp_path / "README.md"
    card.write_text(acked, encoding="utf-8")
    assert lint_card(card).findings == []
    card.write_text(acked.replace("[engine, attention_backend]", "[engine]"), encoding="utf-8")
    findings = lint_card(card).findings
    assert [f.rule_id for f in findings] == ["KLD207"] and "attention_backend differs" in findings[0].message

    ev = KldEvaluation.model_validate(yaml.safe_load(acked.split("---\n")[1])["kld_evaluation"])
    section = render_section(ev)
    assert ("Q4_K_M was measured on llama.cpp against a transformers reference, on purpose (llama.cpp is what this "
            "file is for; engine transformers vs llama.cpp, attention_backend sdpa vs flash-attn on): its KLD "
            "includes the stack difference") in " ".join(section.split())
    assert "measured across stacks on purpose (engine, attention_backend)" in section
    assert "ran on another stack than the reference, so" not in section  # the unacknowledged bullet
    # the Hub shows model-index without the section: the headline metric says it there too
    from kldcard.card.model_index import candidate_result

    headline = candidate_result(ev, ev.candidates[0])["metrics"][0]
    assert "on another stack (transformers reference, llama.cpp candidate)" in headline["name"]
    assert headline["args"]["cross_stack"] == "engine, attention_backend"


def test_rule_definition_is_complete():
    assert set(CROSS_STACK_RULE) == {"code", "name", "severity", "summary", "what", "why", "example", "fix"}
    assert CROSS_STACK_RULE["name"] == "cross-stack-comparison"
    assert CROSS_STACK_RULE["code"].startswith("KLD2")


def test_kv_heads_recorded_in_the_model_section_enable_split_prediction(tmp_path, tokens_and_logits):
    from kldcard.capture.manifest import CaptureMeta
    from kldcard.capture.store import create_capture_from_arrays

    _, logits = tokens_and_logits
    tokens = np.resize(tokens_and_logits[0], 27_600)
    positions = np.arange(27_500, 27_500 + N, dtype=np.int64)
    caps = []
    for name, fp in (("h200", stack(H200)), ("b200", stack(H200, device="NVIDIA B200", sm_count=148))):
        meta = CaptureMeta(model={"name": "tiny", "kv_heads": 4}, stack=fp)
        caps.append(create_capture_from_arrays(tmp_path / name, logits, positions, tokens, meta))
    (diff,) = capture_differences(*caps)
    assert diff.coordinate == "sm_count" and "54 vs 62 groups" in diff.message


def test_compare_result_carries_the_portability_warning(tmp_path):
    """Two captures that differ only in a recorded coordinate: compare says so, by name."""
    import numpy as np

    from kldcard.capture.manifest import CaptureMeta
    from kldcard.capture.store import create_capture_from_arrays
    from kldcard.compare.run import compare
    from kldcard.schema import StackFingerprint

    def fp(attn: str) -> StackFingerprint:
        return StackFingerprint(engine="transformers", engine_version="5.24.0", backend="cpu", device="AMD EPYC",
                                attention_backend=attn, weights_dtype="bf16", kv_cache_dtype="bf16",
                                prefill_chunk=512, threads=2, os="Linux")

    rng = np.random.default_rng(1)
    logits = rng.normal(size=(6, 32)).astype(np.float32)
    ids = rng.integers(0, 32, size=7).astype(np.int32)
    pos = np.arange(6, dtype=np.int64)
    caps = []
    for name, attn in (("ref", "sdpa"), ("cand", "eager")):
        meta = CaptureMeta(model={"name": name}, text={"name": "t"}, stack=fp(attn))
        caps.append(create_capture_from_arrays(tmp_path / name, logits, pos, ids, meta))
    result = compare(tmp_path / "ref", tmp_path / "cand", bootstrap=0)
    assert len(result.portability) == 1 and "attention_backend" in result.portability[0]
    assert any(line.startswith("warning:") and "attention_backend" in line for line in result.summary_lines())
    same = compare(tmp_path / "ref", tmp_path / "ref", bootstrap=0)
    assert same.portability == []
