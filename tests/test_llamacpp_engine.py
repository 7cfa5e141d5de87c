"""llama.cpp's KLD protocol end to end on the tiny test models, with llama.cpp itself computing logits.

Pass 1 (base, F32 GGUF) and pass 2 (candidate, Q8_0 / Q4_K_M GGUF) are run as llama-perplexity runs
them: non-overlapping n_ctx chunks, BOS overwriting token 0 of each chunk when the vocabulary adds
BOS, logits at n_ctx//2 … n_ctx−2. The base logits go into a base file written by kldcard, the
candidate logits into a kldcard capture, and ``kldcard llama compare`` scores one against the other.
"""

from __future__ import annotations

from pathlib import Path

import llama_cpp  # noqa: E402  (the [llama] extra is part of the test install)
import numpy as np
import pytest

from kldcard.capture.llama_perplexity import llama_perplexity_plan
from kldcard.capture.store import CaptureWriter
from kldcard.cli.main import main
from kldcard.llamacpp.basefile import BaseFileWriter, encode_records, open_base_file
from kldcard.llamacpp.convert import compare_base_with_capture
from kldcard.llamacpp.floor import measure_format_floor
from kldcard.llamacpp.stats import LlamaKldAccumulator, format_report, per_token

pytestmark = pytest.mark.engines
TEXT = (Path(__file__).parent / "data" / "llamacpp" / "text.txt").read_text(encoding="utf-8")
N_CTX = 64


def _load(path: Path, n_ctx: int):
    return llama_cpp.Llama(model_path=str(path), n_ctx=n_ctx, n_batch=n_ctx, logits_all=True, verbose=False,
                           n_threads=2, seed=0)


def _plan(gguf: Path, n_chunks: int):
    llm = _load(gguf, N_CTX)
    try:
        ids = llm.tokenize(TEXT.encode("utf-8"), add_bos=True, special=True)
        vocab = llama_cpp.llama_model_get_vocab(llm.model)
        add_bos = bool(llama_cpp.llama_vocab_get_add_bos(vocab))
        return llama_perplexity_plan(ids, N_CTX, add_bos=add_bos, bos_id=llm.token_bos(), n_chunks=n_chunks)
    finally:
        llm.close()


def _scored_logits(gguf: Path, plan) -> np.ndarray:
    """float32 [n_scored, n_vocab]: each chunk from an empty KV cache, fed ids (BOS overwrite)."""
    llm = _load(gguf, N_CTX)
    try:
        rows = []
        for fed in plan.chunks:
            llm.reset()
            llm.eval([int(t) for t in fed])
            rows.append(np.array(llm.scores[plan.scored_local], dtype=np.float32))
        return np.concatenate(rows)
    finally:
        llm.close()


