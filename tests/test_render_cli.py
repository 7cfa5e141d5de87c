"""``kldcard render`` end to end through the CLI entry point (a kld_evaluation file as input)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import yaml
from helpers_render import evaluation_dict, make_evaluation

from kldcard.cli.main import main
from kldcard.lint.runner import lint_card
from kldcard.render.plot import PlotSeries, plot_per_position

DATA = Path(__file__).parent / "data" / "render"


@pytest.fixture
def evaluation_file(tmp_path: Path) -> Path:
    p = tmp_path / "evaluation.yaml"
    p.write_text(yaml.safe_dump({"kld_evaluation": evaluation_dict()}, sort_keys=False))
    return p


def test_without_card_prints_the_marked_section(evaluation_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["render", str(evaluation_file)]) == 0
    out = capsys.readouterr().out
    assert out.startswith("<!-- kldcard:start schema=1 -->\n### KL divergence against the reference\n")
    assert out.endswith("<!-- kldcard:end -->\n")


def test_write_then_check_then_idempotent(evaluation_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    card = tmp_path / "README.md"
    card.write_bytes((DATA / "comments_anchors.md").read_bytes().replace(b"\n", b"\r\n"))
    assert main(["render", str(evaluation_file), "--card", str(card), "--check"]) == 1
    assert "stale" in capsys.readouterr().out
    assert main(["render", str(evaluation_file), "--card", str(card), "--write"]) == 0
    first = card.read_bytes()
    mtime = card.stat().st_mtime_ns
    assert main(["render", str(evaluation_file), "--card", str(card), "--write"]) == 0
    assert "up to date, not touched" in capsys.readouterr().out
    assert card.read_bytes() == first and card.stat().st_mtime_ns == mtime
    assert main(["render", str(evaluation_file), "--card", str(card), "--check"]) == 0
    assert lint_card(card).findings == []
    assert main(["lint", str(card)]) == 0


def test_dry_run_shows_a_diff_and_writes_nothing(evaluation_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    card = tmp_path / "README.md"
    card.write_bytes((DATA / "existing_region.md").read_bytes())
    assert main(["render", str(evaluation_file), "--card", str(card)]) == 0
    out = capsys.readouterr().out
    assert "-old section" in out and "+### KL divergence against the reference" in out
    assert card.read_bytes() == (DATA / "existing_region.md").read_bytes()


def test_missing_card_is_created_on_write(evaluation_file: Path, tmp_path: Path) -> None:
    card = tmp_path / "new" / "README.md"
    card.parent.mkdir()
    assert main(["render", str(evaluation_file), "--card", str(card), "--write", "--model-name", "tiny-GGUF"]) == 0
    text = card.read_text()
    assert text.startswith("---\nbase_model: example/tiny-qwen3\n") and "- name: tiny-GGUF\n" in text
    assert lint_card(card).findings == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--write"], "--write and --check need --card"),
        (["--card", "{dup}", "--write"], "markers must appear once each"),
    ],
)
def test_bad_input_is_one_line_and_exit_2(
    evaluation_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], message: str
) -> None:
    dup = tmp_path / "dup.md"
    dup.write_bytes((DATA / "duplicate_markers.md").read_bytes())
    args = [a.replace("{dup}", str(dup)) for a in args]
    assert main(["render", str(evaluation_file), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and err.count("\n") == 1 and "Traceback" not in err
    assert dup.read_bytes() == (DATA / "duplicate_markers.md").read_bytes()


def test_incomplete_evaluation_file_names_what_is_missing(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    d = evaluation_dict()
    del d["reference"]["revision"]
    p = tmp_path / "ev.json"
    p.write_text(json.dumps(d))
    assert main(["render", str(p)]) == 2
    assert "reference" in capsys.readouterr().err


def test_user_template_option(evaluation_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tpl = tmp_path / "t.md.j2"
    tpl.write_text("Mean KLD {{ candidates[0].mean }} nats, forward KL(P_ref ‖ P_cand).\n")
    assert main(["render", str(evaluation_file), "--template", str(tpl)]) == 0
    assert "Mean KLD 2.130e-04 [2.045e-04, 2.215e-04] nats" in capsys.readouterr().out
    tpl.write_text("{{ nope }}")
    assert main(["render", str(evaluation_file), "--template", str(tpl)]) == 2
    assert "'nope' is undefined" in capsys.readouterr().err


def test_plot_is_written_deterministically(tmp_path: Path) -> None:
    rng = np.random.default_rng(0)
    pos = np.arange(1, 300)
    kld = rng.exponential(0.02, size=pos.size)
    kld[5] = 0.0  # identical distributions at one position: drawn at the floor, not an error
    agree = kld < 0.06
    series = [PlotSeries("tiny-Q4_0", pos, kld, agree)]
    a = plot_per_position(tmp_path / "a.png", series)
    b = plot_per_position(tmp_path / "b.png", series)
    assert a.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert a.read_bytes() == b.read_bytes()
    assert not list(tmp_path.glob(".*.png"))  # no temporary left behind


def test_section_references_the_plot(tmp_path: Path) -> None:
    from kldcard.render.section import render_section

    text = render_section(make_evaluation(), plot="kld_per_position.png")
    assert "](kld_per_position.png)" in text


def test_card_in_a_missing_directory_is_one_line(evaluation_file: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    card = tmp_path / "nope" / "README.md"
    assert main(["render", str(evaluation_file), "--card", str(card), "--write"]) == 2
    assert "no such directory" in capsys.readouterr().err
    assert not card.parent.exists()


def test_malformed_evaluation_yaml_names_its_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "evaluation.yaml"
    bad.write_text("kld_evaluation:\n  reference:\n    model: [x\n  candidates: []\n", encoding="utf-8")
    assert main(["render", str(bad)]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"kldcard: error: {bad}:4:") and "malformed result" in err and err.count("\n") == 1
