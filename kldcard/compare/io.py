"""Writing compare results: the result JSON and the per-token table, each atomically
(temp file in the same directory + ``os.replace``), so Ctrl-C never leaves half a file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from kldcard.compare.divergence import TokenDivergence
from kldcard.errors import InputError, UsageError
from kldcard.files import atomic_path, check_output_file, output_errors, write_atomic

if TYPE_CHECKING:
    from kldcard.compare.result import CompareResult

__all__ = ["check_output_file", "output_errors", "read_per_token", "write_per_token", "write_result"]


def write_result(result: CompareResult, path: str | os.PathLike) -> Path:
    """Write the result JSON atomically (temp file + rename)."""
    p = Path(path)
    with output_errors(p):
        write_atomic(p, result.model_dump_json(indent=2) + "\n")
    return p


def write_per_token(td: TokenDivergence, path: str | os.PathLike) -> Path:
    """Write per-token values atomically: ``.npz`` (numpy arrays) or ``.csv`` (one row a position)."""
    p = Path(path)
    cols = td.columns()
    if p.suffix == ".npz":
        with output_errors(p), atomic_path(p, suffix=".npz") as tmp, open(tmp, "wb") as f:
            np.savez(f, **cols)
    elif p.suffix == ".csv":
        names = list(cols)
        with output_errors(p), atomic_path(p, suffix=".csv") as tmp, open(tmp, "w", encoding="utf-8") as f:
            f.write("# divergences in nats; forward_kl = KL(P_ref || P_cand); delta_p = p_cand - p_ref\n")
            f.write(",".join(names) + "\n")
            for i in range(len(td.positions)):
                f.write(",".join(_fmt(cols[c][i]) for c in names) + "\n")
    else:
        raise UsageError(f"per-token file must end in .npz or .csv, not {p.name!r}")
    return p


def _fmt(x) -> str:
    if isinstance(x, (bool, np.bool_)):
        return "1" if x else "0"
    if isinstance(x, (int, np.integer)):
        return str(int(x))
    return repr(float(x))


def read_per_token(path: str | os.PathLike, columns: tuple[str, ...] = ("position", "forward_kl")) -> dict[str, np.ndarray]:
    """Columns of a per-token file written by :func:`write_per_token` (``.npz`` or ``.csv``)."""
    p = Path(path)
    if not p.is_file():
        raise InputError(f"{p}: no such per-token file")
    try:
        if p.suffix == ".npz":
            with np.load(p, allow_pickle=False) as z:
                return {k: z[k] for k in columns}
        arr = np.genfromtxt(p, delimiter=",", names=True, comments="#")
        return {k: np.asarray(arr[k]) for k in columns}
    except (OSError, KeyError, ValueError) as exc:
        raise InputError(f"{p}: unreadable per-token file: {exc}") from None
