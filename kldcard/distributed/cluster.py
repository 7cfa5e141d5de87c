"""Connecting to a Dask scheduler, running kldcard task graphs on it, and the ``--scheduler`` options.

An unreachable scheduler is one clear line (an :class:`~kldcard.errors.InputError`, exit 2) after a
short connect timeout (10 s by default), never a hang or a traceback. Tasks are submitted with
``pure=True`` (deterministic keys): when a worker dies the scheduler re-runs its tasks elsewhere and,
the tasks being pure, the result does not change.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

from kldcard.errors import EngineNotInstalled, InputError, UsageError

__all__ = ["DEFAULT_CONNECT_TIMEOUT", "connect", "run_tasks", 
           "total_threads"]

DEFAULT_CONNECT_TIMEOUT = 10.0  # seconds


def _import_distributed():
    try:
        import distributed
    except ImportError as exc:
        raise EngineNotInstalled("dask distributed", "dist", "distributed") from exc
    return distributed


def connect(address: str, timeout: float = DEFAULT_CONNECT_TIMEOUT):
    """A ``distributed.Client`` for ``address`` (``tcp://host:port`` or a scheduler-file path).

    Raises InputError (one line) when the scheduler cannot be reached within ``timeout`` seconds."""
    if timeout <= 0:
        raise UsageError("--connect-timeout must be positive")
    distributed = _import_distributed()
    is_file = address.endswith(".json") or (os.path.sep in address and "://" not in address)
    if is_file and not Path(address).is_file():
        raise InputError(f"scheduler file {address} does not exist (is the scheduler running?)")
    kwargs: dict[str, Any] = {"scheduler_file": address} if is_file else {"address": address}
    if not is_file:
        _probe(address, timeout)
    # Built in two steps so that a failed start can be closed here: otherwise the half-made client's
    # finaliser prints its own traceback when it is collected.
    client = distributed.Client.__new__(distributed.Client)
    try:
        client.__init__(timeout=timeout, set_as_default=False, **kwargs)
        return client
    except ValueError as exc:
        _close_quietly(client)
        raise UsageError(f"bad scheduler address {address!r}: {exc}") from None
    except Exception as exc:  # timeouts, refused connections, and a non-Dask service answering
        _close_quietly(client)
        if not isinstance(exc, (OSError, TimeoutError)):
            raise InputError(f"{address} answered, but not as a Dask scheduler ({type(exc).__name__}); "
                             "check --scheduler") from None
        reason = " ".join(str(exc).split())[:160] or type(exc).__name__
        raise InputError(
            f"cannot reach the Dask scheduler at {address} within {timeout:g} s ({reason}); "
            "check --scheduler, or run without it to compare on this machine"
        ) from None


def _probe(address: str, timeout: float) -> None:
    """A plain TCP connect first: a refused or silent port is reported without starting a client."""
    import socket
    from urllib.parse import urlsplit

    if "://" in address and not address.startswith(("tcp://", "tls://")):
        return  # other transports (inproc, ucx): leave it to distributed
    try:
        u = urlsplit(address if "://" in address else f"tcp://{address}")
        host, port = u.hostname, u.port or 8786
    except ValueError as exc:
        raise UsageError(f"bad scheduler address {address!r}: {exc}") from None
    if not host:
        raise UsageError(f"bad scheduler address {address!r}: expected tcp://HOST:PORT or a scheduler file")
    try:
        with socket.create_connection((host, port), timeout=timeout):
            pass
    except OSError as exc:
        reason = "timed out" if isinstance(exc, TimeoutError) else (exc.strerror or type(exc).__name__)
        raise InputError(
            f"cannot reach the Dask scheduler at {address} within {timeout:g} s ({reason}); "
            "check --scheduler, or run without it to compare on this machine"
        ) from None


def _close_quietly(client) -> None:
    import contextlib

    with contextlib.suppress(BaseException):
        client.close(timeout=1)


def total_threads(client) -> int:
    """Worker threads on the cluster right now."""
    return int(sum(client.nthreads().values())) or 1


def run_tasks(client, tasks: Sequence[tuple[Callable, tuple]], *, on_result: Callable[[int, Any], None],
              progress: Callable[[int], None] | None = None, weights: Sequence[int] | None = None) -> None:
    """Submit all ``tasks`` (function, args) as one graph and call ``on_result(index, value)`` as each
    finishes (in completion order; assembly must not depend on it). ``progress(weight)`` follows.

    A worker lost mid-run is the scheduler's business: it re-runs that worker's tasks elsewhere.
    A task that keeps killing workers, or a lost scheduler, is one InputError line."""
    distributed = _import_distributed()
    futures = [client.submit(fn, *args, pure=True) for fn, args in tasks]
    index = {id(f): i for i, f in enumerate(futures)}  # keys repeat when two tasks are identical
    try:
        for fut in distributed.as_completed(futures, loop=client.loop):
            i = index[id(fut)]
            on_result(i, fut.result())
            fut.release()
            if progress is not None:
                progress(weights[i] if weights is not None else 1)
    except distributed.KilledWorker as exc:
        raise InputError(f"a task failed on several workers in a row and was given up: {exc}") from None
    except (OSError, distributed.CancelledError, TimeoutError) as exc:
        reason = " ".join(str(exc).split())[:160] or type(exc).__name__
        raise InputError(f"lost the Dask scheduler during the run ({reason}); nothing was written") from None
    finally:
        for f in futures:
            f.release()


def iter_ranges(cuts: Sequence[int], n: int, rows: int) -> Iterator[tuple[int, int]]:
    """Row ranges of at most ``rows`` between consecutive ``cuts`` (shard starts) up to ``n``."""
    edges = sorted(set(cuts) | {n})
    for a, b in zip(edges, edges[1:]):
        for i in range(a, b, rows):
            yield i, min(i + rows, b)
