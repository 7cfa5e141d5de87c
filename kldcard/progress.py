"""The one progress mechanism: a rich bar on stderr, shown only on a terminal (CI logs stay clean).

Library functions take a plain callback (``advance(n)`` or ``update(done, total)``) and never draw;
callers that want a bar wrap it here. Both shapes end in the same bar.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def position_progress(total: int, what: str, enabled: bool = True,
                      unit: str = "positions") -> Iterator[Callable[[int], None] | None]:
    """Yield ``advance(n)`` for a bar over ``total`` items, or None when no bar is shown."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    with Progress(TextColumn(what), BarColumn(), MofNCompleteColumn(), TextColumn(unit), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(what, total=total)
        yield lambda n: bar.advance(task, n)


@contextmanager
def counted_progress(what: str, enabled: bool = True,
                     unit: str = "chunks") -> Iterator[Callable[[int, int], None] | None]:
    """Yield ``update(done, total)`` for callers that learn the total as they go, or None."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeRemainingColumn,
    )

    with Progress(TextColumn(what), BarColumn(), MofNCompleteColumn(), TextColumn(unit), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(what, total=None)
        yield lambda done, total: bar.update(task, completed=done, total=total)
