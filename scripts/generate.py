"""Generate the committed artefacts from their single sources of truth (a development tool).

It writes into the checkout it lives in (``ROOT`` is this file's repository, never site-packages); the
installed package only renders the texts (:mod:`kldcard.lint.docs`, :mod:`kldcard.cli.reference`).

``python scripts/generate.py`` writes:

- ``schemas/*.schema.json`` from the pydantic models in :data:`SCHEMA_MODELS` (a model whose module
  does not exist yet is skipped) and the lint report schema;
- ``docs/rules/<CODE>.md`` for every rule in the registry, plus ``docs/rules/README.md``;
- ``.pre-commit-hooks.yaml``;
- ``docs/cli.md``, every command's ``--help``;
- ``docs/comparable.md``, the same-quantity rules of ``kldcard comparable`` (``kldcard.lint.quantity.RULES``).

``python scripts/generate.py --check`` writes nothing and exits 1 listing the stale files (the drift
tests run it). Files are written atomically.
"""

from __future__ import annotations

import argparse
import json
import sys
from importlib import import_module
from pathlib import Path
from typing import Any

from kldcard.cli.reference import cli_reference
from kldcard.files import write_atomic
from kldcard.lint.docs import hook_file, rule_doc, rules_index
from kldcard.lint.quantity import rules_markdown
from kldcard.lint.registry import all_rules

ROOT = Path(__file__).resolve().parent.parent
SCHEMA_BASE_ID = "https://github.com/kldcard/kldcard/blob/main/schemas/"

# (module, model class, file under schemas/)
SCHEMA_MODELS: list[tuple[str, str, str]] = [
    ("kldcard.schema", "KldEvaluation", "kld-evaluation.schema.json"),
    ("kldcard.capture.manifest", "CaptureManifest", "capture-manifest.schema.json"),
    ("kldcard.compare.result", "CompareResult", "compare-result.schema.json"),
    ("kldcard.capture.sparse", "SparseCaptureManifest", "sparse-capture-manifest.schema.json"),
]



def _json(data: Any) -> str:
    return json.dumps(data, indent=2, ensure_ascii=False) + "\n"


def model_schema(module: str, cls: str, filename: str) -> str | None:
    """The JSON Schema text of ``module.cls`` or None while that module does not exist."""
    try:
        mod = import_module(module)
    except ModuleNotFoundError as exc:
        if exc.name and module.startswith(exc.name):
            return None  # a later stage's module that is not written yet
        raise
    model = getattr(mod, cls)
    body = model.model_json_schema()
    head = {"$schema": "https://json-schema.org/draft/2020-12/schema", "$id": SCHEMA_BASE_ID + filename}
    return _json({**head, **body})


def expected_files(root: Path = ROOT) -> dict[Path, str]:
    """Every generated file and its expected content."""
    from kldcard.lint.reporters import report_schema

    files: dict[Path, str] = {}
    for module, cls, filename in SCHEMA_MODELS:
        text = model_schema(module, cls, filename)
        if text is not None:
            files[root / "schemas" / filename] = text
    files[root / "schemas" / "lint-report.schema.json"] = _json(report_schema())
    rules = all_rules()
    for r in rules.values():
        files[root / "docs" / "rules" / f"{r.code}.md"] = rule_doc(r)
    files[root / "docs" / "rules" / "README.md"] = rules_index(rules)
    files[root / ".pre-commit-hooks.yaml"] = hook_file()
    files[root / "docs" / "cli.md"] = cli_reference()
    files[root / "docs" / "comparable.md"] = rules_markdown()
    return files


def stale_files(root: Path = ROOT, expected: dict[Path, str] | None = None) -> list[Path]:
    """Generated files that are missing or differ, plus rule docs whose rule no longer exists.
    ``expected`` is :func:`expected_files` when the caller has it already (it builds the CLI)."""
    expected = expected_files(root) if expected is None else expected
    stale = [p for p, text in expected.items() if not p.is_file() or p.read_text(encoding="utf-8") != text]
    docs = root / "docs" / "rules"
    if docs.is_dir():
        stale += [p for p in sorted(docs.glob("KLD*.md")) if p not in expected]
    return stale


def write_all(root: Path = ROOT) -> list[Path]:
    """Write every stale generated file; remove docs of rules that no longer exist."""
    expected = expected_files(root)
    changed = []
    for path in stale_files(root, expected):
        if path in expected:
            write_atomic(path, expected[path])
        else:
            path.unlink()
        changed.append(path)
    return changed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python scripts/generate.py", description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="write nothing; exit 1 listing stale files")
    parser.add_argument("--root", type=Path, default=ROOT, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.check:
        stale = stale_files(args.root)
        for p in stale:
            print(f"stale: {p.relative_to(args.root)}")
        if stale:
            print("run `python scripts/generate.py` and commit the result", file=sys.stderr)
            return 1
        print("generated files are up to date")
        return 0
    for p in write_all(args.root):
        print(f"wrote {p.relative_to(args.root)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
