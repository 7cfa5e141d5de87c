"""Splicing a rendered evaluation into real card files: only the managed regions change.

Every case checks (a) byte identity outside the managed regions — the new card with kldcard's
regions removed equals the old card with its (stale) regions removed, apart from blank lines and an
inserted ``## Evaluation`` heading — (b) idempotence: a second render is byte-identical, and (c) the
line ending, comments, anchors and unknown keys survive. The region remover below is written
independently of kldcard.card.splice (line rules, not YAML marks), so the test is not circular.
"""

from __future__ import annotations

import difflib
import re
from pathlib import Path

import pytest
import yaml
from helpers_render import make_evaluation

from kldcard.card.document import parse_card
from kldcard.card.regions import is_kld_result
from kldcard.errors import InputError
from kldcard.files import write_atomic
from kldcard.lint.runner import lint_card
from kldcard.render.section import render_section
from kldcard.render.update import render_card_text, update_card
from kldcard.schema import KldEvaluation

DATA = Path(__file__).parent / "data" / "render"
EV = make_evaluation()


def strip_managed(text: str, *, created: set[str]) -> list[str]:
    """Lines of ``text`` without kldcard's regions: the body section, the kld_evaluation key, KLD
    model-index items, and the top-level keys named in ``created`` (ones the render added)."""
    text = re.sub(r"<!-- kldcard:start[^\n]*-->.*?<!-- kldcard:end -->", "", text, flags=re.S)
    lines = re.split(r"(?<=\n)", text.replace("\r\n", "\n"))
    if lines and lines[0] == "---\n":
        end = lines.index("---\n", 1)
        fm, rest = lines[1:end], lines[end:]
        fm = _drop_top_level(fm, {"kld_evaluation", *created})
        fm = _drop_kld_items(fm)
        if not [ln for ln in fm if ln.strip()] and "front_matter" in created:
            lines = rest[1:]
        else:
            lines = ["---\n", *fm, *rest]
    return [ln for ln in lines if ln.strip() and ln.strip() != "## Evaluation"]


def _drop_top_level(lines: list[str], keys: set[str]) -> list[str]:
    out, skipping = [], False
    for ln in lines:
        if ln[:1] not in (" ", "\t", "-", "\n", "#", ""):
            skipping = ln.split(":", 1)[0] in keys
        if not skipping:
            out.append(ln)
    return out


def _drop_kld_items(lines: list[str]) -> list[str]:
    """Remove ``- task:`` items (under results) whose text mentions a kl_divergence metric."""
    out: list[str] = []
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)- task:", lines[i])
        if not m:
            out.append(lines[i])
            i += 1
            continue
        indent = len(m.group(1))
        j = i + 1
        while j < len(lines) and (len(lines[j]) - len(lines[j].lstrip()) > indent or not lines[j].strip()):
            j += 1
        item = lines[i:j]
        if not any("kl_divergence" in ln for ln in item):
            out.extend(item)
        i = j
    return out


def assert_only_managed_changed(old: str, new: str, created: set[str] = frozenset()) -> None:
    a, b = strip_managed(old, created=set(created)), strip_managed(new, created=set(created))
    if a != b:
        diff = "".join(difflib.unified_diff(a, b, "old (regions removed)", "new (regions removed)"))
        raise AssertionError("bytes outside the managed regions changed:\n" + diff)


def render_file(tmp_path: Path, name: str, *, crlf: bool = False, ev: KldEvaluation = EV) -> tuple[bytes, bytes, Path]:
    src = (DATA / name).read_bytes()
    if crlf:
        src = src.replace(b"\n", b"\r\n")
    card = tmp_path / "README.md"
    card.write_bytes(src)
    update = update_card(card, ev)
    write_atomic(card, update.new)
    again = update_card(card, ev)
    assert not again.changed, "a second render changed the card"
    return src, update.new, card


@pytest.mark.parametrize("crlf", [False, True], ids=["lf", "crlf"])
def test_comments_anchors_flow_style_unknown_keys_survive(tmp_path: Path, crlf: bool) -> None:
    old, new, card = render_file(tmp_path, "comments_anchors.md", crlf=crlf)
    old_t, new_t = old.decode(), new.decode()
    assert_only_managed_changed(old_t, new_t, {"base_model", "base_model_relation", "model-index"})
    # The user's front matter is a byte-identical prefix of the new one.
    fm_end = old_t.index("# trailing comment at the end of the front matter")
    assert new_t.startswith(old_t[:fm_end])
    for kept in ("&defaults", "*defaults", "# SPDX id", 'tags: [gguf, quantized, "kld"]', "yes_string: yes"):
        assert kept in new_t
    if crlf:
        assert "\n" not in new_t.replace("\r\n", ""), "a bare LF slipped into a CRLF card"
    # The section lands at the end of the existing ## Evaluation, before ## Environmental Impact.
    assert new_t.index("Existing results text.") < new_t.index("<!-- kldcard:start") < new_t.index("## Environmental Impact")
    assert new_t.count("## Evaluation") == 1
    assert not lint_card(card).findings


