"""The one progress mechanism: a rich bar on stderr, shown only on a terminal (CI logs stay clean).

Library functions take a plain callback (``advance(n)`` or ``update(done, total)``) and never draw;
callers that want a bar wrap it here. Both shapes end in the same bar.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any


@contextmanager
def _bar(what: str, unit: str, total: int | None, enabled: bool) -> Iterator[tuple[Any, Any] | None]:
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn(what), BarColumn(), MofNCompleteColumn(), TextColumn(unit), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        yield bar, bar.add_task(what, total=total)


@contextmanager
def position_progress(total: int, what: str, enabled: bool = True,
                      unit: str = "positions") -> Iterator[Callable[[int], None] | None]:
    """Yield ``advance(n)`` for a bar over ``total`` items, or None when no bar is shown."""
    with _bar(what, unit, total, enabled) as shown:
        yield None if shown is None else (lambda n: shown[0].advance(shown[1], n))


@contextmanager
def counted_progress(what: str, enabled: bool = True,
                     unit: str = "chunks") -> Iterator[Callable[[int, int], None] | None]:
    """Yield ``update(done, total)`` for callers that learn the total as they go, or None."""
    with _bar(what, unit, None, enabled) as shown:
        yield None if shown is None else (lambda done, total: shown[0].update(shown[1], completed=done, total=total))
