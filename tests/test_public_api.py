"""The documented public API: kldcard.lint_card, capture, compare, render_section work as functions
whatever was imported before (the names are also subpackages/modules)."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("first_import", ["", "import kldcard.compare.run, kldcard.capture.store, kldcard.render.section"])
def test_public_names_are_callables(first_import: str):
    code = f"""
{first_import}
import kldcard
for name in ("lint_card", "capture", "compare", "render_section"):
    obj = getattr(kldcard, name)
    assert callable(obj), (name, obj)
    assert getattr(kldcard, name) is obj or callable(getattr(kldcard, name))
from kldcard.compare.run import CompareResult
assert kldcard.compare.run.CompareResult is CompareResult or callable(kldcard.compare.run)
print("ok")
"""
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "ok"


def test_all_lists_the_api():
    import kldcard

    assert {"lint_card", "capture", "compare", "render_section"} <= set(kldcard.__all__)
