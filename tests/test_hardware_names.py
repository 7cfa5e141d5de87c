"""The table of accelerators and machines (kldcard.lint.read.hardware_names): each spelling matches its own sample
whole, and the D2 reading quotes that sample from a measurement sentence, so a spelling that stops matching the
machine it was written for fails here by name."""

from __future__ import annotations

import re

import pytest
from helpers_reading import reading

from kldcard.lint.read.hardware_names import HARDWARE, TABLE


@pytest.mark.parametrize("entry", TABLE, ids=lambda a: a.sample)
def test_each_spelling_matches_its_sample_whole(entry):
    assert re.fullmatch(entry.spelling, entry.sample, re.IGNORECASE | re.ASCII)
    assert re.search(HARDWARE, f"measured on {entry.sample}.", re.IGNORECASE).group(0) == entry.sample


@pytest.mark.parametrize("entry", TABLE, ids=lambda a: a.sample)
def test_each_sample_is_read_as_the_runs_hardware(entry):
    d = reading(f"The mean KLD vs BF16 is 0.012 nats, measured on {entry.sample}.\n", 2)
    assert d.status != "missing" and any(entry.sample in e.text for e in d.evidence), d


def test_a_count_glued_to_the_name_is_a_node_size_and_a_cjk_character_no_word_part():
    assert re.search(HARDWARE, "8xH200", re.IGNORECASE).group(0) == "H200"
    assert re.search(HARDWARE, "在H100上", re.IGNORECASE).group(0) == "H100"
    assert re.search(HARDWARE, "PH1000X", re.IGNORECASE) is None  # inside a word
