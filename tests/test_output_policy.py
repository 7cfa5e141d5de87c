"""The one output policy (kldcard.files): an output never destroys an input, only regular files are
replaced, a symlinked card stays a link, modes and BOMs are kept, temp files of killed runs go.

Each test is a case of issue 27 ("Files destroyed", "Leftovers and hygiene") and fails on the code
before it: the atomic writer replaced whatever was at the target.
"""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from helpers_lint import COMPLIANT, run_cli
from helpers_render import evaluation_dict

from kldcard.files import BOM, atomic_path, write_atomic

FAILING_CARD = COMPLIANT.parent / "KLD004-metric-value-not-float.md"  # has a safe --fix


def _one_error_line(err: str, fragment: str) -> None:
    lines = [ln for ln in err.splitlines() if ln.strip()]
    assert len(lines) == 1 and lines[0].startswith("kldcard: error:") and fragment in lines[0], err
    assert "Traceback" not in err


@pytest.fixture
def card(tmp_path: Path) -> Path:
    p = tmp_path / "README.md"
    p.write_bytes(COMPLIANT.read_bytes())
    return p


# -- an output that is an input ---------------------------------------------------------------


def test_lint_output_file_that_is_the_card_is_refused(card: Path, capsys) -> None:
    before = card.read_bytes()
    rc, _, err = run_cli(capsys, "lint", card, "--output-file", card)
    assert rc == 2
    _one_error_line(err, "is also an input of this run")
    assert card.read_bytes() == before


def test_lint_write_baseline_over_the_card_is_refused(card: Path, capsys) -> None:
    before = card.read_bytes()
    rc, _, err = run_cli(capsys, "lint", card, "--write-baseline", card)
    assert rc == 2
    _one_error_line(err, "--write-baseline")
    assert card.read_bytes() == before


def test_an_input_reached_through_a_hard_link_or_a_symlink_is_refused(card: Path, tmp_path: Path, capsys) -> None:
    hard, soft = tmp_path / "hard.txt", tmp_path / "soft.txt"
    os.link(card, hard)
    soft.symlink_to(card)
    before = card.read_bytes()
    for out in (hard, soft):
        rc, _, err = run_cli(capsys, "lint", card, "--output-file", out)
        assert rc == 2
        _one_error_line(err, "is also an input of this run")
    assert card.read_bytes() == before and soft.is_symlink()


def test_lint_output_file_over_the_config_is_refused(card: Path, tmp_path: Path, capsys) -> None:
    cfg = tmp_path / "pyproject.toml"
    cfg.write_text("[tool.kldcard]\nignore = []\n", encoding="utf-8")
    rc, _, err = run_cli(capsys, "lint", card, "--config", cfg, "--output-file", cfg)
    assert rc == 2
    _one_error_line(err, "pyproject.toml")
    assert cfg.read_text(encoding="utf-8") == "[tool.kldcard]\nignore = []\n"


def test_compare_output_into_the_reference_capture_is_refused(tmp_path: Path, capsys) -> None:
    ref, cand = tmp_path / "ref", tmp_path / "q8"
    for d in (ref, cand):
        d.mkdir()
        (d / "manifest.json").write_text('{"format": "kldcard-capture"}\n', encoding="utf-8")
    rc, _, err = run_cli(capsys, "compare", ref, cand, "-o", ref / "manifest.json")
    assert rc == 2
    _one_error_line(err, "is also an input of this run")
    assert (ref / "manifest.json").read_text(encoding="utf-8") == '{"format": "kldcard-capture"}\n'


def _project(tmp_path: Path, **extra) -> Path:
    text = tmp_path / "text.txt"
    text.write_text("the evaluation text\n", encoding="utf-8")
    data = {"reference": {"engine": "llama.cpp", "model": "ref.gguf"},
            "candidates": [{"name": "q8", "engine": "llama.cpp", "model": "q8.gguf"}],
            "text": {"path": "text.txt", "name": "a text", "source": {"dataset": "owner/data", "split": "test"}},
            "disclosures": {"reference": {"model": "owner/model"}, "calibration": {"none": True}}, **extra}
    p = tmp_path / "evaluate.yaml"
    p.write_text(yaml.safe_dump(data, sort_keys=False), encoding="utf-8")
    return p


