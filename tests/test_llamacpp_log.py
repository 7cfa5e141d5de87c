"""Parsing pasted llama-perplexity KLD output (current, pre-#16321 and January-2024 formats)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from kldcard.cli.main import main
from kldcard.errors import InputError
from kldcard.llamacpp.log import parse_llama_log
from kldcard.llamacpp.stats import LlamaKldAccumulator, PerToken, format_report
from kldcard.schema import Aggregation, DirectionDisclosure, Positions, Results

DATA = Path(__file__).parent / "data" / "llamacpp"


def test_current_format():
    log = parse_llama_log((DATA / "log-current.txt").read_text(encoding="utf-8"))
    assert log.format == "current" and log.notes[-1].startswith("n_ctx is not in the log")
    v = log.values
    assert v["kld_mean"] == 0.041 and v["kld_se"] == 0.0017
    assert v["ppl_q"] == 12.9876 and v["ppl_q_unc"] == 0.6001 and v["ppl_base"] == 12.8441
    assert v["cor_ln_ppl"] == 0.9876 and v["ln_ppl_ratio"] == 0.01111
    assert v["kld_max"] == 1.234567 and v["kld_min"] == -0.00001 and v["kld_median"] == 0.02
    assert log.kld_percentiles == {"99.9": 1.1, "99.0": 0.456, "95.0": 0.15, "90.0": 0.09, "10.0": 0.0009,
                                   "5.0": 0.0003, "1.0": 0.00002, "0.1": -0.000004}
    assert v["dp_mean"] == -0.0042 and v["dp_se"] == 0.0019 and log.dp_percentiles["1.0"] == -0.14
    assert v["rms_dp"] == 0.031 and v["rms_dp_unc"] == 0.0025
    assert v["same_top"] == 0.88627 and v["same_top_unc"] == 0.01409
    assert log.n_chunks == 2 and log.chunks[1]["kld_mean"] == 0.041 and log.chunks[0]["same_top"] == 0.88235


def test_first_row_glued_to_the_progress_line():
    """Both streams in one log: the info line "... - ETA" (no newline) runs into the first row, which still counts."""
    text = (DATA / "log-current.txt").read_text(encoding="utf-8")
    lines = text.splitlines()
    assert lines[1].startswith("kl_divergence:") and lines[4].startswith("   1")
    glued = "\n".join([lines[0], lines[3], "kl_divergence: 0.41 seconds per pass - ETA" + lines[4], *lines[5:]]) + "\n"
    log = parse_llama_log(glued)
    assert log.n_chunks == 2 and log.chunks[0]["same_top"] == 0.88235 and log.chunks[0]["kld_mean"] == 0.04321


def test_n_ctx_from_the_kl_runs_own_line_only():
    """The KL mode's "kl_divergence: computing over 8 chunks, n_ctx=128" gives n_ctx; llama-imatrix's line of the same
    words, from a calibration run pasted into the same log, does not."""
    text = (DATA / "log-current.txt").read_text(encoding="utf-8")
    imatrix = "compute_imatrix: computing over 125 chunks, n_ctx=4096, batch_size=2048, n_seq=4\n"
    assert parse_llama_log(imatrix + "kl_divergence: computing over 8 chunks, n_ctx=128, batch_size=2048, n_seq=16\n" + text).n_ctx == 128
    assert parse_llama_log(imatrix + text).n_ctx is None


def test_pre_16321_format_with_prefixes_and_duplicate_line():
    log = parse_llama_log((DATA / "log-pre16321.txt").read_text(encoding="utf-8"))
    assert log.format == "pre-16321"
    assert log.n_ctx == 512 and log.n_chunks == 4 and log.n_scored == 4 * 255
    assert set(log.kld_percentiles) == {"99.9", "99.0", "10.0", "5.0", "1.0"}
    assert log.kld_percentiles["99.0"] == 0.08
    assert any("PR #15999" in n for n in log.notes)
    assert log.values["same_top"] == 0.9549 and log.values["kld_mean"] == 0.0086


def test_pr5081_format():
    log = parse_llama_log((DATA / "log-pr5081.txt").read_text(encoding="utf-8"))
    assert log.format == "pr-5081"
    assert log.values["kld_mean"] == 0.011 and log.values["kld_se"] == 0.00008
    assert log.values["kld_median"] == 0.006 and log.values["kld_max"] == 0.9 and log.values["kld_min"] == 0.0
    assert log.kld_percentiles == {"99.0": 0.1, "95.0": 0.04, "90.0": 0.025, "1.0": 0.00001, "5.0": 0.0001,
                                   "10.0": 0.0003}
    assert log.n_chunks == 2 and log.chunks[1]["same_top"] == 0.955


def test_log_without_statistics_is_refused(tmp_path, capsys):
    with pytest.raises(InputError, match="no llama-perplexity"):
        parse_llama_log("perplexity: 6.1234 [1/1]\nsomething else\n")
    f = tmp_path / "empty.txt"
    f.write_text("nothing here\n")
    assert main(["llama", "import-log", str(f)]) == 2
    assert capsys.readouterr().err.startswith("kldcard: error: no llama-perplexity")


def test_implied_disclosures_and_results_validate():
    log = parse_llama_log((DATA / "log-current.txt").read_text(encoding="utf-8"), n_ctx=512)
    d = log.implied_disclosures()
    assert d["direction"] == {"reported": ["forward"], "log_base": "e"}
    DirectionDisclosure.model_validate(d["direction"])
    assert Positions.model_validate(d["positions"]).n_scored == 2 * 255
    assert d["positions"]["scheme"] == "llama-perplexity"
    assert d["vocabulary"] == {"truncation": "floor", "floor_nats": 16.0, "alignment": "identical"}
    assert d["context"] == {"n_ctx": 512, "n_chunks": 2, "stride": 512}
    agg = Aggregation.model_validate(d["aggregation"])
    assert agg.statistic == "token-mean" and agg.uncertainty.method == "se-iid"
    assert agg.percentiles[0] == 99.9 and 0.1 in agg.percentiles
    r = Results.model_validate(log.results())
    assert r.n_positions == 510 and r.kld.mean == 0.041 and r.kld.percentiles["99.0"] == 0.456
    assert r.top1_agreement == 0.88627 and r.rms_delta_p == 0.031


def test_our_own_block_parses_back():
    rng = np.random.default_rng(7)
    acc = LlamaKldAccumulator()
    for c in range(2):
        n = 63
        acc.add(PerToken(
            (rng.random(n) * 4).astype(np.float32), (rng.random(n) * 4).astype(np.float32),
            rng.random(n) * 0.1, ((rng.random(n) - 0.5) * 0.2).astype(np.float32), rng.random(n) < 0.9,
        ))
        acc.end_chunk(c + 1)
    stats = acc.finish()
    log = parse_llama_log(format_report(stats), n_ctx=128)
    assert log.format == "current" and log.n_chunks == 2 and log.n_scored == stats.n_tokens
    assert log.values["kld_mean"] == pytest.approx(stats.kld_mean, abs=5e-7)
    assert log.values["same_top"] == pytest.approx(stats.same_top, abs=5e-6)
    for k, x in stats.kld_percentiles.items():
        assert log.kld_percentiles[k] == pytest.approx(x, abs=5e-7)
    for k, x in stats.dp_percentiles.items():
        assert log.dp_percentiles[k] == pytest.approx(x, abs=5e-6)


def test_import_log_cli(capsys):
    assert main(["llama", "import-log", str(DATA / "log-pre16321.txt"), "-o", "json"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["llama_perplexity"]["direction"].startswith("forward")
    assert doc["results"]["n_positions"] == 1020
    assert doc["implied_disclosures"]["vocabulary"]["floor_nats"] == 16.0
    assert main(["llama", "import-log", str(DATA / "log-current.txt"), "--n-ctx", "512", "--floor", "24"]) == 0
    out = capsys.readouterr().out
    assert "KL(P_base || Q_candidate)" in out and "nats" in out and "24-nat floor" in out
    assert "scored tokens 510" in out


def test_ascii_plus_minus_and_mojibake_are_accepted():
    text = (DATA / "log-current.txt").read_text(encoding="utf-8")
    log = parse_llama_log(text.replace("±", "+/-").replace("Δ", "Î”"))
    assert log.values["kld_se"] == 0.0017 and log.values["rms_dp"] == 0.031 and log.n_chunks == 2
    assert log.dp_percentiles["99.9"] == 0.3


def test_a_fifo_or_device_is_refused_not_waited_on(tmp_path, capsys):
    """A named pipe nobody writes to would block open() forever; /dev/zero never ends."""
    import os

    os.mkfifo(tmp_path / "log.fifo")
    for path, kind in ((tmp_path / "log.fifo", "named pipe (FIFO)"), (Path("/dev/zero"), "device")):
        for argv in (["import-llama-log", str(path)], ["llama", "base-info", str(path)]):
            assert main(argv) == 2
            err = capsys.readouterr().err
            assert err.count("\n") == 1 and f"is a {kind}, not a regular file" in err, (argv, err)
    with pytest.raises(InputError, match="named pipe"):
        from kldcard.tokens.parity import read_text  # the evaluation text goes through the same reader

        read_text(tmp_path / "log.fifo")
