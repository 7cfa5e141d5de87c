"""kldcard against the real llama-perplexity, built from the llama.cpp that the pinned llama-cpp-python
vendors (``llama_tools`` fixture): its base file, its ``--kl-divergence`` block, digit for digit.

Scenario (the issue's): a tiny Qwen3 F32 reference, its Q4_0 and Q8_0 quantizations (made by the real
``llama-quantize``), ``-c 128`` and otherwise llama-perplexity's defaults (n_batch 2048 → 16 sequences
per decode; here the text has 4 chunks, so one decode of 4 sequences), a base file written by
llama-perplexity itself. kldcard runs ``capture --protocol llama-perplexity --n-ctx 128`` with no other
flag and ``compare --reference-llama-base``.

Where a last digit could legitimately differ: llama-perplexity adds its per-thread sums in
thread-finish order (``hardware_concurrency() − 1`` workers), kldcard in token order, so the double
sums can differ in their last ulp; and a llama.cpp linked against another libm than glibc ≥ 2.27
(macOS, musl) has another ``expf`` than the one kldcard emulates. Neither shows at the printed
precision here: the tests require every printed line to be identical.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest

from kldcard.cli.main import main
from kldcard.llamacpp.basefile import open_base_file

pytestmark = pytest.mark.engines

N_CTX = 128
WORDS = ("harbour lantern tide stone keeper north signal rope gull fog bell winter ledger oil glass "
         "shutter beacon reef ship mile chart storm quay pilot dawn salt").split()


def _build_text(path: Path) -> Path:
    """561 Qwen3 tokens (4 chunks of 128 and a dropped tail): seeded sentences, runs of spaces, digits, a literal
    special-token string (llama-perplexity reads it as plain text) and a trailing newline (dropped by
    llama-perplexity before tokenizing)."""
    rng = np.random.default_rng(19)
    lines = []
    for i in range(24):
        words = " ".join(rng.choice(WORDS, size=int(rng.integers(5, 11))))
        lines.append(f"{i:03d}. The {words}  ({int(rng.integers(10**5, 10**7))}).")
    lines.insert(12, "<|im_start|>user quoted literally<|im_end|>")
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def _run(cmd: list, **kw) -> subprocess.CompletedProcess:
    proc = subprocess.run([str(c) for c in cmd], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                          timeout=600, **kw)
    assert proc.returncode == 0, f"{Path(str(cmd[0])).name} exit {proc.returncode}: {proc.stderr[-2000:]}"
    return proc


@pytest.fixture(scope="module")
def lp(tiny_qwen3, llama_tools, tmp_path_factory) -> dict:
    d = tmp_path_factory.mktemp("llama-perplexity")
    text = _build_text(d / "text.txt")
    q4_0 = d / "tiny-qwen3-q4_0.gguf"
    _run([llama_tools["llama-quantize"], tiny_qwen3["gguf_f32"], q4_0, "Q4_0"])
    base = d / "base-f32.kld"
    _run([llama_tools["llama-perplexity"], "-m", tiny_qwen3["gguf_f32"], "-f", text, "-c", N_CTX,
          "--kl-divergence-base", base])
    return {"dir": d, "text": text, "base": base, "q4_0": q4_0, "q8_0": tiny_qwen3["gguf_q8_0"],
            "f32": tiny_qwen3["gguf_f32"], "tools": llama_tools}


def _llama_kld(lp: dict, model: Path, base: Path, *extra) -> list[str]:
    """llama-perplexity's stdout block (its first line, the ETA in minutes, is timing)."""
    out = _run([lp["tools"]["llama-perplexity"], "-m", model, "-c", N_CTX, "--kl-divergence",
                "--kl-divergence-base", base, *extra]).stdout
    lines = out.splitlines()
    assert lines[0].endswith("minutes")
    return _trim(lines[1:])


def _trim(lines: list[str]) -> list[str]:
    while lines and not lines[-1].strip():
        lines.pop()
    return lines


def _kldcard(argv: list, capsys) -> str:
    capsys.readouterr()
    assert main([str(a) for a in argv]) == 0
    return capsys.readouterr().out


