"""Past one machine: kldcard comparisons as task graphs on a Dask cluster.

- :mod:`kldcard.distributed.urls` — open a capture by URL through fsspec (memory-mapped when local, byte
  ranges otherwise), so workers read shared storage.
- :mod:`kldcard.distributed.tasks` — the pure task functions a worker runs (per-token values of a row range,
  computed with :mod:`kldcard.compare.divergence`'s kernel, exactly as the local stream does).
- :mod:`kldcard.distributed.cluster` — connecting (short timeout, one clear line) and the ``--scheduler`` options.
- :mod:`kldcard.distributed.compare` — distributed ``compare`` and many-stack comparison, assembled on the client
  in position order and summarised with kldcard's own summary code: identical to the local run.
- :mod:`kldcard.distributed.matrix` — many references × many candidates × many prompts as one task graph,
  collected into one table (JSON + Markdown).

Without a scheduler nothing here is needed: local streaming stays the default path.

Owns running compare on a Dask cluster. May import: errors, files, progress, capture, compare,
stack. The ``--scheduler`` options live in :mod:`kldcard.cli.cluster`; nothing here parses arguments.
"""

from __future__ import annotations

__all__: list[str] = []