def test_existing_region_and_block_are_replaced_in_place(tmp_path: Path) -> None:
    old, new, card = render_file(tmp_path, "existing_region.md", crlf=True)
    old_t, new_t = old.decode(), new.decode()
    assert "old section" not in new_t and "stale: true" not in new_t
    assert_only_managed_changed(old_t, new_t, {"base_model", "base_model_relation", "model-index"})
    # kld_evaluation keeps its place between license and other_key.
    assert new_t.index("license: mit") < new_t.index("kld_evaluation:") < new_t.index("other_key: 1")
    assert new_t.index("Before.") < new_t.index("<!-- kldcard:start") < new_t.index("After.")
    assert parse_card(new).metadata["other_key"] == 1


def test_no_front_matter_gets_one_and_fenced_headings_are_ignored(tmp_path: Path) -> None:
    old, new, card = render_file(tmp_path, "no_front_matter.md")
    old_t, new_t = old.decode(), new.decode()
    assert new_t.startswith("---\n") and new_t.endswith(old_t[old_t.index("## Citation") :])
    assert_only_managed_changed(
        old_t, new_t, {"front_matter", "base_model", "base_model_relation", "model-index"}
    )
    # Not inside the fenced block: a new ## Evaluation right before ## Citation.
    fence_end = new_t.index("must be ignored.\n```")
    assert fence_end < new_t.index("<!-- kldcard:start") < new_t.index("## Citation")
    meta = parse_card(new).metadata
    assert meta["base_model"] == EV.reference.model and meta["base_model_relation"] == "quantized"
    assert not lint_card(card).findings


def test_model_index_keeps_other_results_and_replaces_stale_kld(tmp_path: Path) -> None:
    old, new, card = render_file(tmp_path, "model_index_existing.md")
    old_t, new_t = old.decode(), new.decode()
    assert_only_managed_changed(old_t, new_t)
    assert "value: 1e-3" not in new_t  # the stale hand-written KLD result is gone
    for kept in ("stderr: 0.01   # unknown key, kept byte-identical", "# the entry name stays",
                 "metrics: [{type: accuracy, value: 0.1}]", "pipeline_tag: text-generation"):
        assert kept in new_t
    index = parse_card(new).metadata["model-index"]
    assert len(index) == 1 and index[0]["name"] == "tiny-qwen3-GGUF"
    types = [[m["type"] for m in r["metrics"]] for r in index[0]["results"]]
    assert types[0] == ["accuracy"] and types[-1] == ["accuracy"]
    kld = [t for t in types if "kl_divergence" in t]
    assert len(kld) == len(EV.candidates)
    assert not lint_card(card).findings


def test_bom_is_kept_and_nothing_else_changes_on_rerender(tmp_path: Path) -> None:
    """The output policy keeps a byte-order mark that was there (issue 27: it was dropped)."""
    _, first, card = render_file(tmp_path, "existing_region.md")
    card.write_bytes(b"\xef\xbb\xbf" + first)
    update = update_card(card, EV)
    assert not update.changed and update.new == b"\xef\xbb\xbf" + first


@pytest.mark.parametrize(
    ("name", "needle"),
    [
        ("duplicate_markers.md", "2 kldcard:start and 2 kldcard:end markers (lines 3, 5, 7, 9)"),
        ("unbalanced_markers.md", "kldcard:start marker on line 3 has no matching"),
        ("flow_unknown_evaluation_last.md", "block-style YAML mapping"),
    ],
)
def test_unusable_cards_are_one_line_errors_and_untouched(tmp_path: Path, name: str, needle: str) -> None:
    card = tmp_path / "README.md"
    card.write_bytes((DATA / name).read_bytes())
    with pytest.raises(InputError) as err:
        update_card(card, EV)
    assert needle in str(err.value) and "\n" not in str(err.value)
    assert card.read_bytes() == (DATA / name).read_bytes()


SPELLINGS = [
    "<!-- kldcard:start schema=1 -->|<!-- kldcard:end -->",
    "<!-- kldcard:start -->|<!-- kldcard:end -->",
    "<!--kldcard:start-->|<!--kldcard:end-->",
    "<!--kldcard:start schema=1-->|<!--  kldcard:end  -->",
    "   <!-- kldcard:start schema=1 -->  |<!--\tkldcard:end\t-->",
]


