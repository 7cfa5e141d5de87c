"""``[tool.kldcard]`` configuration from the nearest ``pyproject.toml``.

Keys (all optional)::

    [tool.kldcard]
    select = ["KLD1", "KLD2"]      # codes or prefixes; default: all rules
    extend-select = ["KLD009"]     # added to select
    ignore = ["KLD202"]
    output-format = "text"         # text | full | json | json-lines | github | gitlab | junit | sarif
    fail-on = "warning"            # error | warning | info: lowest severity that fails (exit 1)

    [tool.kldcard.per-file-ignores]
    "legacy/**/README.md" = ["KLD3"]   # glob (relative to this pyproject.toml, or a bare file name) -> codes

Command-line options win over the file: ``--select`` replaces ``select``, ``--extend-select`` and
``--ignore`` add to theirs; ``-o`` wins over ``KLDCARD_OUTPUT_FORMAT``, which wins over
``output-format``. A config that cannot be read is a :class:`UsageError` (exit 2).
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kldcard.card.document import CARD_BYTES_CEILING, MAX_CARD_BYTES
from kldcard.errors import InputError, UsageError
from kldcard.files import loads_toml, read_text

OUTPUT_FORMATS = ("text", "full", "json", "json-lines", "github", "gitlab", "junit", "sarif")
OUTPUT_FORMAT_ENV = "KLDCARD_OUTPUT_FORMAT"
FAIL_LEVELS = ("error", "warning", "info")
DEFAULT_FAIL_ON = "info"  # any finding fails, like ruff


@dataclass
class LintConfig:
    select: list[str] | None = None
    ignore: list[str] = field(default_factory=list)
    extend_select: list[str] = field(default_factory=list)
    per_file_ignores: dict[str, list[str]] = field(default_factory=dict)  # glob -> codes or prefixes
    output_format: str = "text"
    fail_on: str = DEFAULT_FAIL_ON
    max_card_bytes: int = MAX_CARD_BYTES  # larger cards are refused (exit 2): see card.document
    path: Path | None = None  # the pyproject.toml it came from

    def ignored_for(self, file: str) -> list[str]:
        """Codes or prefixes ``per-file-ignores`` turns off for ``file`` (as given to the linter)."""
        root = self.path.parent if self.path is not None else None
        return [c for glob, codes in self.per_file_ignores.items() if glob_matches(glob, file, root) for c in codes]


# Glob tokens: a literal character, "?" (one, not "/"), "*" (any run without "/"), "**" (any run),
# "**/" (nothing, or any run that ends in "/").
_ONE, _STAR, _ANY, _DIRS = object(), object(), object(), object()


def _glob_tokens(glob: str) -> list:
    out, i = [], 0
    while i < len(glob):
        for spelling, token in (("**/", _DIRS), ("**", _ANY), ("*", _STAR), ("?", _ONE)):
            if glob.startswith(spelling, i):
                if not (token in (_STAR, _ANY) and out and out[-1] is token):  # "***" is "**"
                    out.append(token)
                i += len(spelling)
                break
        else:
            out.append(glob[i])
            i += 1
    return out


def _glob_full_match(tokens: list, text: str) -> bool:
    """``tokens`` match all of ``text``: gitignore-ish globs (``**`` spans folders, ``*`` and ``?``
    stay inside one), run as a set of states over the text, so time is len(glob) x len(text) at
    most. A backtracking regex took 50 s for "*a*a*a*a*a*a*a*ab" on one name."""
    n = len(tokens)

    def closure(states: set[tuple[int, bool]]) -> set[tuple[int, bool]]:
        todo, seen = list(states), set(states)
        while todo:
            i, inside = todo.pop()
            # a star or "**/" may match nothing (a "**/" only before it has consumed anything)
            if i < n and not inside and tokens[i] in (_STAR, _ANY, _DIRS) and (i + 1, False) not in seen:
                seen.add((i + 1, False))
                todo.append((i + 1, False))
        return seen

    states = closure({(0, False)})
    for ch in text:
        nxt: set[tuple[int, bool]] = set()
        for i, inside in states:
            if i == n:
                continue
            t = tokens[i]
            if t is _STAR:
                if ch != "/":
                    nxt.add((i, False))
            elif t is _ANY:
                nxt.add((i, False))
            elif t is _DIRS:
                nxt.add((i, True))
                if ch == "/":
                    nxt.add((i + 1, False))
            elif t is _ONE:
                if ch != "/":
                    nxt.add((i + 1, False))
            elif t == ch:
                nxt.add((i + 1, False))
        if not nxt:
            return False
        states = closure(nxt)
    return (n, False) in states


def glob_matches(glob: str, file: str, root: Path | None = None) -> bool:
    """``glob`` matches ``file`` as given, relative to ``root`` (the config's folder), or, for a glob
    without a slash, its file name; ``hf://`` cards match as ``OWNER/NAME/README.md``."""
    tokens = _glob_tokens(glob.replace("\\", "/").removeprefix("./"))
    forms = {file.replace("\\", "/").removeprefix("./").removeprefix("hf://")}
    if root is not None and "://" not in file:
        try:
            forms.add(Path(file).resolve().relative_to(root.resolve()).as_posix())
        except (ValueError, OSError):
            pass
    if "/" not in glob:
        forms |= {f.rsplit("/", 1)[-1] for f in forms}
    return any(_glob_full_match(tokens, f) for f in forms)


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
    if not pyproject.exists():
        raise UsageError(f"{pyproject}: config file not found")
    try:
        # a FIFO or device is refused unopened; deep nesting, 1e400, huge integers are one line
        data = loads_toml(read_text(pyproject, "config file"), str(pyproject))
    except InputError as exc:
        raise UsageError(str(exc)) from None
    tool = data.get("tool", {})
    if not isinstance(tool, dict):
        raise UsageError(f"{pyproject}: `tool` must be a table")
    table = tool.get("kldcard")
    if table is None:
        return LintConfig(path=pyproject)
    return parse_table(table, pyproject)


def parse_table(table: Any, source: Path | None = None) -> LintConfig:
    where = f"{source}: [tool.kldcard]" if source else "[tool.kldcard]"
    if not isinstance(table, dict):
        raise UsageError(f"{where} must be a table")
    known = {"select", "extend-select", "ignore", "output-format", "fail-on", "per-file-ignores", "max-card-bytes"}
    unknown = sorted(set(table) - known)
    if unknown:
        raise UsageError(f"{where}: unknown key(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    cfg = LintConfig(path=source)
    for key in ("select", "extend-select", "ignore"):
        if key in table:
            setattr(cfg, key.replace("-", "_"), _code_list(table[key], f"{where}: {key}"))
    if "per-file-ignores" in table:
        pfi = table["per-file-ignores"]
        if not isinstance(pfi, dict):
            raise UsageError(f"{where}: per-file-ignores must be a table of glob = [codes]")
        cfg.per_file_ignores = {str(g): _code_list(v, f"{where}: per-file-ignores {g!r}") for g, v in pfi.items()}
    if "output-format" in table:
        if table["output-format"] not in OUTPUT_FORMATS:
            raise UsageError(f"{where}: output-format must be one of {', '.join(OUTPUT_FORMATS)}")
        cfg.output_format = table["output-format"]
    if "fail-on" in table:
        if table["fail-on"] not in FAIL_LEVELS:
            raise UsageError(f"{where}: fail-on must be one of {', '.join(FAIL_LEVELS)}")
        cfg.fail_on = table["fail-on"]
    if "max-card-bytes" in table:
        n = table["max-card-bytes"]
        if not isinstance(n, int) or isinstance(n, bool) or not 1 <= n <= CARD_BYTES_CEILING:
            raise UsageError(f"{where}: max-card-bytes must be a whole number of bytes from 1 to {CARD_BYTES_CEILING}")
        cfg.max_card_bytes = n
    return cfg


def _code_list(value: Any, where: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise UsageError(f"{where} must be a list of rule codes or prefixes, e.g. [\"KLD1\"]")
    return list(value)
