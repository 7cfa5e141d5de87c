"""Bad input: one line on stderr, exit 2, no traceback, the file untouched; property tests."""

from __future__ import annotations

import copy
import gc
import os
import re
import tempfile
import time
from pathlib import Path
from typing import Any

import pytest
import yaml
from helpers_lint import COMPLIANT, front_matter, run_cli, run_subprocess
from helpers_prose import PATHOLOGICAL
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from kldcard.card.document import HUB_YAML_BLOCK, YAML_BLOCK, parse_card
from kldcard.errors import InputError
from kldcard.lint.findings import Finding
from kldcard.lint.prose import check_prose
from kldcard.lint.registry import all_rules
from kldcard.lint.runner import lint_card

BLOCK = front_matter(COMPLIANT)["kld_evaluation"]


def _bad_inputs(tmp: Path) -> dict[str, tuple[Path, str]]:
    """name -> (path, expected fragment of the one-line message)."""
    cases: dict[str, tuple[bytes | None, str]] = {
        "malformed-yaml": (b"---\nlicense: mit\nkld_evaluation: [unclosed\n---\n# x\n", "malformed YAML front matter"),
        "tab-indented-yaml": (b"---\nkld_evaluation:\n\treference: x\n---\n", "malformed YAML front matter"),
        "front-matter-a-list": (b"---\n- a\n- b\n---\n# x\n", "front matter must be a YAML mapping"),
        "front-matter-a-string": (b"---\njust a sentence\n---\n# x\n", "front matter must be a YAML mapping"),
        "non-utf8": (b"---\nlicense: mit\n---\n# caf\xe9 \xff\xfe\n", "not valid UTF-8"),
        "binary": (bytes(range(256)) * 8, "binary file"),
        "utf-16-with-bom": ("---\nlicense: mit\n---\n# Card\n".encode("utf-16"), "is UTF-16LE text, not UTF-8; convert it, e.g. iconv -f UTF-16LE -t UTF-8"),
        "utf-16be-no-bom": ("# Card\nMean KLD 0.01\n".encode("utf-16-be"), "is UTF-16BE text, not UTF-8"),
        "utf-32-with-bom": ("# Card\nMean KLD 0.01\n".encode("utf-32"), "is UTF-32LE text, not UTF-8"),
        "empty": (b"", "empty file"),
        "whitespace-only": (b"  \n\n\t\n", "empty file"),
        "50MB": (None, "too large for a model card"),
    }
    out = {}
    for name, (data, msg) in cases.items():
        p = tmp / f"{name}.md"
        if data is None:  # sparse 50 MB file: cheap to create, same size to the linter
            with open(p, "wb") as fh:
                fh.truncate(50 * 1024 * 1024)
        else:
            p.write_bytes(data)
        out[name] = (p, msg)
    out["missing"] = (tmp / "nope" / "README.md", "no such file")
    (tmp / "a-directory").mkdir()
    out["directory"] = (tmp / "a-directory", "is a directory")
    # Paths that would block open() or never end: refused before they are opened, never a stall
    os.mkfifo(tmp / "fifo.md")
    out["fifo-without-writer"] = (tmp / "fifo.md", "is a named pipe (FIFO), not a regular file")
    out["endless-device"] = (Path("/dev/zero"), "is a device, not a regular file")
    (tmp / "loop.md").symlink_to(tmp / "loop.md")
    out["symlink-loop"] = (tmp / "loop.md", "a symbolic link whose target is missing or loops")
    return out


def test_each_bad_input_is_one_line_exit_2_and_file_untouched(tmp_path, capsys):
    for name, (path, fragment) in _bad_inputs(tmp_path).items():
        before = (path.read_bytes(), path.stat().st_mtime_ns) if path.is_file() else None
        rc, out, err = run_cli(capsys, "lint", path)
        assert rc == 2, name
        assert err.count("\n") == 1 and err.startswith("kldcard: error: "), (name, err)
        assert fragment in err, (name, err)
        assert "Traceback" not in err and out == "No cards linted.\n"
        if before is not None:
            assert (path.read_bytes(), path.stat().st_mtime_ns) == before, name
        with pytest.raises(InputError):
            lint_card(path)


def test_bad_input_in_a_real_process_has_no_traceback(tmp_path):
    bad = tmp_path / "README.md"
    bad.write_bytes(b"---\nkey: [1, 2\n---\n")
    proc = run_subprocess("lint", bad)
    assert proc.returncode == 2
    assert proc.stderr == f"kldcard: error: {bad}:2:11: malformed YAML front matter: expected ',' or ']', but got '<stream end>'\n"


def test_bad_input_among_good_cards_still_lints_the_rest(tmp_path, capsys):
    rc, out, err = run_cli(capsys, "lint", "-o", "json", tmp_path / "missing.md", COMPLIANT)
    assert rc == 2  # input errors win over findings
    assert err.count("\n") == 1 and "no such file" in err
    assert '"files": [\n    "' in out and str(COMPLIANT) in out


