"""A truncated vocabulary gets its caveat in the rendered section: llama.cpp's base-file floor (with
the measured self-KL of that encoding) and top-k captures (which bound the treatment gives)."""

from __future__ import annotations

from helpers_render import make_evaluation

from kldcard.render.section import render_section

SIZES = {"reference_vocab_size": 151936, "candidate_vocab_size": 151936, "alignment": "identical"}


def test_full_vocabulary_has_no_truncation_caveat():
    text = render_section(make_evaluation())
    assert "nat floor" not in text and "Only the top" not in text


def test_llama_base_file_floor_states_what_it_cannot_resolve():
    text = render_section(make_evaluation(vocabulary={"truncation": "floor", "floor_nats": 16.0, **SIZES}))
    assert "16-nat floor" in text and "1.7e-03 nats per token" in text and "not resolved" in text


def test_top_k_says_which_bound_the_tail_treatment_gives():
    lumped = render_section(make_evaluation(vocabulary={"truncation": "top-k", "top_k": 20, "tail": "lumped", **SIZES}))
    assert "Only the top 20 log-probabilities" in lumped and "a lower bound" in lumped
    union = render_section(
        make_evaluation(vocabulary={"truncation": "top-k", "top_k": 20, "tail": "union-renormalised", **SIZES})
    )
    assert "neither a lower nor an upper bound" in union
