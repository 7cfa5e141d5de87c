"""The rendered section and metadata: content, escaping, number formats, sandboxed templates."""

from __future__ import annotations

import math
from pathlib import Path

import pytest
import yaml
from helpers_render import candidate, evaluation_dict, make_evaluation
from huggingface_hub import ModelCard
from hypothesis import given
from hypothesis import strategies as st

from kldcard.card.numbers import fmt_nats, fmt_percent, md_cell
from kldcard.card.yaml import Num, dump_yaml
from kldcard.errors import InputError
from kldcard.render.metadata import kld_evaluation_yaml, model_index_results
from kldcard.render.section import render_section
from kldcard.render.update import render_card_text
from kldcard.schema import KldEvaluation

EV = make_evaluation()


def test_section_discloses_all_nine_items_and_every_statistic() -> None:
    text = render_section(EV)
    for n, name in enumerate(
        ["Reference checkpoint", "Runtime environment", "Evaluation text", "Calibration data", "Context lengths",
         "Sampled positions", "KL direction", "Vocabulary truncation", "Aggregation"], 1
    ):
        assert f"| {n} | {name} |" in text
    header = next(ln for ln in text.splitlines() if ln.startswith("| Candidate | Quantization"))
    for col in ("Mean KLD", "Median KLD", "p99 KLD", "p99.9 KLD", "Max KLD", "Mean reverse KL", "Mean JS", "Top-1 agreement (%)"):
        assert col in header
    q4 = next(ln for ln in text.splitlines() if ln.startswith("| tiny-qwen3-Q4_0 | q4_0 |"))
    assert "0.021300 [0.020448, 0.022152]" in q4 and "| 93.510 |" in q4
    assert "| tiny-qwen3-Q8_0 | [256, 512) | 256 | 1.917e-04 |" in text
    # The caveats a reader needs.
    assert "KLD is directional" in text and "not\n  smarter" in text
    assert "valid only for the exact stack named" in text and "not comparable" in text
    assert text.endswith("\n") and not text.endswith("\n\n") and "\r" not in text


def test_rendering_is_deterministic() -> None:
    assert render_section(EV) == render_section(make_evaluation())


def test_table_cells_escape_pipes_newlines_and_markers() -> None:
    hostile = "evil | name\n<!-- kldcard:end -->\r\n*bold* `code`"
    ev = make_evaluation(candidates=[candidate(hostile, "q4_0", 0.02, 0.9)])
    text = render_section(ev)
    row = next(ln for ln in text.splitlines() if ln.startswith("| evil"))
    assert row.startswith("| evil \\| name<br>&lt;!-- kldcard:end --&gt;<br>\\*bold\\* \\`code\\` | q4_0 |")
    assert row.count(" | ") == 10  # 11 cells: no cell was split by the pipe in the name
    assert "\n<!-- kldcard:end -->" not in text
    # And the name reaches the YAML only through the safe dumper.
    card = render_card_text("", ev, section=text)
    assert KldEvaluation.model_validate(yaml.safe_load(card.split("---\n")[1])["kld_evaluation"]) == ev


@pytest.mark.parametrize(
    ("value", "cell"), [("a|b", "a\\|b"), ("a\nb", "a<br>b"), ("a\r\nb", "a<br>b"), ("x\\|y", "x\\\\\\|y"), (None, "")]
)
def test_md_cell(value: object, cell: str) -> None:
    assert md_cell(value) == cell


@given(st.floats(min_value=-1e6, max_value=1e6, allow_nan=False, allow_infinity=False))
def test_nats_format_is_a_yaml11_float_with_the_shown_digits(x: float) -> None:
    text = fmt_nats(x)
    loaded = yaml.safe_load(f"v: {text}")["v"]
    assert isinstance(loaded, float) and loaded == float(text)
    assert math.isclose(loaded, x, rel_tol=6e-4, abs_tol=5e-7)
    assert dump_yaml({"v": Num(text)}) == f"v: {text}\n"


def test_non_finite_numbers_are_refused() -> None:
    with pytest.raises(InputError, match="not finite"):
        fmt_nats(float("nan"), "mean KLD")
    assert fmt_percent(0.9999999) == "99.999" and fmt_percent(1.0) == "100.000"
    assert fmt_percent(1e-9) == "0.001" and fmt_percent(0.0) == "0.000" and fmt_percent(0.93514) == "93.514"


def test_huggingface_hub_parses_the_metadata_and_values_are_floats() -> None:
    card = ModelCard(render_card_text("# Tiny\n", EV, section=render_section(EV)))
    results = card.data.eval_results
    assert results, "no eval results parsed"
    kld = [r for r in results if r.metric_type == "kl_divergence"]
    assert [r.metric_value for r in kld] == [0.000213, 0.0213]
    assert all(type(r.metric_value) is float for r in results)
    assert all(r.metric_args["direction"] == "KL(P_ref || P_cand)" for r in kld)
    assert card.data.base_model == EV.reference.model


