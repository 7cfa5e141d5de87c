"""The same-quantity rules on readings (kldcard.lint.quantity / quantity_verdict): each row's compatible
spellings, differences and unknowns, as a reader would fill them from prose."""

from __future__ import annotations

import pytest

from kldcard.lint.quantity import RULES, rules_markdown
from kldcard.lint.quantity_verdict import compare_readings
from kldcard.lint.reading import DisclosureReading

FULL = {1: {"repo": "Qwen/Qwen3-8B", "dtype": "BF16"}, 2: {"engine": "llama.cpp", "version": "b4500"},
        3: {"name": "wikitext-2 test"}, 4: {"dataset": "calibration_datav3"}, 5: {"n_ctx": 512},
        6: {"scheme": "all"}, 7: {"direction": "forward", "unit": "nats"}, 8: {"scheme": "full"},
        9: {"statistic": "mean", "uncertainty": "window-bootstrap"}}


def _readings(**changes) -> dict[int, DisclosureReading]:
    out = {}
    for d, value in FULL.items():
        v = changes.get(f"d{d}", value)
        out[d] = DisclosureReading(d, "missing", {}) if v is None else DisclosureReading(d, "stated", v)
    return out


def _rows(a: dict, b: dict) -> tuple[dict[str, str], str]:
    v = compare_readings(["A", "B"], [a, b])
    return {r.rule.row: r.verdict for r in v.rows}, v.sentence


@pytest.mark.parametrize(("change", "row", "verdict"), [
    ({"d1": {"repo": "hf://qwen/qwen3-8b", "dtype": "bfloat16"}}, "reference", "compatible"),
    ({"d1": {"repo": "Qwen/Qwen3-8B", "dtype": "Q8_0"}}, "reference", "differs"),
    ({"d2": {"engine": "llama-perplexity", "version": "b4500"}}, "runtime", "compatible"),
    ({"d3": {"name": "wiki.test.raw"}}, "text", "compatible"),
    ({"d3": {"name": "c4 validation"}}, "text", "differs"),
    ({"d7": {"direction": "forward", "unit": "bits"}}, "direction", "compatible"),
    ({"d7": {"direction": "reverse", "unit": "nats"}}, "direction", "differs"),
    ({"d7": {"direction": "both"}}, "direction", "unknown"),
    ({"d7": None}, "direction", "unknown"),
    ({"d6": {"scheme": "llama-perplexity"}}, "positions", "differs"),
    ({"d9": {"statistic": "token-mean", "uncertainty": "window-bootstrap"}}, "statistic", "compatible"),
    ({"d9": {"statistic": "p99.9+mean", "uncertainty": "window-bootstrap"}}, "statistic", "unknown"),
    ({"d8": {"scheme": "top-k", "k": 20}}, "truncation", "differs"),
])
def test_row_verdicts_on_readings(change, row, verdict):
    rows, _ = _rows(_readings(), _readings(**change))
    assert rows.pop(row) == verdict
    assert set(rows.values()) <= {"same"}


def test_second_half_and_llama_perplexity_are_the_same_positions():
    rows, _ = _rows(_readings(d6={"scheme": "second-half"}), _readings(d6={"scheme": "llama-perplexity"}))
    assert rows["positions"] == "compatible"


def test_words_of_the_overall_verdict():
    _, sentence = _rows(_readings(), _readings(d1={"repo": "Qwen/Qwen3-8B", "dtype": "Q8_0"}, d5={"n_ctx": 8192}))
    assert sentence == "not comparable: different reference (BF16 vs Q8_0) and context (512 vs 8192)"
    _, sentence = _rows(_readings(), _readings(d3=None, d6=None))
    assert sentence == "cannot tell: B does not say which text or which positions"
    _, sentence = _rows(_readings(), _readings(d2={"engine": "exllamav3", "version": "0.0.4"}))
    assert sentence.startswith("comparable, with caveats: runtime differs (llama.cpp b4500 vs exllamav3 0.0.4): "
                               "a cross-stack difference is part of each number")


def test_every_rule_has_a_reason_and_the_docs_list_them():
    doc = rules_markdown()
    for r in RULES:
        assert len(r.reason) > 80 and r.asks
        assert f"## {r.label} (D{r.disclosure})" in doc and r.reason in doc
    assert {r.kind for r in RULES} == {"must-equal", "caveat", "free"}
