"""YAML in a card: the one front-matter reader, and a safe dumper that keeps the digits it is given.

Reading (:func:`compose_and_load`, :func:`compose`, :func:`load`) is PyYAML's YAML 1.1 safe loader,
as the Hub uses, run through libyaml when PyYAML was built with it, behind one budget for hostile
bytes (:func:`check_budget`): at most :data:`MAX_DEPTH` nested collections and :data:`MAX_ALIAS_NODES`
nodes added by aliases (a 400-byte "billion laughs" card expands to 10^9 nodes in every walk of its
data). Nothing in kldcard reads YAML any other way. Writing
never pastes strings into YAML: values go through a SafeDumper, and a number is emitted only in a
spelling YAML 1.1 reads back as a float (``1e-3`` loads as the *string* "1e-3"; ``1.0e-03`` does not).
"""

from __future__ import annotations

import gc
from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from typing import Any

import yaml

# libyaml's parser is ~10x faster than PyYAML's pure-Python one, and cards with an MTEB model-index
# carry hundreds of KB of front matter (a 0.9 MB one took 9 s to read). Same marks (character
# offsets, lines, columns), same constructor and resolver, so the same data (tests/test_card_yaml.py).
_FAST_LOADER = getattr(yaml, "CSafeLoader", None)
# Texts where libyaml and PyYAML are known to disagree (found by tests/test_card_yaml.py and review),
# read by PyYAML alone: a "!" where a tag can start ("!" alone loads as None in PyYAML, "" in libyaml;
# "Great model!" is not a tag); a block-scalar header followed by "#" without a space (PyYAML refuses
# it); a byte-order mark inside the text; any "?" (explicit keys, and "{1?}", which libyaml reads;
# an empty scalar's mark at the very end differs by a line); a "---"/"..." document marker; a lone "="
# scalar (PyYAML tags it "value"). Large front matter (model-index results) rarely has any of these.
_DISAGREE = re.compile(
    r"(?:^|[\s\[{,:?-])!|[|>][-+0-9]*#|\ufeff|\?|(?:^|\n)(?:---|\.\.\.)"
    r"|(?:^|[\s\[{,:-])=(?:$|[\s,\]}])"
)


# Real front matter nests about ten levels; PyYAML's composer recurses three frames per level (a
# RecursionError near 330) and libyaml's composer recurses in C, so depth is bounded before composing.
MAX_DEPTH = 100
# Aliases are shared nodes, but everything that walks the data (JSON pointers, fixes, validation)
# walks each alias again: the nodes they add, counted as expanded, are bounded.
MAX_ALIAS_NODES = 100_000


class BudgetError(yaml.MarkedYAMLError):
    """YAML over the budget for hostile bytes (too deep, or aliases that expand too far)."""


def check_budget(text: str, loader: type = yaml.SafeLoader) -> None:
    """Raise :class:`BudgetError` (a YAMLError, with the mark where the limit was crossed) when ``text``
    nests deeper than :data:`MAX_DEPTH` or its aliases expand to over :data:`MAX_ALIAS_NODES` nodes.

    One pass over the parser's events, which neither recurses nor expands anything: a collection's
    expanded size is known at its end event, an alias adds its anchor's. Parse errors are left to
    the loader that follows (the events stop there)."""
    p = loader(text)
    try:
        sizes: list[int] = []  # expanded nodes of each open collection
        anchors: list[str | None] = []
        size_of: dict[str, int] = {}
        added = 0
        while True:
            try:
                event = p.get_event()
            except yaml.YAMLError:
                return
            if event is None or isinstance(event, yaml.StreamEndEvent):
                return
            n = 0
            if isinstance(event, (yaml.MappingStartEvent, yaml.SequenceStartEvent)):
                if len(sizes) >= MAX_DEPTH:
                    raise BudgetError(None, None, f"nests too deeply (over {MAX_DEPTH} levels)", event.start_mark)
                sizes.append(1)
                anchors.append(event.anchor)
                continue
            if isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                n, anchor = sizes.pop(), anchors.pop()
                if anchor is not None:
                    size_of[anchor] = n
            elif isinstance(event, yaml.ScalarEvent):
                n = 1
                if event.anchor is not None:
                    size_of[event.anchor] = 1
            elif isinstance(event, yaml.AliasEvent):
                n = size_of.get(event.anchor, 1)
                added += n
                if added > MAX_ALIAS_NODES:
                    raise BudgetError(None, None, f"aliases expand to over {MAX_ALIAS_NODES:,} nodes "
                                      "(an alias bomb?); write the values out", event.start_mark)
            if sizes:
                sizes[-1] += n
    finally:
        p.dispose()


def compose(text: str) -> yaml.Node | None:
    """The root node of one YAML document, composed by PyYAML's own parser within the budget: the
    splice and the fixes edit text at its nodes' marks and read their styles, where libyaml's
    nodes differ in details (a plain scalar's style)."""
    check_budget(text)
    return yaml.compose(text, Loader=yaml.SafeLoader)


def load(text: str) -> Any:
    """The data of one YAML document (see :func:`compose_and_load`)."""
    return compose_and_load(text)[1]


def compose_and_load(text: str) -> tuple[yaml.Node | None, Any]:
    """(root node, data) of one YAML document, composed once and constructed from that node, within
    the budget of :func:`check_budget`.

    libyaml first; on any error the pure-Python loader reads the text again, so error messages
    (with their line and column) are PyYAML's, and so is every text where the two parsers disagree
    (the property tests in tests/test_card_yaml.py search for such texts).
    """
    # libyaml accepts tabs where PyYAML refuses them ("1\t"), and huggingface_hub reads cards with
    # PyYAML: a card with a tab in its front matter is read by the pure loader alone.
    fast = _FAST_LOADER is not None and "\t" not in text and not _DISAGREE.search(text)
    loaders = [_FAST_LOADER, yaml.SafeLoader] if fast else [yaml.SafeLoader]
    # The cyclic garbage collector is paused while the nodes and data are built: it would walk every
    # live node on each of its passes, which made a 6,400-result model-index 4x slower than linear
    # (tests/test_card_yaml.py). Nothing here builds garbage cycles; collection resumes afterwards.
    paused = gc.isenabled()
    gc.disable()
    try:
        for i, cls in enumerate(loaders):
            check_budget(text, cls)  # each parser that composes is bounded (they may disagree)
            loader = cls(text)
            try:
                node = loader.get_single_node()
                try:
                    return node, (loader.construct_document(node) if node is not None else None)
                except (ValueError, IndexError, TypeError, OverflowError) as exc:
                    # an explicit tag on a value it cannot read ("!!int x", "!!timestamp 2001-13-45"):
                    # PyYAML's constructors raise plain Python errors; a card reader needs a YAML one
                    raise yaml.constructor.ConstructorError(
                        None, None, f"cannot read a tagged value ({exc})", getattr(node, "start_mark", None)
                    ) from None
            except yaml.YAMLError:
                if i == len(loaders) - 1:
                    raise
            finally:
                loader.dispose()
    finally:
        if paused:
            gc.enable()
    raise AssertionError("unreachable")  # pragma: no cover

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