def _kldcard_block(lp: dict, cand: Path, base: Path, capsys) -> list[str]:
    out = _kldcard(["compare", "--reference-llama-base", base, cand], capsys)
    return _trim([ln for ln in out.splitlines() if not ln.startswith("# kldcard:")])


def _capture(lp: dict, model: Path, name: str, capsys, *extra) -> Path:
    out = lp["dir"] / name
    if not out.exists():
        _kldcard(["capture", "--engine", "llama.cpp", "--model", model, "--text", lp["text"], "--out", out,
                  "--protocol", "llama-perplexity", "--n-ctx", N_CTX, "--no-progress", *extra], capsys)
    return out


def _assert_same_block(ours: list[str], theirs: list[str]) -> None:
    assert len(ours) == len(theirs), "\n".join(ours) + "\n---\n" + "\n".join(theirs)
    diff = [(a, b) for a, b in zip(ours, theirs) if a != b]
    assert not diff, "kldcard vs llama-perplexity:\n" + "\n".join(f"  {a}\n  {b}" for a, b in diff)


def test_protocol_capture_reproduces_the_base_file_byte_for_byte(lp, capsys):
    cap = _capture(lp, lp["f32"], "cap-f32", capsys)
    ours = lp["dir"] / "ours.kld"
    _kldcard(["llama", "capture-to-base", cap, "--out", ours], capsys)
    with open_base_file(lp["base"]) as theirs, open_base_file(ours) as mine:
        assert theirs.n_chunk == mine.n_chunk == 4 and theirs.n_ctx == N_CTX
        assert np.array_equal(np.asarray(theirs.tokens), np.asarray(mine.tokens))
        same = (np.asarray(theirs.raw) == np.asarray(mine.raw)).all(axis=2)
        assert same.all(), f"{int(same.sum())} of {same.size} records identical"
    assert ours.read_bytes() == lp["base"].read_bytes()


@pytest.mark.parametrize("quant", ["q4_0", "q8_0"])
def test_compare_prints_llama_perplexitys_block_digit_for_digit(lp, quant, capsys):
    theirs = _llama_kld(lp, lp[quant], lp["base"])
    assert any(ln.startswith("Mean    KLD:") for ln in theirs)
    cand = _capture(lp, lp[quant], f"cap-{quant}", capsys)
    _assert_same_block(_kldcard_block(lp, cand, lp["base"], capsys), theirs)


def test_llama_perplexity_accepts_kldcards_base_file_and_agrees(lp, capsys):
    """The other direction: a base file kldcard wrote from its capture, read by llama-perplexity."""
    ours = lp["dir"] / "ours.kld"
    if not ours.exists():
        _kldcard(["llama", "capture-to-base", _capture(lp, lp["f32"], "cap-f32", capsys), "--out", ours], capsys)
    cand = _capture(lp, lp["q8_0"], "cap-q8_0", capsys)
    _assert_same_block(_kldcard_block(lp, cand, ours, capsys), _llama_kld(lp, lp["q8_0"], ours))


def test_smaller_batch_gives_several_groups_and_still_matches(lp, capsys):
    """-b 256 at -c 128: 2 sequences per decode, groups of 2 + 2 chunks (a different batch layout, so
    different candidate logits); kldcard's --n-batch 256 follows it."""
    theirs = _llama_kld(lp, lp["q8_0"], lp["base"], "-b", 256)
    cand = _capture(lp, lp["q8_0"], "cap-q8_0-b256", capsys, "--n-batch", 256)
    from kldcard.capture.store import open_capture

    layout = open_capture(cand).manifest.stack.model_dump()["batch_layout"]
    assert layout["sequences_per_decode"] == 2 and layout["n_batch"] == 256
    _assert_same_block(_kldcard_block(lp, cand, lp["base"], capsys), theirs)