@pytest.mark.parametrize("target", ["text.txt", "evaluate.yaml"])
def test_evaluate_card_that_is_an_input_is_refused_before_anything_runs(tmp_path: Path, target: str, capsys) -> None:
    project = _project(tmp_path)
    before = {p.name: p.read_bytes() for p in tmp_path.iterdir()}
    rc, _, err = run_cli(capsys, "evaluate", project, "--card", tmp_path / target)
    assert rc == 2
    _one_error_line(err, "is also an input of this run")
    assert {p.name: p.read_bytes() for p in tmp_path.iterdir()} == before


def test_evaluate_bad_hub_files_spec_is_refused_before_the_card_is_written(tmp_path: Path, capsys) -> None:
    pytest.importorskip("huggingface_hub")  # the hf extra; the spec is checked where it is used
    project = _project(tmp_path, card="README.md")
    for spec in ("no-slash:task", "owner/other:task"):
        rc, _, err = run_cli(capsys, "evaluate", project, "--hub-files", spec)
        assert rc == 2
        _one_error_line(err, "--hub-files")
    assert not (tmp_path / "README.md").exists() and not (tmp_path / ".kldcard-cache").exists()


# -- only regular files; "-" is stdout ----------------------------------------------------------


def test_output_file_dash_is_stdout(card: Path, tmp_path: Path, capsys, monkeypatch) -> None:
    monkeypatch.chdir(tmp_path)
    rc, out, _ = run_cli(capsys, "lint", card, "--output-file", "-")
    assert rc == 0 and "All checks passed" in out
    assert not (tmp_path / "-").exists()


def test_fifo_and_device_targets_are_refused_not_replaced(card: Path, tmp_path: Path, capsys) -> None:
    fifo = tmp_path / "out.fifo"
    os.mkfifo(fifo)
    for target, kind in ((fifo, "named pipe"), (Path("/dev/null"), "device")):
        rc, _, err = run_cli(capsys, "lint", card, "--output-file", target)
        assert rc == 2
        _one_error_line(err, kind)
    assert stat.S_ISFIFO(fifo.lstat().st_mode) and stat.S_ISCHR(os.stat("/dev/null").st_mode)
    with pytest.raises(Exception, match="regular files only"):  # the writer itself refuses too
        write_atomic(fifo, "x")
    assert stat.S_ISFIFO(fifo.lstat().st_mode)


# -- symlinks, modes, BOM -------------------------------------------------------------------------


def test_lint_fix_on_a_symlinked_card_updates_the_target_and_keeps_the_link(tmp_path: Path, capsys) -> None:
    shared = tmp_path / "shared" / "README.md"
    shared.parent.mkdir()
    shared.write_bytes(FAILING_CARD.read_bytes())
    link = tmp_path / "repo" / "README.md"
    link.parent.mkdir()
    link.symlink_to(shared)
    run_cli(capsys, "lint", link, "--fix")
    assert link.is_symlink() and link.resolve() == shared.resolve()
    assert shared.read_bytes() != FAILING_CARD.read_bytes()  # the real card got the fix


def test_render_write_on_a_symlinked_card_keeps_the_link(tmp_path: Path, capsys) -> None:
    ev = tmp_path / "evaluation.yaml"
    ev.write_text(yaml.safe_dump({"kld_evaluation": evaluation_dict()}, sort_keys=False), encoding="utf-8")
    real = tmp_path / "real.md"
    real.write_text("# A model\n", encoding="utf-8")
    link = tmp_path / "README.md"
    link.symlink_to(real.name)
    rc, _, _ = run_cli(capsys, "render", ev, "--card", link, "--write")
    assert rc == 0 and link.is_symlink()
    assert "kldcard:start" in real.read_text(encoding="utf-8")


