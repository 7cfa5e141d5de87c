"""``kldcard stack splits`` / ``kldcard stack simulate`` handlers (wired into ``kldcard stack``)."""

from __future__ import annotations

import argparse
import json

import pytest

from kldcard.cli.stack_splits import add_subcommands
from kldcard.errors import KldcardError


def run(argv: list[str]) -> int:
    # The same subparsers `kldcard stack` gets; parsing and dispatch as kldcard.cli.main does it.
    parser = argparse.ArgumentParser(prog="kldcard stack")
    add_subcommands(parser.add_subparsers(dest="stack_command"))
    args = parser.parse_args(argv)
    return args._run(args)


def test_splits_worked_example_text(capsys):
    assert run(["splits", "--seqlen", "27525", "--kv-heads", "4", "--gpu", "H200"]) == 0
    out = capsys.readouterr().out
    assert "54 groups of up to 512 tokens" in out and "132 SMs" in out


@pytest.mark.parametrize(("flag", "value", "splits", "tokens"), [("--gpu", "B200", 62, 448), ("--sms", "188", 87, 320)])
def test_splits_json(capsys, flag, value, splits, tokens):
    assert run(["splits", "--seqlen", "27525", "--kv-heads", "4", flag, value, "--json"]) == 0
    (pred,) = json.loads(capsys.readouterr().out)
    assert (pred["splits"], pred["tokens_per_split"]) == (splits, tokens)


def test_splits_without_gpu_lists_the_table(capsys):
    assert run(["splits", "--seqlen", "27525", "--kv-heads", "4"]) == 0
    out = capsys.readouterr().out
    for line in ("H200", "B200", "RTX PRO 6000 Blackwell", "H100 PCIe", "L40S", "RTX 5090"):
        assert line in out


def test_splits_head_dim_sets_block_size(capsys):
    assert run(["splits", "--seqlen", "4096", "--kv-heads", "8", "--gpu", "H100", "--head-dim", "128", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["block_n"] == 128


def test_unknown_gpu_is_a_kldcard_error():
    with pytest.raises(KldcardError, match="unknown GPU"):
        run(["splits", "--seqlen", "100", "--kv-heads", "4", "--gpu", "Voodoo"])


def test_simulate_gpus_shows_bf16_difference(capsys):
    assert run(["simulate", "--seqlen", "27525", "--gpus", "H200", "B200", "--kv-heads", "4", "--json"]) == 0
    r = json.loads(capsys.readouterr().out)
    assert r["baseline"]["actual_groups"] == 54 and r["compared"][0]["actual_groups"] == 62
    assert r["compared"][0]["bf16_n_different"] > 0
    assert r["compared"][0]["f64_max_abs_diff"] < 1e-14


def test_simulate_groups_text(capsys):
    assert run(["simulate", "--seqlen", "1000", "--head-dim", "32", "--groups", "1", "2"]) == 0
    out = capsys.readouterr().out
    assert "bf16 output differs in" in out and "float64 outputs agree" in out


def test_wired_into_kldcard_stack(capsys):
    from kldcard.cli.main import main

    assert main(["stack", "splits", "--seqlen", "27525", "--kv-heads", "4", "--sms", "188"]) == 0
    assert "87 groups of up to 320 tokens" in capsys.readouterr().out
    assert main(["stack", "splits", "--seqlen", "27525", "--kv-heads", "4", "--gpu", "Voodoo"]) == 2
    err = capsys.readouterr().err
    assert err.startswith("kldcard: error: unknown GPU") and err.count("\n") == 1


@pytest.mark.parametrize("flag", ["--block-n", "--head-dim"])
def test_splits_zero_block_size_is_refused_not_defaulted(flag):
    with pytest.raises(KldcardError, match="at least 1|must be positive"):
        run(["splits", "--seqlen", "100", "--kv-heads", "1", "--sms", "10", flag, "0"])
