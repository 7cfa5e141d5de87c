"""Locate the data that ships with kldcard: JSON Schemas and jinja2 templates.

In a checkout (editable install) they are the top-level ``schemas/`` and ``templates/`` folders; in a
wheel the build copies them to ``kldcard/_data/`` (see setup.py).
"""

from __future__ import annotations

from pathlib import Path

_PKG = Path(__file__).resolve().parent


def _data_dir(name: str) -> Path:
    for candidate in (_PKG.parent / name, _PKG / "_data" / name):
        if candidate.is_dir():
            return candidate
    raise FileNotFoundError(f"kldcard installation is missing its {name}/ folder")


def template_dir() -> Path:
    """Directory holding the jinja2 templates (``*.md.j2``)."""
    return _data_dir("templates")


def schema_dir() -> Path:
    """Directory holding the generated JSON Schemas (``*.schema.json``)."""
    return _data_dir("schemas")