@pytest.fixture(scope="module")
def qwen3_run(tiny_qwen3, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("llama-kld")
    plan = _plan(tiny_qwen3["gguf_f32"], n_chunks=4)  # 4 × 31 = 124 scored tokens
    base_z = _scored_logits(tiny_qwen3["gguf_f32"], plan)
    base_path = tmp / "base.kld"
    with BaseFileWriter(base_path, n_ctx=N_CTX, n_vocab=base_z.shape[1], tokens=plan.original_ids) as w:
        for c in range(plan.n_chunk):
            w.write_chunk_logits(base_z[c * plan.per_chunk : (c + 1) * plan.per_chunk])
    cand_z = _scored_logits(tiny_qwen3["gguf_q4"], plan)
    meta = {"model": {"name": "tiny-qwen3-q4_k_m", "format": "gguf"},
            "positions": {"scheme": "llama-perplexity"},
            "context": {"n_ctx": N_CTX, "n_chunks": plan.n_chunk, "stride": N_CTX}}
    with CaptureWriter(tmp / "cand", meta=meta, n_vocab=cand_z.shape[1], token_ids=plan.fed_ids, dtype="f32") as w:
        w.append(plan.positions, cand_z)
    return plan, base_z, cand_z, base_path, tmp / "cand"


def test_qwen3_q4_against_f32_base_file(qwen3_run, capsys):
    from kldcard.capture.store import open_capture

    plan, base_z, cand_z, base_path, cand_dir = qwen3_run
    assert not plan.add_bos and plan.n_scored == 124
    with open_base_file(base_path) as bf:
        assert bf.n_vocab == 151_936 and bf.n_chunk == 4
        stats = compare_base_with_capture(bf, open_capture(cand_dir))
    assert stats.has_final_blocks
    # Q4_K_M really differs from F32, far above the format's own floor
    floor = measure_format_floor(base_z[:31], float64=False)
    assert stats.kld_mean > 100 * abs(float(np.mean(floor.llama)))
    assert 0.5 < stats.same_top <= 1.0
    # PPL(base) is recomputed from the uint16 file: a target below max − 16 nats reads as the floor
    # value, so its NLL is capped (the random tiny model puts many targets there); a target above
    # the floor is within one quantisation step (16/65535 nats) of its float value.
    z = base_z.astype(np.float64)
    lp = z - z.max(1, keepdims=True)
    lp -= np.log(np.exp(lp).sum(1, keepdims=True))
    rows = np.arange(len(lp))
    nll_float = -lp[rows, plan.targets()]
    with open_base_file(base_path) as bf:
        nll_file = np.concatenate([-bf.log_probs(c)[np.arange(31), bf.targets(c)] for c in range(4)])
    above = (z[rows, plan.targets()] > z.max(1) - 16)
    assert above.any() and (~above).any()
    assert np.all(np.abs(nll_file[above] - nll_float[above]) < 16 / 65535 + 1e-5)
    assert np.all(nll_file[~above] <= nll_float[~above] + 1e-5)
    assert stats.ppl_base <= float(np.exp(np.mean(nll_float))) * (1 + 1e-6)
    assert main(["llama", "compare", "--reference-llama-base", str(base_path), str(cand_dir), "--no-chunks"]) == 0
    out = capsys.readouterr().out
    assert f"Mean    KLD: {stats.kld_mean:10.6f} ± {stats.kld_se:10.6f}" in out
    assert "124 tokens" in out.splitlines()[0]


def test_base_model_against_its_own_file_is_the_format_floor(qwen3_run):
    plan, base_z, _, base_path, _ = qwen3_run
    acc = LlamaKldAccumulator()
    with open_base_file(base_path) as bf:
        tg = bf.targets()
        for c, raw in bf.iter_chunks():
            sl = slice(c * plan.per_chunk, (c + 1) * plan.per_chunk)
            acc.add(per_token(base_z[sl], raw, tg[sl], bf.n_vocab))
            acc.end_chunk(c + 1)
    s = acc.finish()
    assert abs(s.kld_mean) < 1e-6 and s.kld_max < 1e-4 and s.same_top == 1.0
    assert "Same top p: 100.000 ± 0.000 %" in format_report(s)
    f = measure_format_floor(base_z, float64=False)
    assert np.allclose(f.llama, np.concatenate([np.asarray(v, dtype=np.float64) for v in acc.kld_values]),
                       atol=1e-7)
    # kldcard's float64 KL against the decoded record (a few rows: the float64 kernel is exact, not fast)
    f16 = measure_format_floor(base_z[:4])
    f24 = measure_format_floor(base_z[:4], floor_nats=24.0)
    # Read as min_log_prob, code 0 gives every tail entry the floor probability (a bias); masked, the
    # self-floor is exactly the true probability mass the 16-nat floor cut off; 24 nats cut off less.
    z = base_z[:4].astype(np.float64)
    p = np.exp(z - z.max(1, keepdims=True))
    p /= p.sum(1, keepdims=True)
    cut = (p * (z <= z.max(1, keepdims=True) - 16)).sum(1)
    assert np.all(f16.float64_masked < f16.float64)
    assert f16.float64_masked == pytest.approx(-np.log1p(-cut), rel=0.05)
    assert np.mean(f24.float64) < np.mean(f16.float64) / 10


def test_llama3_bos_overwrite_is_accepted_by_compare(tiny_llama, tmp_path):
    # The tiny Llama-3 GGUF does not set tokenizer.ggml.add_bos_token, so llama-perplexity would not
    # add BOS for it; real Llama-3 GGUFs do. Plan as for a BOS-adding vocabulary, with its real BOS id.
    plain = _plan(tiny_llama["gguf_f32"], n_chunks=2)
    llm = _load(tiny_llama["gguf_f32"], N_CTX)
    bos = llm.token_bos()
    llm.close()
    plan = llama_perplexity_plan(plain.original_ids, N_CTX, add_bos=True, bos_id=bos)
    assert plan.bos_id == 128_000 and not (plan.original_ids[:: N_CTX] == bos).all()
    assert (plan.fed_ids[:: N_CTX] == plan.bos_id).all()
    base_z = _scored_logits(tiny_llama["gguf_f32"], plan)
    cand_z = _scored_logits(tiny_llama["gguf_q8_0"], plan)
    with BaseFileWriter(tmp_path / "b.kld", n_ctx=N_CTX, n_vocab=base_z.shape[1], tokens=plan.original_ids) as w:
        for c in range(plan.n_chunk):
            w.write_chunk_records(encode_records(base_z[c * plan.per_chunk : (c + 1) * plan.per_chunk]))
    meta = {"model": {"name": "tiny-llama-q8_0"}, "context": {"n_ctx": N_CTX}}
    with CaptureWriter(tmp_path / "c", meta=meta, n_vocab=cand_z.shape[1], token_ids=plan.fed_ids, dtype="f32") as w:
        w.append(plan.positions, cand_z)
    from kldcard.capture.store import open_capture

    with open_base_file(tmp_path / "b.kld") as bf:
        assert np.array_equal(bf.tokens, plan.original_ids)  # the file stores the original ids
        s = compare_base_with_capture(bf, open_capture(tmp_path / "c"))
    assert s.n_tokens == 62 and not s.has_final_blocks
    assert 0 < s.kld_mean < 0.1 and s.same_top > 0.8
