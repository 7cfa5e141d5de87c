"""D4 statements of kldcard.lint.read.calibration_statements: an importance matrix by its maker or as what
changed the quants, an explicit no-calibration, Romance-language calibrating verbs; and a hardware name
before "-calibrated"."""

from __future__ import annotations

import pytest
from helpers_reading import reading

CLAIM = "The IQ4_XS file has a mean KLD of 0.0312 against BF16. "


def d4(text: str):
    return reading(CLAIM + text, 4)


@pytest.mark.parametrize(
    "text",
    [
        "The files were made with someone's imatrix and kept the output tensor at Q8_0.\n",
        "The imatrix is someone's own, built with their fork.\n",
        "The imatrix halves the worst-case KL of every tier.\n",
        "Se cuantizó con GPTQ, calibrando con 256 muestras de código.\n",
        "Fichiers calibrés sur des conversations internes.\n",
    ],
)
def test_a_calibration_said_in_these_forms_is_found(text):
    assert d4(text).status in ("incomplete", "stated"), d4(text)


def test_no_calibration_data_is_stated():
    d = d4("Codebooks are fitted by k-means with no calibration data.\n")
    assert d.status in ("stated", "incomplete"), d


@pytest.mark.parametrize(
    "text",
    [
        "It ties with the H100-calibrated sibling build.\n",  # hardware before -calibrated
        "Someone's imatrix uses long chat samples, so their PPL looks worse.\n",  # a remark, not how these were made
    ],
)
def test_hardware_and_remarks_are_not_read(text):
    assert d4(text).status == "missing", d4(text)