@pytest.mark.parametrize("value", ["a string", ["a", "list"], 42, None, True])
def test_block_of_the_wrong_type_is_a_finding_not_a_crash(tmp_path, value):
    p = tmp_path / "README.md"
    p.write_text("---\n" + yaml.safe_dump({"kld_evaluation": value}) + "---\n")
    findings = lint_card(p).findings
    assert [f.rule_id for f in findings] == ["KLD001"]
    assert findings[0].line == 2


def test_crlf_card_locates_lines_like_lf(tmp_path):
    text = COMPLIANT.read_text().replace("revision: d04e592bb4f6aa9cfee91e2e20afa771667e1d4b", "revision: main", 1)
    (tmp_path / "lf.md").write_bytes(text.encode())
    (tmp_path / "crlf.md").write_bytes(text.replace("\n", "\r\n").encode())
    (tmp_path / "bom.md").write_bytes(b"\xef\xbb\xbf" + text.encode())
    locs = {name: [(f.line, f.column) for f in lint_card(tmp_path / name).findings] for name in ("lf.md", "crlf.md", "bom.md")}
    assert locs["lf.md"] == locs["crlf.md"] == locs["bom.md"] == [(13, 15)]


# --------------------------------------------------------------------------------------------
# Property tests: whatever the input, lint returns findings or raises InputError.
# --------------------------------------------------------------------------------------------

KNOWN = set(all_rules())
scalars = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True, allow_infinity=True),
    st.text(max_size=20),
    st.sampled_from(["1e-3", "bf16", "q4_k_m", "main", "forward", "0" * 40, "a" * 64, "every-n", "full", "yes"]),
)
keys = st.one_of(
    st.text(max_size=12),
    st.sampled_from(sorted({*BLOCK, "reference", "runtime", "results", "kld", "mean", "model-index", "metrics", "value"})),
)
yaml_values = st.recursive(
    scalars, lambda children: st.lists(children, max_size=4) | st.dictionaries(keys, children, max_size=5), max_leaves=25
)


def _mutated_block(data: st.DataObject) -> dict:
    """The compliant block with one random subtree replaced or deleted."""
    block = copy.deepcopy(BLOCK)
    node: Any = block
    for _ in range(data.draw(st.integers(0, 4), label="depth")):
        children = [v for v in (node.values() if isinstance(node, dict) else node) if isinstance(v, (dict, list)) and v]
        if not children:
            break
        node = data.draw(st.sampled_from(children), label="descend")
    if isinstance(node, dict):
        key = data.draw(st.sampled_from(sorted(node)), label="key")
        if data.draw(st.booleans(), label="delete"):
            del node[key]
        else:
            node[key] = data.draw(yaml_values, label="value")
    elif node:
        node[data.draw(st.integers(0, len(node) - 1), label="index")] = data.draw(yaml_values, label="value")
    return block


def _check(data: bytes) -> None:
    fd, name = tempfile.mkstemp(suffix=".md")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
        try:
            result = lint_card(name)
        except InputError as exc:
            assert len(str(exc).splitlines()) == 1
            return
        for f in result.findings:
            assert isinstance(f, Finding) and f.rule_id in KNOWN
            assert f.line >= 1 and f.column >= 1 and len(f.message.splitlines()) == 1
            assert f.pointer == "" or f.pointer.startswith("/")
        with open(name, "rb") as fh:
            assert fh.read() == data
    finally:
        os.unlink(name)


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.text(max_size=300))
def test_arbitrary_text_gives_findings_or_input_error(text):
    _check(text.encode("utf-8", "replace"))
    _check(("---\n" + text + "\n---\n# body\n").encode("utf-8", "replace"))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(yaml_values, st.booleans())
def test_arbitrary_yaml_gives_findings_or_input_error(value, as_block):
    meta = {"kld_evaluation": value} if as_block else value
    _check(("---\n" + yaml.safe_dump(meta, allow_unicode=True) + "---\n# body\n").encode("utf-8", "replace"))


@settings(deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.data(), yaml_values)
def test_mutated_compliant_blocks_give_findings_or_input_error(data, model_index):
    meta = {"kld_evaluation": _mutated_block(data), "model-index": model_index}
    _check(("---\n" + yaml.safe_dump(meta, allow_unicode=True) + "---\n# body\n").encode("utf-8", "replace"))


# ---- linear time: front matter, every lint stage -----------------------------------------------


def test_utf8_with_and_without_bom_read_the_same(tmp_path):
    text = "---\nlicense: mit\n---\n# Card\n\nQ4_K_M: mean KLD 0.021 vs BF16.\n"
    plain, bom = tmp_path / "plain.md", tmp_path / "bom.md"
    plain.write_bytes(text.encode("utf-8"))
    bom.write_bytes(b"\xef\xbb\xbf" + text.encode("utf-8"))
    a, b = lint_card(plain), lint_card(bom)
    assert [(f.line, f.column, f.rule_id) for f in a.findings] == [(f.line, f.column, f.rule_id) for f in b.findings]
    assert any(f.rule_id == "KLD303" for f in b.findings)  # the body was read: the claim was found
    assert parse_card(b"\xef\xbb\xbf" + text.encode()).metadata == {"license": "mit"}


