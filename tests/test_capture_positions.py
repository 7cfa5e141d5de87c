"""Position schemes and context windows (disclosure 6), without any engine."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from kldcard.capture.positions import make_windows, parse_positions, select_positions
from kldcard.errors import UsageError


def positions(spec: str, n_tokens: int, n_ctx: int | None = None) -> list[int]:
    scheme = parse_positions(spec)
    return select_positions(scheme, make_windows(n_tokens, n_ctx, scheme)).tolist()


def test_all_keeps_every_position_that_has_a_next_token():
    assert positions("all", 5) == [0, 1, 2, 3]


def test_every_n_from_offset():
    assert positions("every:32", 100) == [0, 32, 64, 96]
    assert positions("every:32@5", 100) == [5, 37, 69]
    assert positions("every", 70) == [0, 32, 64]  # N defaults to 32


def test_explicit_list_is_sorted_and_checked():
    assert positions("list:9,1,5", 20) == [1, 5, 9]
    with pytest.raises(UsageError, match="cannot be scored"):
        positions("list:1,19", 20)  # 19 is the last token: nothing to predict
    with pytest.raises(UsageError, match="distinct"):
        parse_positions("list:1,1")


def test_second_half_is_llama_perplexity_scheme():
    # Two whole windows of 8 (the 3 leftover tokens are dropped), positions 4..6 of each.
    assert positions("second-half", 19, n_ctx=8) == [4, 5, 6, 12, 13, 14]
    w = make_windows(19, 8, parse_positions("second-half"))
    assert (w.starts, w.lengths) == ((0, 8), (8, 8))


def test_second_half_needs_n_ctx_and_a_whole_window():
    with pytest.raises(UsageError, match="needs --n-ctx"):
        positions("second-half", 100)
    with pytest.raises(UsageError, match="whole window"):
        positions("second-half", 10, n_ctx=16)


def test_windows_never_score_across_their_boundary():
    # Window [0, 4) then [4, 7): position 3 would predict token 4, which is not in its window.
    assert positions("all", 7, n_ctx=4) == [0, 1, 2, 4, 5]


@pytest.mark.parametrize("bad", ["every:0", "every:x", "every:4@-1", "list:", "list:a", "sometimes", "list:-3"])
def test_bad_specs_are_usage_errors(bad):
    with pytest.raises(UsageError):
        parse_positions(bad)


def test_scheme_meta_matches_the_manifest_vocabulary():
    assert parse_positions("every:32@3").meta() == {"scheme": "every-n", "every_n": 32, "offset": 3}
    assert parse_positions("second-half").meta() == {"scheme": "second-half"}
    assert parse_positions("list:2,4").meta() == {"scheme": "explicit", "explicit": [2, 4]}


@given(
    n_tokens=st.integers(2, 400),
    n_ctx=st.one_of(st.none(), st.integers(2, 120)),
    every=st.integers(1, 40),
    offset=st.integers(0, 50),
)
def test_every_n_positions_are_increasing_in_range_and_scorable(n_tokens, n_ctx, every, offset):
    scheme = parse_positions(f"every:{every}@{offset}")
    w = make_windows(n_tokens, n_ctx, scheme)
    pos = select_positions(scheme, w)
    assert pos.dtype == np.int64
    assert np.all(np.diff(pos) > 0)
    assert np.all((pos - offset) % every == 0) and np.all(pos >= offset)
    ends = np.array(w.starts) + np.array(w.lengths)
    # every position's next token lies in the same window
    for p in pos:
        k = np.searchsorted(np.array(w.starts), p, side="right") - 1
        assert p + 1 < ends[k]
    assert sum(w.lengths) == n_tokens