def test_batch_smaller_than_the_chunk_streams_and_still_matches(lp, capsys):
    """-b 64 at -c 128: one sequence, two decodes per chunk; kldcard hands each decode's scored rows
    on as they come (memory: one decode's rows, never a chunk's) and the block is still
    llama-perplexity's, digit for digit."""
    theirs = _llama_kld(lp, lp["q8_0"], lp["base"], "-b", 64)
    cand = _capture(lp, lp["q8_0"], "cap-q8_0-b64", capsys, "--n-batch", 64)
    from kldcard.capture.store import open_capture

    layout = open_capture(cand).manifest.stack.model_dump()["batch_layout"]
    assert layout["sequences_per_decode"] == 1 and layout["n_batch"] == 64
    _assert_same_block(_kldcard_block(lp, cand, lp["base"], capsys), theirs)


@pytest.mark.parametrize("streams", ["stdout", "both"])
def test_the_linter_reads_the_real_output_pasted_into_a_card(lp, streams, tmp_path, capsys):
    """What a publisher pastes: the real tool's output (its printed block alone, or both streams as `2>&1` keeps them,
    with the log's timestamps and progress line), fenced under one sentence. The linter finds the block, names the
    tool, reads the printed mean and the -c of the log, and infers only what the tool fixes."""
    from kldcard.card.document import parse_card
    from kldcard.lint.reader import read_card
    from kldcard.llamacpp.log import parse_llama_log

    proc = subprocess.run([str(c) for c in (lp["tools"]["llama-perplexity"], "-m", lp["q8_0"], "-c", N_CTX, "--kl-divergence",
                                            "--kl-divergence-base", lp["base"])],
                          stdout=subprocess.PIPE, stderr=subprocess.STDOUT if streams == "both" else subprocess.DEVNULL,
                          text=True, timeout=600)
    assert proc.returncode == 0
    mean = next(ln for ln in proc.stdout.splitlines() if ln.startswith("Mean    KLD:")).split()[2]
    card = f"# tiny-qwen3 Q8_0\n\nKL divergence of the Q8_0 file against the F32 file:\n\n```\n{proc.stdout}```\n"
    readings = read_card(parse_card(card.encode(), "README.md"))
    assert {r.tool for r in readings} == {"llama-perplexity"}
    block = next(r for r in readings if r.text.startswith("Mean KLD"))
    assert (block.numbers[0].text, block.numbers[0].statistic) == (mean, "mean")
    d = block.disclosures
    assert d[2].value.get("engine") == "llama.cpp" and d[1].value.get("dtype") == "F32"
    assert [d[n].status for n in (7, 8)] == ["inferred", "inferred"] and d[9].status == "stated"
    if streams == "both":  # the log's own line gives the window length and the chunks, so the scored positions
        assert d[5].status == "stated" and d[5].value.get("n_ctx") == N_CTX and d[5].value.get("chunks") == 4
        # what the tool fixes (the second half of each chunk) counted over the log's own chunks and length, the tool's
        # part named as such
        assert d[6].status == "stated" and d[6].value == {"scheme": "second-half", "count": 4 * (N_CTX // 2 - 1)}
        assert set(d[6].inferred_keys) == {"scheme", "count"} and d[6].evidence[-1].tool == "llama-perplexity"
        assert parse_llama_log(proc.stdout).n_ctx == N_CTX  # and kldcard's own log parser reads it too
    else:  # the block alone does not say -c: the tool's default 512 is inferred, not read
        assert d[5].status == "inferred" and d[6].status == "inferred"


def test_build_script_names_a_missing_cmake_in_one_line(tmp_path):
    """Without cmake (and with nothing cached) the build stops at once with one clear line, exit 3."""
    import shutil

    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    for tool in ("bash", "sed", "head", "dirname", "mkdir", "printf", "date", "tar", "c++"):
        found = shutil.which(tool)
        if found:
            (bin_dir / tool).symlink_to(found)
    script = Path(__file__).resolve().parent.parent / "scripts" / "build-llama-tools.sh"
    proc = subprocess.run([str(bin_dir / "bash"), str(script), str(tmp_path / "cache")], capture_output=True,
                          text=True, env={"PATH": str(bin_dir)}, timeout=60)
    assert proc.returncode == 3 and proc.stdout == ""
    assert proc.stderr.strip() == "build-llama-tools: cmake is not installed (needed to build llama-perplexity)"
