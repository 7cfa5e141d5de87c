"""Writing compare results: the result JSON and the per-token table, each atomically
(temp file in the same directory + ``os.replace``), so Ctrl-C never leaves half a file."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from .atomic import atomic_path
from .divergence import TokenDivergence
from .errors import UsageError

if TYPE_CHECKING:
    from .compare import CompareResult

__all__ = ["write_per_token", "write_result"]


def _atomic_write(path: Path, write: Callable[[str], None], suffix: str) -> None:
    with atomic_path(path, suffix=suffix) as tmp:
        write(str(tmp))


def write_result(result: CompareResult, path: str | os.PathLike) -> Path:
    """Write the result JSON atomically (temp file + rename)."""
    p = Path(path)
    text = result.model_dump_json(indent=2) + "\n"
    _atomic_write(p, lambda tmp: Path(tmp).write_text(text, encoding="utf-8"), ".tmp")
    return p


def write_per_token(td: TokenDivergence, path: str | os.PathLike) -> Path:
    """Write per-token values atomically: ``.npz`` (numpy arrays) or ``.csv`` (one row a position)."""
    p = Path(path)
    cols = td.columns()
    if p.suffix == ".npz":

        def write_npz(tmp: str) -> None:
            with open(tmp, "wb") as f:
                np.savez(f, **cols)

        _atomic_write(p, write_npz, ".npz")
    elif p.suffix == ".csv":

        def write_csv(tmp: str) -> None:
            names = list(cols)
            with open(tmp, "w", encoding="utf-8") as f:
                f.write("# divergences in nats; forward_kl = KL(P_ref || P_cand); delta_p = p_cand - p_ref\n")
                f.write(",".join(names) + "\n")
                for i in range(len(td.positions)):
                    f.write(",".join(_fmt(cols[c][i]) for c in names) + "\n")

        _atomic_write(p, write_csv, ".csv")
    else:
        raise UsageError(f"per-token file must end in .npz or .csv, not {p.name!r}")
    return p


def _fmt(x) -> str:
    if isinstance(x, (bool, np.bool_)):
        return "1" if x else "0"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return repr(float(x))