@given(st.lists(st.sampled_from(["-", "---", "\n", "\r", "\r\n", " ", "\t", "a", ":", "\u2028"]), max_size=16).map("".join))
@settings(max_examples=3000, deadline=None)
def test_front_matter_scan_finds_the_hub_regex_block(text):
    """The linear scan is the Hub's REGEX_YAML_BLOCK, group for group (the regex is fine on small inputs)."""
    want = re.search(HUB_YAML_BLOCK, text)
    got = YAML_BLOCK.search(text)
    assert (got is None) == (want is None)
    if want is not None:
        assert [got.span(g) for g in range(5)] == [want.span(g) for g in range(5)]
        assert got.group(2) == want.group(2)


def _lint_seconds(data: bytes) -> float:
    """Best of three timings of reading + prose-linting ``data`` (GC off: its passes are not the linter's)."""
    best = float("inf")
    gc.collect()
    gc.disable()
    try:
        for _ in range(3):
            t0 = time.perf_counter()
            check_prose(parse_card(data))
            best = min(best, time.perf_counter() - t0)
    finally:
        gc.enable()
    return best


@pytest.mark.parametrize("name", sorted(PATHOLOGICAL))
def test_pathological_card_lints_in_linear_time(name):
    """4x the input costs 4x the time when linear and 16x when quadratic; the bound is their geometric
    middle, 8, because cache effects and a shared 2-core machine push linear stages to 5-6x. Sizes
    grow until one timing is 100 ms, well above timer noise."""
    make = PATHOLOGICAL[name]
    n = 250
    while _lint_seconds(make(n)) < 0.1 and n < 64000:
        n *= 2
    small, large = _lint_seconds(make(n)), _lint_seconds(make(4 * n))
    assert large / small < 8, f"{name}: {small * 1e3:.1f} ms at n={n}, {large * 1e3:.1f} ms at 4n"


def test_size_limit_is_one_mib_and_can_be_raised(tmp_path, capsys):
    """Over 1 MiB is refused in one line naming the option; --max-card-bytes or the config raises it."""
    from kldcard.card.document import MAX_CARD_BYTES

    assert MAX_CARD_BYTES == 1 << 20
    card = tmp_path / "README.md"
    card.write_bytes(b"# A long card\n\n" + b"Plain words without any claim.\n" * (MAX_CARD_BYTES // 30 + 1))
    rc, out, err = run_cli(capsys, "lint", card)
    assert rc == 2 and err.count("\n") == 1
    assert "too large for a model card (limit 1048576; --max-card-bytes raises it)" in err
    rc, out, err = run_cli(capsys, "lint", "--max-card-bytes", str(2 << 20), card)
    assert (rc, err) == (0, "") and "All checks passed" in out
    (tmp_path / "pyproject.toml").write_text("[tool.kldcard]\nmax-card-bytes = 2097152\n")
    rc, out, err = run_cli(capsys, "lint", "--config", tmp_path / "pyproject.toml", card)
    assert (rc, err) == (0, "")
    (tmp_path / "bad.toml").write_text("[tool.kldcard]\nmax-card-bytes = \"big\"\n")
    rc, out, err = run_cli(capsys, "lint", "--config", tmp_path / "bad.toml", card)
    assert rc == 2 and "max-card-bytes must be a whole number of bytes from 1 to" in err
    for n in ("0", str(1 << 40), "99999999999999999999"):  # never a MemoryError from a huge read buffer
        rc, out, err = run_cli(capsys, "lint", "--max-card-bytes", n, card)
        assert rc == 2 and err.count("\n") == 1 and "--max-card-bytes must be a whole number" in err, (n, err)


def test_config_and_baseline_paths_that_would_block_and_odd_toml(tmp_path, capsys):
    card = tmp_path / "README.md"
    card.write_text("# A card\n\nNo claims.\n")
    os.mkfifo(tmp_path / "fifo")
    (tmp_path / "tool.toml").write_text("tool = 1\n")
    for argv, fragment in (
        (["--config", tmp_path / "fifo"], "config file " + str(tmp_path / "fifo") + " is a named pipe (FIFO), not a regular file"),
        (["--config", "/dev/zero"], "config file /dev/zero is a device, not a regular file"),
        (["--baseline", tmp_path / "fifo"], "baseline " + str(tmp_path / "fifo") + " is a named pipe (FIFO), not a regular file"),
        (["--config", tmp_path / "tool.toml"], "`tool` must be a table"),
    ):
        rc, out, err = run_cli(capsys, "lint", *argv, card)
        assert rc == 2 and err.count("\n") == 1 and fragment in err, (argv, err)


@pytest.mark.parametrize("value", ["!!int x", "!!int ", "!!float x", "!!timestamp 2001-13-45"])
def test_a_tagged_value_yaml_cannot_read_is_one_line(tmp_path, capsys, value):
    card = tmp_path / "README.md"
    card.write_text(f"---\na: {value}\n---\n# x\n")
    rc, out, err = run_cli(capsys, "lint", card)
    assert rc == 2 and err.count("\n") == 1
    assert "README.md:2:1: malformed YAML front matter: cannot read a tagged value" in err
