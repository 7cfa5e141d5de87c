"""Writing YAML into a card: a safe dumper that keeps the digits it is given.

Reading is :mod:`kldcard.card.document`'s job (PyYAML's YAML 1.1 loader, as the Hub uses). Writing
never pastes strings into YAML: values go through a SafeDumper, and a number is emitted only in a
spelling YAML 1.1 reads back as a float (``1e-3`` loads as the *string* "1e-3"; ``1.0e-03`` does not).
"""

from __future__ import annotations

import re
from typing import Any

import yaml

# YAML 1.1's float as PyYAML resolves it: a dot is required, and so is an exponent sign.
_YAML11_FLOAT = re.compile(r"^[-+]?(?:[0-9][0-9_]*)?\.[0-9.]*(?:[eE][-+][0-9]+)?$")


def loads_as_yaml11_float(text: str) -> bool:
    """True when PyYAML's resolver reads ``text`` as a float (used to guard what we emit)."""
    return bool(_YAML11_FLOAT.match(text))


class Num(float):
    """A float that is written to YAML exactly as ``text`` (the digits the body section shows)."""

    text: str

    def __new__(cls, text: str) -> Num:
        if not loads_as_yaml11_float(text):  # guard: never emit a number PyYAML reads as a string
            raise ValueError(f"{text!r} would not load as a float")
        obj = super().__new__(cls, float(text))
        obj.text = text
        return obj


class _Dumper(yaml.SafeDumper):
    """SafeDumper that keeps :class:`Num` digits and never emits anchors/aliases."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


class FlowMap(dict):
    """A mapping written in YAML flow style (``{a: 1, b: 2}``), for compact front matter."""


class FlowSeq(list):
    """A list written in YAML flow style (``[1, 2]``)."""


_Dumper.add_representer(FlowMap, lambda d, m: d.represent_mapping("tag:yaml.org,2002:map", m, flow_style=True))
_Dumper.add_representer(FlowSeq, lambda d, s: d.represent_sequence("tag:yaml.org,2002:seq", s, flow_style=True))
_Dumper.add_representer(Num, lambda d, n: d.represent_scalar("tag:yaml.org,2002:float", n.text))


def dump_yaml(data: Any) -> str:
    """Block-style YAML (LF newlines, UTF-8 text, no line wrapping, key order kept)."""
    return yaml.dump(
        data,
        Dumper=_Dumper,
        default_flow_style=False,
        sort_keys=False,
        allow_unicode=True,
        width=2**31 - 1,
        indent=2,
    )