@pytest.mark.parametrize("spelling", SPELLINGS, ids=range(len(SPELLINGS)))
def test_every_marker_spelling_lint_accepts_is_replaced_not_duplicated(tmp_path: Path, spelling: str) -> None:
    """Lint and render read markers through one grammar (kldcard.card.regions): a spelling that lint
    takes for the section is the one render replaces, so the card ends with exactly one section."""
    start, end = spelling.split("|")
    card = tmp_path / "README.md"
    card.write_text(f"# Card\n\nBefore.\n\n{start}\nold section\n{end}\n\nAfter.\n")
    assert not [f for f in lint_card(card).findings if f.rule_id == "KLD005"]
    new = update_card(card, EV).new.decode()
    assert "old section" not in new
    assert len(re.findall(r"kldcard:start", new)) == 1 and len(re.findall(r"kldcard:end", new)) == 1
    assert new.index("Before.") < new.index("kldcard:start") < new.index("After.")


def test_a_marker_sharing_its_line_is_a_lint_finding_and_refused_by_render(tmp_path: Path) -> None:
    card = tmp_path / "README.md"
    text = "# Card\n\nSee <!-- kldcard:start --> here.\nold\n<!-- kldcard:end -->\n"
    card.write_text(text)
    kld005 = [f for f in lint_card(card).findings if f.rule_id == "KLD005"]
    assert len(kld005) == 1 and "own" in kld005[0].message and kld005[0].line == 3
    with pytest.raises(InputError, match="shares its line"):
        update_card(card, EV)
    assert card.read_text() == text


def test_markers_inside_code_fences_are_not_regions(tmp_path: Path) -> None:
    card = tmp_path / "README.md"
    card.write_text("# Docs\n\n~~~\n<!-- kldcard:start schema=1 -->\n~~~\n\n## Evaluation\n\nText.\n")
    new = update_card(card, EV).new.decode()
    assert new.count("<!-- kldcard:start") == 2  # the quoted one and ours
    assert "~~~\n<!-- kldcard:start schema=1 -->\n~~~" in new


def test_changed_results_rewrite_only_the_regions(tmp_path: Path) -> None:
    _, first, card = render_file(tmp_path, "model_index_existing.md")
    data = EV.model_dump()
    data["candidates"][1]["results"]["kld"]["mean"] = 0.0345
    data["candidates"][1]["results"]["kld"]["ci_low"] = 0.033
    data["candidates"][1]["results"]["kld"]["ci_high"] = 0.036
    ev2 = KldEvaluation.model_validate(data)
    second = update_card(card, ev2).new.decode()
    assert "0.034500" in second and "0.021300" not in second
    assert_only_managed_changed(first.decode(), second)
    back = yaml.safe_load(second.split("---\n")[1])
    assert KldEvaluation.model_validate(back["kld_evaluation"]) == ev2


def test_a_splice_that_would_touch_user_keys_is_refused() -> None:
    # PyYAML treats U+2028 as a line break, a line-based splice does not: the guard must notice
    # that key `a` would be lost, and refuse rather than write.
    text = "---\na: x\u2028kld_evaluation: 1\n---\nbody\n"
    with pytest.raises(InputError, match="could not splice this card safely"):
        render_card_text(text, EV, section=render_section(EV))


@pytest.mark.parametrize(
    "front",
    [
        "model-index:\n- name: mine\n  # no results yet\n",
        "model-index:\n- name: mine\n  results:\n  - task:\n      type: text-generation\n    dataset:\n"
        "      type: x/y\n      name: Y\n    metrics:\n    - type: accuracy\n      value: 0.5\n",
        "model-index:\n  - name: mine\n    results:\n      - task:\n          type: text-generation\n"
        "        dataset: {type: x/y, name: Y}\n        metrics:\n          - {type: accuracy, value: 0.5}\n",
    ],
    ids=["no-results-key", "non-kld-results", "indented-sequences"],
)
def test_model_index_shapes(front: str) -> None:
    old = f"---\nlicense: mit\n{front}---\n# Card\n"
    new = render_card_text(old, EV, section=render_section(EV))
    # A missing results key is created by the render (it then holds only KLD results).
    created_key = "  results:\n" if "results:" not in old else ""
    assert_only_managed_changed(old, new.replace(created_key, "", 1), {"base_model", "base_model_relation"})
    assert render_card_text(new, EV, section=render_section(EV)) == new
    index = parse_card(new.encode()).metadata["model-index"]
    assert index[0]["name"] == "mine"
    assert sum(is_kld_result(r) for r in index[0]["results"]) == len(EV.candidates)
