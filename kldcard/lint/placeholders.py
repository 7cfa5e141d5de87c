"""``TODO`` placeholders in a ``kld_evaluation`` block (what ``kldcard lint --fix --scaffold`` writes
where the card's text does not say): a block that holds any is a draft, reported placeholder by
placeholder (KLD013) and otherwise left alone until they are filled."""

from __future__ import annotations

from kldcard import lazy_re as re  # patterns compile on first use: one-card lint start-up (kldcard/lazy_re.py)
from typing import Any

TODO = "TODO"
TODO_PREFIX = re.compile(r"^\s*TODO\b")


def is_todo(value: Any) -> bool:
    return isinstance(value, str) and bool(TODO_PREFIX.match(value))


def todo_pointers(node: Any, pointer: str = "") -> list[str]:
    """JSON pointers (below ``pointer``) of every placeholder in ``node``, in document order."""
    if is_todo(node):
        return [pointer]
    out: list[str] = []
    if isinstance(node, dict):
        for k, v in node.items():
            out += todo_pointers(v, f"{pointer}/{str(k).replace('~', '~0').replace('/', '~1')}")
    elif isinstance(node, list):
        for i, v in enumerate(node):
            out += todo_pointers(v, f"{pointer}/{i}")
    return out