def test_a_new_file_follows_the_umask_and_a_replaced_one_keeps_its_mode(tmp_path: Path) -> None:
    old = os.umask(0o022)
    try:
        new = write_atomic(tmp_path / "new.json", "{}\n")
        assert stat.S_IMODE(new.stat().st_mode) == 0o644  # mkstemp's 0600 before
        kept = tmp_path / "kept.json"
        kept.write_text("{}\n")
        kept.chmod(0o640)
        write_atomic(kept, "[]\n")
        assert stat.S_IMODE(kept.stat().st_mode) == 0o640
    finally:
        os.umask(old)


def test_a_card_with_a_bom_keeps_it(tmp_path: Path, capsys) -> None:
    """``evaluate --card`` and ``render --write`` share update_card + write_atomic: the BOM stays,
    and a second run finds the card up to date (it compared BOM-less new bytes with the old ones)."""
    ev = tmp_path / "evaluation.yaml"
    ev.write_text(yaml.safe_dump({"kld_evaluation": evaluation_dict()}, sort_keys=False), encoding="utf-8")
    card = tmp_path / "README.md"
    card.write_bytes(BOM + b"# A model\n")
    assert run_cli(capsys, "render", ev, "--card", card, "--write")[0] == 0
    assert card.read_bytes().startswith(BOM) and b"kldcard:start" in card.read_bytes()
    rc, out, _ = run_cli(capsys, "render", ev, "--card", card, "--write")
    assert rc == 0 and "up to date, not touched" in out


# -- temp files of killed runs ----------------------------------------------------------------------


def _dead_pid() -> int:
    proc = subprocess.Popen([sys.executable, "-c", "pass"])
    proc.wait()
    return proc.pid


def test_a_temp_file_left_by_a_killed_run_is_removed_by_the_next_write(tmp_path: Path) -> None:
    target = tmp_path / "kld_per_position.png"
    stale = tmp_path / f".{target.name}.kldcard-{_dead_pid()}-x1y2z3.png"
    live = tmp_path / f".{target.name}.kldcard-{os.getppid()}-a1b2c3.png"  # a concurrent run: kept
    stale.write_bytes(b"half a png")
    live.write_bytes(b"being written")
    write_atomic(target, b"\x89PNG\r\n\x1a\n")
    assert not stale.exists() and live.exists() and target.read_bytes() == b"\x89PNG\r\n\x1a\n"


def test_kill_9_inside_the_atomic_writer_leaves_nothing_after_a_rerun(tmp_path: Path) -> None:
    target = tmp_path / "plot.png"
    code = (
        "import sys, time\nfrom kldcard.files import atomic_path\n"
        f"with atomic_path({str(target)!r}, suffix='.png') as tmp:\n"
        "    tmp.write_bytes(b'partial'); print('in', flush=True); time.sleep(60)\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True,
                            env={**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parent.parent)})
    assert proc.stdout is not None and proc.stdout.readline().strip() == "in"
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    proc.stdout.close()
    left = [p.name for p in tmp_path.iterdir()]
    assert len(left) == 1 and left[0].startswith(".plot.png.kldcard-")  # what kill -9 leaves...
    with atomic_path(target, suffix=".png") as tmp:  # ...the next run removes
        tmp.write_bytes(b"png")
    assert [p.name for p in tmp_path.iterdir()] == ["plot.png"]


def test_the_card_in_a_model_directory_is_an_output_its_weights_are_inputs(tmp_path: Path) -> None:
    from kldcard.errors import InputError
    from kldcard.evaluate.project import load_project

    model = tmp_path / "my-model"
    model.mkdir()
    for name in ("README.md", "config.json", "model.safetensors"):
        (model / name).write_text("x", encoding="utf-8")
    project = load_project(_project(tmp_path, candidates=[{"name": "bf16", "engine": "transformers", "model": "my-model"}]))
    project.model_copy(update={"card": "my-model/README.md"}).check_outputs()  # the usual model-repo layout
    with pytest.raises(InputError, match="is also an input of this run"):
        project.model_copy(update={"card": "my-model/config.json"}).check_outputs()
