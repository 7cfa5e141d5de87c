"""``[tool.kldcard]`` configuration from the nearest ``pyproject.toml``.

Keys (all optional)::

    [tool.kldcard]
    select = ["KLD1", "KLD2"]      # codes or prefixes; default: all rules
    ignore = ["KLD202"]
    output-format = "text"         # text | json | github | sarif
    fail-on = "warning"            # error | warning | info: lowest severity that fails (exit 1)

Command-line options win over the file: ``--select`` replaces ``select``, ``--ignore`` adds to
``ignore``. A config that cannot be read is a :class:`UsageError` (exit 2).
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kldcard.errors import UsageError

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10 needs the tomli backport
    import tomli as tomllib

OUTPUT_FORMATS = ("text", "json", "github", "sarif")
FAIL_LEVELS = ("error", "warning", "info")
DEFAULT_FAIL_ON = "info"  # any finding fails, like ruff


@dataclass
class LintConfig:
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    output_format: str = "text"
    fail_on: str = DEFAULT_FAIL_ON
    path: Path | None = None  # the pyproject.toml it came from


def find_pyproject(start: str | os.PathLike[str] | None = None) -> Path | None:
    """The nearest ``pyproject.toml`` at or above ``start`` (default: the current directory)."""
    here = Path(start or Path.cwd()).resolve()
    for d in [here, *here.parents]:
        candidate = d / "pyproject.toml"
        if candidate.is_file():
            return candidate
    return None


def load_config(path: str | os.PathLike[str] | None = None, *, start: str | os.PathLike[str] | None = None) -> LintConfig:
    """Read ``[tool.kldcard]`` from ``path`` or from the nearest pyproject.toml above ``start``."""
    pyproject = Path(path) if path is not None else find_pyproject(start)
    if pyproject is None:
        return LintConfig()
    try:
        data = tomllib.loads(pyproject.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise UsageError(f"{pyproject}: config file not found") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise UsageError(f"{pyproject}: cannot read config: {exc}") from None
    except tomllib.TOMLDecodeError as exc:
        raise UsageError(f"{pyproject}: invalid TOML: {exc}") from None
    table = data.get("tool", {}).get("kldcard")
    if table is None:
        return LintConfig(path=pyproject)
    return parse_table(table, pyproject)


def parse_table(table: Any, source: Path | None = None) -> LintConfig:
    where = f"{source}: [tool.kldcard]" if source else "[tool.kldcard]"
    if not isinstance(table, dict):
        raise UsageError(f"{where} must be a table")
    known = {"select", "ignore", "output-format", "fail-on"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    cfg = LintConfig(path=source)
    for key in ("select", "ignore"):
        if key in table:
            value = table[key]
            if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
                raise UsageError(f"{where}: {key} must be a list of rule codes or prefixes, e.g. [\"KLD1\"]")
            setattr(cfg, key, list(value))
    if "output-format" in table:
        if table["output-format"] not in OUTPUT_FORMATS:
            raise UsageError(f"{where}: output-format must be one of {', '.join(OUTPUT_FORMATS)}")
        cfg.output_format = table["output-format"]
    if "fail-on" in table:
        if table["fail-on"] not in FAIL_LEVELS:
            raise UsageError(f"{where}: fail-on must be one of {', '.join(FAIL_LEVELS)}")
        cfg.fail_on = table["fail-on"]
    return cfg
