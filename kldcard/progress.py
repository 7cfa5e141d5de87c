"""One progress bar for long position loops: rich, on stderr, only on a terminal (CI logs stay clean)."""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager


@contextmanager
def position_progress(total: int, what: str, enabled: bool = True,
                      unit: str = "positions") -> Iterator[Callable[[int], None] | None]:
    """Yield ``advance(n)`` for a bar over ``total`` positions, or None when no bar is shown."""
    if not enabled or not sys.stderr.isatty():
        yield None
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeRemainingColumn

    with Progress(TextColumn(what), BarColumn(), MofNCompleteColumn(), TextColumn(unit), TimeRemainingColumn(),
                  console=Console(stderr=True), transient=True) as bar:
        task = bar.add_task(what, total=total)
        yield lambda n: bar.advance(task, n)