def test_model_index_numbers_equal_the_body_digits() -> None:
    body = render_section(EV)
    for result in model_index_results(EV):
        for metric in result["metrics"]:
            assert metric["value"].text in body, metric["type"]
            assert "verifyToken" not in metric and "verified" not in metric


def test_kld_evaluation_block_round_trips() -> None:
    text = kld_evaluation_yaml(EV)
    assert KldEvaluation.model_validate(yaml.safe_load(text)["kld_evaluation"]) == EV
    assert "&id" not in text and "*id" not in text


def test_user_template_renders_with_the_same_context(tmp_path: Path) -> None:
    tpl = tmp_path / "mine.md.j2"
    tpl.write_text("## {{ title }}\n{% for c in candidates %}- {{ c.name }}: {{ c.mean }} nats\n{% endfor %}")
    text = render_section(EV, template=tpl)
    assert text == (
        "## KL divergence against the reference\n"
        "- tiny-qwen3-Q8_0: 2.130e-04 [2.045e-04, 2.215e-04] nats\n"
        "- tiny-qwen3-Q4_0: 0.021300 [0.020448, 0.022152] nats\n"
    )


@pytest.mark.parametrize(
    "source",
    [
        "{{ title.__class__.__mro__[1].__subclasses__() }}",
        "{{ candidates.__class__.__base__ }}",
        "{{ cycler.__init__.__globals__ }}",
        "{{ ''.__class__.__mro__ }}",
    ],
)
def test_sandbox_blocks_dunder_access(tmp_path: Path, source: str) -> None:
    tpl = tmp_path / "evil.md.j2"
    tpl.write_text(source)
    with pytest.raises(InputError) as err:
        render_section(EV, template=tpl)
    assert "evil.md.j2" in str(err.value) and "\n" not in str(err.value)
    assert "is unsafe" in str(err.value) and "<class" not in str(err.value)  # refused, nothing leaked


def test_strict_undefined_is_one_clear_line(tmp_path: Path) -> None:
    tpl = tmp_path / "typo.md.j2"
    tpl.write_text("line one\n{{ candidatez }}\n")
    with pytest.raises(InputError) as err:
        render_section(EV, template=tpl)
    assert str(err.value) == f"{tpl}:2: undefined in template: 'candidatez' is undefined"


def test_template_syntax_error_names_the_line(tmp_path: Path) -> None:
    tpl = tmp_path / "broken.md.j2"
    tpl.write_text("ok\n{% for x in %}\n")
    with pytest.raises(InputError, match=r"broken\.md\.j2:2: template syntax error"):
        render_section(EV, template=tpl)


def test_missing_template_is_an_input_error(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="template not found"):
        render_section(EV, template=tmp_path / "nope.j2")


def test_url_and_dataset_sources_both_render() -> None:
    src = {"dataset": "Salesforce/wikitext", "config": "wikitext-2-raw-v1", "split": "test", "revision": "b" * 40}
    d = evaluation_dict()
    d["evaluation_text"]["source"] = src
    ev = KldEvaluation.model_validate(d)
    assert "Salesforce/wikitext, config wikitext-2-raw-v1, split test" in render_section(ev)
    dataset = model_index_results(ev)[0]["dataset"]
    assert dataset == {"type": "Salesforce/wikitext", "name": "tiny test text", "config": "wikitext-2-raw-v1",
                       "split": "test", "revision": "b" * 40}


def test_candidate_on_the_reference_stack_is_named_briefly() -> None:
    from helpers_render import stack

    d = evaluation_dict()
    d["reference"]["runtime"] = stack("llama.cpp", weights="f32")
    d["candidates"][0]["runtime"] = stack("llama.cpp", weights="q8_0")
    d["candidates"][1]["runtime"] = stack("llama.cpp", weights="q4_0", threads=4)
    row = next(ln for ln in render_section(KldEvaluation.model_validate(d)).splitlines() if "| Runtime environment |" in ln)

    assert "tiny-qwen3-Q8_0: the reference's stack, with weights q8_0" in row
    assert "tiny-qwen3-Q4_0: llama.cpp 0.3.16; cpu" in row and "threads 4" in row
    text = render_section(KldEvaluation.model_validate(d))
    assert "- tiny-qwen3-Q4_0 ran on another stack than the reference, so its\n" in text
    assert "tiny-qwen3-Q8_0 ran on another stack" not in text
