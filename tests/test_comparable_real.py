"""`kldcard comparable` on real cards (tests/data/real_cards), on kldcard's own results files, and on
hf:// cards from a huggingface_hub cache (offline)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from helpers_lint import COMPLIANT, run_cli, run_subprocess
from test_lint_hub import COMMIT, _populate_cache

from kldcard.comparable import comparable

DATA = Path(__file__).parent / "data"
REAL = DATA / "real_cards" / "cards"
V1 = DATA / "compare_v1"


def test_two_uploaders_cards_of_qwen36_27b_are_not_comparable_stride_128_vs_512(capsys):
    rc, out, err = run_cli(capsys, "comparable", REAL / "qwen36_27b_sota_matrix_quality.md",
                           REAL / "holdout_sokann_qwen36_27b_4256bpw.md")
    assert rc == 1 and err == ""
    # B's numbers come from llama-perplexity on wiki.test.raw (580 chunks: its default 512-token windows); the
    # "-c 65536 ... -np 1" on B's serving command line and "room for a context size of 65536" are the deployment's
    assert "verdict: not comparable: different context (stride 128 x200 vs stride 512)" in out
    assert "65536" not in next(line for line in out.splitlines() if line.startswith("D5 context length"))
    # the same text named two ways: wikitext-2 in one card, wiki.test.raw in the other
    assert any(line.startswith("D3 evaluation text") and line.endswith("compatible") for line in out.splitlines())


def test_two_uploaders_cards_of_qwen35_9b_cannot_tell(capsys):
    rc, out, _ = run_cli(capsys, "comparable", REAL / "hipfire_pr238_mfp4_imatrix.md",
                         REAL / "titwitmuffbiscuit_qwen35_9b_reddit.md")
    assert rc == 1
    verdict = next(line for line in out.splitlines() if line.startswith("verdict: "))
    assert verdict.startswith("verdict: cannot tell: A does not say which reference, text, context length")
    assert "; B does not say which reference" in verdict
    assert "ranking: no ranking: nobody can tell whether they are the same quantity" in out


def test_a_sweep_of_several_uploaders_files_measured_by_one_person_is_comparable_within_the_card(capsys):
    """The card compares community GGUFs of Qwen3.5-9B (bartowski, unsloth, ...) measured in one sweep."""
    rc, out, _ = run_cli(capsys, "comparable", REAL / "titwitmuffbiscuit_qwen35_9b_reddit.md")
    assert rc == 0
    assert "verdict: comparable, with caveats: the card does not say which reference" in out
    assert "ranking: a published mean without its interval cannot rank two close candidates" in out
    assert "A line 10: 0.0127 unit not stated, mean of per-token KL (direction not stated), no interval given" in out


def test_a_table_at_two_contexts_is_not_comparable_within_the_card(capsys):
    rc, out, _ = run_cli(capsys, "comparable", DATA / "prose_corpus" / "blind2_ctx_columns.md")
    assert rc == 1
    assert "verdict: not comparable: different context (4096 vs 512)" in out
    assert "A1  " in out and "A2  " in out


def test_a_number_quoted_from_another_uploaders_page_is_measured_elsewhere(tmp_path):
    card = tmp_path / "mixed.md"
    text = (REAL / "titwitmuffbiscuit_qwen35_9b_reddit.md").read_text(encoding="utf-8")
    card.write_text(text + "\n- UD-Q4_K_XL: KLD 0.0135 according to unsloth's benchmark page.\n", encoding="utf-8")
    result = comparable([str(card)])
    borrowed = [c for c in result.columns if any(n.value == 0.0135 for n in c.numbers)]
    assert len(borrowed) == 1 and len(result.columns) >= 2
    assert all(r.status == "missing" for r in borrowed[0].readings.values())
    assert "according to unsloth's benchmark page" in borrowed[0].readings[1].evidence[0].text


def test_one_claim_of_a_real_card_by_line(capsys):
    rc, out, _ = run_cli(capsys, "comparable", f"{REAL / 'reading_unsloth_qwen35_benchmarks_notes.md'}#23",
                         REAL / "banandre_q4km_illusion_blog.md")
    assert rc == 1 and out.count("\nB  ") == 1 and "line 23" in out.splitlines()[0]


def test_results_files_of_one_reference_are_comparable_and_show_their_intervals(capsys):
    rc, out, _ = run_cli(capsys, "comparable", V1 / "candidate-q8_0.json", V1 / "candidate-q4_k_m.json")
    assert rc == 0
    assert "verdict: comparable\n" in out
    assert ("A q8_0: 0.00407853 nats, token-mean of KL(P_ref ‖ P_cand) per token [0.00395336, 0.00419256] "
            "(95% bootstrap)") in out


def test_results_with_per_token_files_hand_over_to_kldcard_rank(tmp_path):
    files = []
    for name in ("candidate-q8_0.json", "candidate-q4_k_m.json"):
        data = json.loads((V1 / name).read_text())
        per_token = tmp_path / f"{name}.per-token.npz"
        per_token.write_bytes(b"")  # present: the advice only checks that it exists
        data["per_token_file"] = per_token.name
        (tmp_path / name).write_text(json.dumps(data))
        files.append(str(tmp_path / name))
    result = comparable(files)
    assert result.advice.kind == "rank" and list(result.advice.results) == files
    assert "kldcard rank " + " ".join(files) in result.advice.message


def test_results_against_a_card_differ_in_reference_text_and_context(capsys):
    rc, out, _ = run_cli(capsys, "comparable", COMPLIANT, V1 / "candidate-q8_0.json", "-o", "json")
    data = json.loads(out)
    assert rc == 1 and data["verdict"] == "not comparable"
    rows = {r["row"]: r for r in data["rows"]}
    assert {k for k, r in rows.items() if r["verdict"] == "differs" and r["rule"] == "must-equal"} == {
        "reference", "text", "context", "positions"}
    assert rows["reference"]["cells"]["B"]["evidence"][0]["key"] == "/reference/model"


def test_rank_refused_when_the_numbers_are_cards(capsys, tmp_path):
    rc, _, err = run_cli(capsys, "comparable", COMPLIANT, COMPLIANT, "--rank", tmp_path / "r.json")
    assert rc == 2 and "--rank: nothing to rank with paired intervals" in err
    assert not (tmp_path / "r.json").exists()


@pytest.fixture
def hub_cards(tmp_path):
    cache = tmp_path / "hf-cache"
    _populate_cache(cache, "example-org/Qwen3.6-27B-matrix",
                    {COMMIT: (REAL / "qwen36_27b_sota_matrix_quality.md").read_bytes()})
    _populate_cache(cache, "other-org/Qwen3.6-27B-GGUF",
                    {COMMIT: (REAL / "holdout_sokann_qwen36_27b_4256bpw.md").read_bytes()})
    _populate_cache(cache, "example-org/Llama-3.1-8B-GGUF", {COMMIT: COMPLIANT.read_bytes()})
    return {"HF_HUB_OFFLINE": "1", "HF_HUB_CACHE": str(cache), "HF_HOME": str(tmp_path / "hf-home")}


def test_hf_cards_from_an_offline_cache(hub_cards):
    proc = run_subprocess("comparable", "hf://example-org/Qwen3.6-27B-matrix", "hf://other-org/Qwen3.6-27B-GGUF",
                          env=hub_cards)
    assert proc.returncode == 1, proc.stderr
    assert proc.stdout.startswith("A  hf://example-org/Qwen3.6-27B-matrix line 11 (prose)")
    assert "verdict: not comparable: different context (stride 128 x200 vs stride 512)" in proc.stdout


def test_hf_card_candidate_by_name_and_a_pinned_revision(hub_cards):
    proc = run_subprocess("comparable", f"hf://example-org/Llama-3.1-8B-GGUF@{COMMIT}::Q4_K_M", COMPLIANT,
                          "-o", "markdown", env=hub_cards)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("**Are these KLD numbers comparable?** comparable")


def test_hf_card_not_in_the_cache_is_one_line_exit_2(hub_cards):
    proc = run_subprocess("comparable", "hf://nobody/absent", COMPLIANT, env=hub_cards)
    assert proc.returncode == 2 and proc.stdout == ""
    assert proc.stderr.startswith("kldcard: error: hf://nobody/absent") and proc.stderr.count("\n") == 1


def test_comparable_loads_no_numerics(tmp_path):
    shutil.copy(COMPLIANT, tmp_path / "a.md")
    code = ("import sys\nfrom kldcard.cli.main import main\n"
            f"rc = main(['comparable', {str(tmp_path / 'a.md')!r}, {str(V1 / 'candidate-q8_0.json')!r}])\n"
            "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'numba', 'torch', 'safetensors'})\n"
            "ours = sorted(m for m in sys.modules if m.startswith(('kldcard.compare', 'kldcard.capture', 'kldcard.render')))\n"
            "print('HEAVY', heavy, ours, rc, file=sys.stderr)\n")
    import subprocess
    import sys

    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert "HEAVY [] [] 1" in proc.stderr, proc.stderr[-2000:]


def test_intervals_written_next_to_card_numbers_are_shown_and_the_pm_part_is_not_a_number(capsys):
    rc, out, _ = run_cli(capsys, "comparable", REAL / "llamacpp_pr6936_gaessler_kld_table.md")
    assert rc == 0
    assert ("A q8_0: 0.001355 nats (inferred), mean of KL(P_ref ‖ P_cand) per token (inferred from a tool's "
            "defaults: statistic, direction) [0.001349, 0.001361] (±: SE or half-width, not stated)") in out
    rc, out, _ = run_cli(capsys, "comparable", REAL / "qwen36_27b_sota_matrix_quality.md")
    assert "Q8_0 GGUF 0.001828 unit not stated\n" in out and "0.000189" not in out.split("\n\n")[0]  # "± 0.000189" is not a KLD


def test_readme_examples_are_the_commands_real_output(capsys):
    """README, "Reading other people's numbers": every `$ kldcard comparable ...` example prints the verdict
    shown (cut where the README cuts it with "...")."""
    readme = (Path(__file__).parent.parent / "README.md").read_text(encoding="utf-8")
    block = readme.split("### Reading other people's numbers", 1)[1].split("```text", 1)[1].split("```", 1)[0]
    examples = block.split("$ kldcard comparable ")[1:]
    assert len(examples) == 3
    seen = set()
    for ex in examples:
        args = ex.splitlines()[0].split("#")[0].split()
        shown = " ".join(ex.split("verdict: ", 1)[1].split("\nranking:")[0].split())
        rc, out, _ = run_cli(capsys, "comparable", *(REAL / a for a in args))
        real = " ".join(next(line for line in out.splitlines() if line.startswith("verdict: "))[9:].split())
        assert real.startswith(shown.split("...")[0].strip().rstrip(",")), (shown, real)
        seen.add(real.split(":")[0].split(",")[0])
    assert seen == {"comparable", "not comparable", "cannot tell"}


def test_a_table_with_a_source_column_mixes_measurements(tmp_path, capsys):
    card = tmp_path / "mixed-table.md"
    card.write_text("# Qwen3-8B GGUF\n\nMean KLD vs BF16 (Qwen/Qwen3-8B) on wikitext-2 test, llama.cpp b4500, -c 512, "
                    "all positions, forward KL in nats, full vocabulary.\n\n"
                    "| quant | mean KLD | source |\n|---|---|---|\n| Q4_K_M | 0.0213 | |\n"
                    "| IQ4_XS | 0.0187 | bartowski's model card |\n", encoding="utf-8")
    rc, out, _ = run_cli(capsys, "comparable", card, "-o", "json")
    data = json.loads(out)
    assert rc == 1 and len(data["columns"]) == 2
    quoted = next(c for c in data["columns"] if c["numbers"][0]["label"] == "IQ4_XS")
    assert data["verdict"] == "cannot tell" and f"{quoted['name']} does not say" in data["sentence"]
    ev = data["rows"][0]["cells"][quoted["name"]]["evidence"][0]
    assert "bartowski's model card" in ev["text"]
