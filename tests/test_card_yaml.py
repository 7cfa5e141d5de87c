"""The one front-matter reader (kldcard.card.yaml.compose_and_load): libyaml's speed, PyYAML's answers.

libyaml (CSafeLoader) reads a card's front matter about ten times faster than PyYAML's pure-Python
loader, which took 9 s on a 0.9 MB MTEB-style model-index. The linter's line and column numbers come
from the composed nodes' marks and its checks from the constructed data, so both must equal what the
pure-Python loader gives: on every card under tests/data and examples/, and on generated YAML.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from kldcard.card.document import YAML_BLOCK, parse_card
from kldcard.card.yaml import compose_and_load
from kldcard.errors import InputError

ROOT = Path(__file__).resolve().parent.parent
CARDS = sorted({*ROOT.joinpath("tests", "data").rglob("*.md"), *ROOT.joinpath("examples").rglob("*.md")})


def _tree(node: yaml.Node | None) -> list[tuple]:
    """Every node's kind, tag, scalar value and start/end marks, depth first."""
    out: list[tuple] = []
    stack = [node] if node is not None else []
    while stack:
        n = stack.pop()
        marks = (n.start_mark.index, n.start_mark.line, n.start_mark.column, n.end_mark.index)
        out.append((type(n).__name__, n.tag, n.value if isinstance(n, yaml.ScalarNode) else None, marks))
        if isinstance(n, yaml.MappingNode):
            stack.extend(x for kv in reversed(n.value) for x in reversed(kv))
        elif isinstance(n, yaml.SequenceNode):
            stack.extend(reversed(n.value))
    return out


def _pure(text: str) -> tuple[yaml.Node | None, object]:
    return yaml.compose(text, Loader=yaml.SafeLoader), yaml.safe_load(text)


def test_libyaml_is_used():
    assert yaml.__with_libyaml__, "PyYAML without libyaml: front matter is read ten times slower"


def test_every_bundled_card_reads_the_same_as_with_the_pure_python_loader():
    front_matters = 0
    for path in CARDS:
        text = path.read_bytes().decode("utf-8-sig", errors="replace")
        m = YAML_BLOCK.search(text)
        if m is None:
            continue
        try:
            expected = _pure(m.group(2))
        except yaml.YAMLError:
            continue  # the bad-input cards: their messages are checked in test_lint_bad_input
        node, data = compose_and_load(m.group(2))
        assert data == expected[1], path
        assert _tree(node) == _tree(expected[0]), path
        front_matters += 1
    assert front_matters >= 50


_SCALARS = st.one_of(
    st.none(), st.booleans(), st.integers(), st.floats(allow_nan=False),
    st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12),
    st.sampled_from(["1e-3", "1.0e-03", "0x1F", "yes", "~", "2026-12-01", "é漢字", "🙂 emoji", "a: b", "- x"]),
)
_VALUES = st.recursive(
    _SCALARS, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=6), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=300, deadline=None)
@given(_VALUES, st.booleans())
def test_generated_yaml_reads_the_same(value, flow):
    text = yaml.safe_dump({"kld_evaluation": value}, default_flow_style=flow, allow_unicode=True)
    node, data = compose_and_load(text)
    expected = _pure(text)
    assert data == expected[1]
    assert _tree(node) == _tree(expected[0])


@settings(max_examples=3000, deadline=None)
@given(st.text(alphabet=" \t\n\r:-[]{}#&*!|>'\"%@`,?.\\abc1é\x85\u2028\ufeff", max_size=60))
def test_broken_yaml_fails_with_the_pure_python_message(text):
    try:
        expected = _pure(text)
    except yaml.YAMLError as exc:
        with pytest.raises(yaml.YAMLError) as got:
            compose_and_load(text)
        if got.value.__class__ is exc.__class__:  # libyaml may accept what PyYAML refuses; then only
            assert str(got.value) == str(exc)  # the pure loader's error is ever shown
        return
    except RecursionError:
        return
    try:
        node, data = compose_and_load(text)
    except yaml.YAMLError:
        pytest.fail(f"libyaml and the fallback both refused text PyYAML reads: {text!r}")
    assert data == expected[1]


def _mteb_card(n: int) -> bytes:
    results = [
        {"task": {"type": "Classification"},
         "dataset": {"type": f"mteb/task{i}", "name": f"MTEB Task{i}", "config": "en", "split": "test",
                     "revision": "0123456789abcdef0123456789abcdef01234567"},
         "metrics": [{"type": "accuracy", "value": 0.5 + i * 1e-5}, {"type": "f1", "value": 0.4}]}
        for i in range(n)
    ]
    fm = yaml.safe_dump({"license": "mit", "model-index": [{"name": "m", "results": results}]})
    return f"---\n{fm}---\n# Card\n\nNo KLD here.\n".encode()


def test_large_model_index_front_matter_reads_in_linear_time():
    """MTEB-style cards carry thousands of model-index results in their front matter."""
    seconds = []
    for n in (400, 1600):
        data = _mteb_card(n)
        runs = []
        for _ in range(3):  # the best of three: the machine is shared
            t = time.perf_counter()
            card = parse_card(data, "README.md")
            runs.append(time.perf_counter() - t)
        seconds.append(min(runs))
        assert len(card.metadata["model-index"][0]["results"]) == n
        at = card.text.index("mteb/task1\n")
        line_start = card.text.rindex("\n", 0, at) + 1
        assert card.locate("/model-index/0/results/1/dataset/type") == (card.text[:at].count("\n") + 1, at - line_start + 1)
    assert seconds[1] / seconds[0] < 8, seconds


def test_a_yaml_error_still_names_line_and_column():
    with pytest.raises(InputError, match=r"README\.md:3:11: malformed YAML front matter: expected ',' or '\]'"):
        parse_card(b"---\nlicense: mit\nkey: [1, 2\n---\n# x\n", "README.md")
