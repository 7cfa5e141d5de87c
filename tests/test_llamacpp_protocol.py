"""The llama-perplexity chunk/BOS/position plan."""

from __future__ import annotations

import numpy as np
import pytest

from kldcard.capture.llama_perplexity import llama_perplexity_plan
from kldcard.errors import InputError


def test_plan_without_bos_cuts_whole_chunks_and_scores_the_second_half():
    ids = np.arange(100, 100 + 8 * 3 + 5)  # 3 whole chunks of 8 and a dropped tail of 5
    plan = llama_perplexity_plan(ids, 8, add_bos=False)
    assert plan.n_chunk == 3 and plan.per_chunk == 3 and plan.n_scored == 9
    assert plan.fed_ids.tolist() == plan.original_ids.tolist() == list(range(100, 124))
    assert plan.positions.tolist() == [4, 5, 6, 12, 13, 14, 20, 21, 22]
    assert plan.targets().tolist() == [105, 106, 107, 113, 114, 115, 121, 122, 123]
    assert plan.scored_local == slice(4, 7)
    assert [c.tolist() for c in plan.chunks][1] == list(range(108, 116))


def test_plan_with_bos_overwrites_token_zero_of_every_chunk():
    ids = np.arange(1, 1 + 6 * 3)
    plan = llama_perplexity_plan(ids, 6, add_bos=True, bos_id=0)
    assert plan.fed_ids.tolist()[::6] == [0, 0, 0]
    assert plan.original_ids.tolist()[::6] == [1, 7, 13]  # what a base file stores
    assert np.array_equal(np.delete(plan.fed_ids, [0, 6, 12]), np.delete(plan.original_ids, [0, 6, 12]))
    # n_ctx = 6: S = 6 − 1 − 3 = 2 records, local positions 3 and 4
    assert plan.positions.tolist() == [3, 4, 9, 10, 15, 16]


def test_record_mapping_both_ways():
    plan = llama_perplexity_plan(np.arange(512 * 2), 512, add_bos=False)
    assert plan.per_chunk == 255
    assert plan.record_to_position(1, 0) == 512 + 256
    assert plan.record_to_position(1, 254) == 512 + 510
    assert plan.position_to_record(512 + 300) == (1, 44)
    with pytest.raises(ValueError):
        plan.position_to_record(511)  # last position of a chunk predicts the next chunk: not scored
    with pytest.raises(IndexError):
        plan.record_to_position(2, 0)


def test_chunks_option_and_the_two_chunk_minimum():
    ids = np.arange(40)
    assert llama_perplexity_plan(ids, 8, add_bos=False, n_chunks=2).n_chunk == 2
    assert llama_perplexity_plan(ids, 8, add_bos=False, n_chunks=99).n_chunk == 5
    with pytest.raises(InputError, match="at least 2·n_ctx = 64 tokens"):
        llama_perplexity_plan(ids, 32, add_bos=False)
    with pytest.raises(InputError, match="bos_id"):
        llama_perplexity_plan(ids, 8, add_bos=True)


def test_batch_layout_follows_llama_perplexitys_n_seq_rule():
    from kldcard.capture.llama_perplexity import llama_perplexity_batching

    b = llama_perplexity_batching(128)  # -c 128, -b 2048, -ub 512: 16 sequences per decode
    assert (b.n_seq, b.n_batch, b.n_ubatch, b.context_size, b.decodes_per_chunk) == (16, 2048, 512, 2048, 1)
    assert list(b.groups(55)) == [(0, 16), (16, 16), (32, 16), (48, 7)]
    assert llama_perplexity_batching().n_seq == 4  # the default -c 512
    big = llama_perplexity_batching(4096)  # n_ctx > n_batch: one sequence fed in two decodes
    assert (big.n_seq, big.n_batch, big.n_ubatch, big.decodes_per_chunk) == (1, 2048, 512, 2)
    small = llama_perplexity_batching(128, n_batch=300, n_ubatch=1024)  # n_batch clamped to n_seq·n_ctx
    assert (small.n_seq, small.n_batch, small.n_ubatch) == (2, 256, 256)
    layout = b.fingerprint_fields()["batch_layout"]
    assert layout["sequences_per_decode"] == 16 and layout["kv_unified"] is False


def test_llama_perplexity_drops_one_trailing_newline():
    from kldcard.capture.llama_perplexity import llama_perplexity_text

    assert llama_perplexity_text("a\n\n") == "a\n" and llama_perplexity_text("a") == "a"
