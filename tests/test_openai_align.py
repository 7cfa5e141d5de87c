"""Echo alignment of llama-cpp-python's answers, on the layouts its code produces (no server)."""

from __future__ import annotations

import pytest

from kldcard.capture.openai_align import align_echo, echo_layout
from kldcard.errors import InputError


def _server_entries(prompt: list[int], bos: int | None, sampled: int = 999) -> tuple[list[int], list[int]]:
    """(entry token ids, their positions) the way Llama._create_completion builds them."""
    start = 1 if bos is not None and prompt[0] == bos else 0
    all_tokens = prompt[start:] + [sampled]
    kept = [(t, i) for i, t in enumerate(all_tokens[: len(prompt)]) if t != bos]
    return [t for t, _ in kept], [i for _, i in kept]


@pytest.mark.parametrize("bos", [None, 11, 1])
def test_every_dropped_id_is_found_from_counts_and_strings(bos):
    prompt = [1, 5, 11, 7, 11, 11, 8, 9, 11, 5, 6] if bos == 1 else [5, 11, 7, 11, 11, 8, 9, 11, 5, 6]
    entries, positions = _server_entries(prompt, bos)
    ids = [t if t != 999 else None for t in entries]  # the sampled token's string maps to nothing known
    assert align_echo(prompt, ids) == positions
    assert align_echo(prompt, ids, bos=bos) == positions


def test_unknown_strings_do_not_break_the_alignment():
    """Partial UTF-8 tokens echo as "" and whitespace runs may tokenize differently alone: None."""
    prompt = [40, 41, 11, 42, 11, 43, 44, 45, 46, 11]
    entries, positions = _server_entries(prompt, 11)
    ids = [None if i % 2 else t for i, t in enumerate(entries)]
    assert align_echo(prompt, ids) == positions


def test_a_string_that_contradicts_every_layout_is_refused():
    prompt = [5, 6, 7, 8]
    with pytest.raises(InputError, match="cannot align the 4 echoed prompt tokens"):
        align_echo(prompt, [5, 60, 70, 80])
    with pytest.raises(InputError, match="no id accounts"):
        align_echo(prompt, [5, 6])


def test_layout_with_a_sampled_token_equal_to_bos():
    prompt = [1, 5, 6]
    assert echo_layout(prompt, 2, 1) == [0, 1]  # the sampled token was the BOS id too: dropped
    assert echo_layout(prompt, 3, 1) == [0, 1, 2]
