"""The package's shape is part of its contract: stages import downwards (import-linter), no module
reaches into another's private names, the linter loads no numerics or engine, and old paths warn."""

from __future__ import annotations

import ast
import json
import re
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "kldcard"


def _modules() -> list[Path]:
    return sorted(PKG.rglob("*.py"))


def test_import_linter_contracts_are_kept():
    lint_imports = Path(sys.executable).parent / "lint-imports"
    proc = subprocess.run([str(lint_imports), "--no-cache"], cwd=ROOT, capture_output=True, text=True)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-2000:]
    assert "0 broken" in proc.stdout and "3 kept" in proc.stdout


def node_module(node: ast.AST) -> str | None:
    return node.module if isinstance(node, ast.ImportFrom) else None


def test_no_module_imports_another_modules_private_name():
    """A package may use its own private helpers (``kldcard/__init__`` → ``kldcard._moved``); nobody else may."""
    offences = []
    for f in _modules():
        for node in ast.walk(ast.parse(f.read_text(encoding="utf-8"))):
            own_package = f.name == "__init__.py" and node_module(node) == ".".join(f.relative_to(ROOT).parent.parts)
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("kldcard") and not own_package:
                offences += [f"{f.relative_to(ROOT)}: {node.module}.{a.name}" for a in node.names
                             if a.name.startswith("_") and not (a.name.startswith("__") and a.name.endswith("__"))]
    assert offences == []


def test_no_argparse_in_the_library():
    users = [f.relative_to(ROOT).as_posix() for f in _modules()
             if "cli" not in f.relative_to(PKG).parts[:1] and "argparse" in f.read_text(encoding="utf-8")]
    assert users == []


def test_top_level_shows_the_stages():
    files = sorted(p.name for p in PKG.iterdir() if p.is_file() and p.name != "py.typed")
    packages = sorted(p.name for p in PKG.iterdir() if (p / "__init__.py").is_file())
    assert len(files) <= 10, files
    assert packages == ["capture", "card", "cli", "comparable", "compare", "demo", "distributed", "evaluate", "files", "lint", "llamacpp",
                        "render", "schema", "stack", "tokens"]
    for name in packages:
        doc = ast.get_docstring(ast.parse((PKG / name / "__init__.py").read_text(encoding="utf-8")))
        assert doc and ("May import" in doc or "may import" in doc), f"kldcard/{name}: say what it owns and may import"


def test_kldcard_lint_loads_no_numerics_and_no_engine(tmp_path):
    card = ROOT / "examples" / "cards" / "compliant.md"
    code = (
        "import sys, json\n"
        "from kldcard.cli.main import main\n"
        f"rc = main(['lint', {str(card)!r}, '--output-format', 'json'])\n"
        "heavy = sorted({m.split('.')[0] for m in sys.modules} & {'numpy', 'numba', 'llvmlite', 'safetensors', "
        "'torch', 'transformers', 'llama_cpp', 'mlx', 'mlx_lm', 'jinja2', 'matplotlib', 'distributed', 'fsspec'})\n"
        "ours = sorted(m for m in sys.modules if m.startswith('kldcard.') and not m.startswith(('kldcard.lint', "
        "'kldcard.card', 'kldcard.cli.lint', 'kldcard.cli.main', 'kldcard.cli')))\n"
        "print(json.dumps({'rc': rc, 'heavy': heavy, 'ours': ours}), file=sys.stderr)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    report = json.loads(proc.stderr.strip().splitlines()[-1])
    assert report["rc"] == 0
    assert report["heavy"] == []
    # only the bottom layers beside the linter: no capture, compare, render, tokens or demo
    assert not [m for m in report["ours"] if m.split(".")[1] in ("capture", "compare", "render", "tokens", "demo",
                                                               "llamacpp", "distributed")]


def test_the_nonexistent_llamacpp_extra_is_named_nowhere():
    bad = "kldcard[" + "llamacpp]"
    hits = []
    for p in ROOT.rglob("*"):
        if p.is_file() and p.suffix in (".py", ".md", ".toml", ".yaml", ".yml", ".txt", ".j2") and not {
                ".venv", ".git", ".cache"} & set(p.parts):
            if bad in p.read_text(encoding="utf-8", errors="replace"):
                hits.append(str(p.relative_to(ROOT)))
    assert hits == []


@pytest.mark.parametrize(("old", "new"), [("kldcard.divergence", "kldcard.compare.divergence"),
                                          ("kldcard.card_update", "kldcard.render.update"),
                                          ("kldcard.testmodels", "kldcard.demo.tiny_models")])
def test_moved_modules_keep_their_old_path_for_one_release_with_a_warning(old, new):
    code = (f"import warnings, importlib\nwarnings.simplefilter('error')\n"
            f"try:\n    importlib.import_module({old!r})\nexcept DeprecationWarning as w:\n    print(w)\n")
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert f"{old} moved to {new}" in proc.stdout
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        import importlib

        assert importlib.import_module(old) is importlib.import_module(new)


def test_the_public_api_names_still_resolve():
    import kldcard

    assert callable(kldcard.compare) and callable(kldcard.capture)
    assert kldcard.render_section.__module__ == "kldcard.render.section"
    assert kldcard.lint_card.__module__ == "kldcard.lint.runner"


BLOCK_NUMERICS = "import sys\nfor m in ('numpy', 'numba', 'safetensors', 'jinja2', 'rich'):\n    sys.modules[m] = None\n"


def test_a_lint_only_install_has_a_whole_cli_and_names_the_extra_for_the_rest(tmp_path):
    """With the numerics missing (the base install: what pre-commit and the Action install), --help and
    lint work, and a computing command says which extra to install instead of a traceback."""
    code = BLOCK_NUMERICS + (
        "from kldcard.cli.main import main\n"
        "import contextlib, io\n"
        "with contextlib.redirect_stdout(io.StringIO()):\n"
        "    try:\n        main(['--help'])\n    except SystemExit as e:\n        assert e.code == 0\n"
        f"assert main(['lint', {str(ROOT / 'examples' / 'cards' / 'compliant.md')!r}]) == 0\n"
        "print('compare rc', main(['compare', 'a', 'b', '-o', 'x.json']))\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path)
    assert "compare rc 2" in proc.stdout, proc.stderr
    assert "pip install 'kldcard[compare]'" in proc.stderr and "Traceback" not in proc.stderr


def test_the_base_requirements_are_the_linters_only():
    from importlib.metadata import requires

    base = sorted({r.split(";")[0].split(">")[0].split("=")[0].strip().lower() for r in requires("kldcard")
                   if "extra ==" not in r})
    assert base == ["huggingface-hub", "pydantic", "pyyaml"]


def test_no_import_cycle_between_kldcard_modules():
    """A cycle is a design bug (STYLE.md 13): grimp's graph of every import in kldcard, function-level
    ones included, must have no two modules that reach each other (openai_engine ↔ openai_prompt was
    the last one)."""
    import grimp

    graph = grimp.build_graph("kldcard", cache_dir=None)
    cycles = []
    for module in sorted(graph.modules):
        for imported in graph.find_modules_directly_imported_by(module):
            if imported != module and graph.chain_exists(importer=imported, imported=module):
                cycles.append(f"{module} -> {imported} -> ... -> {module}")
    assert cycles == []


def test_every_test_file_a_module_points_to_exists():
    """Docstrings send a reader to their samples ("Samples in tests/test_x.py"); a renamed or merged test file must
    not leave the pointer dangling."""
    named = {m for path in PKG.rglob("*.py") for m in re.findall(r"tests/test_\w+\.py", path.read_text(encoding="utf-8"))}
    assert named and not sorted(n for n in named if not (ROOT / n).is_file())


def test_no_source_file_holds_a_control_character():
    """A pattern written as ``r"^\\b..."`` through a tool that turned ``\\b`` into a literal backspace (0x08) never
    matches, and nothing shows it on screen (vocabulary.OVER was one, for months): no control character other than
    tab, newline and carriage return in the package's, the scripts' or the tests' Python."""
    control = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
    files = [*_modules(), *(ROOT / "scripts").rglob("*.py"), *(ROOT / "tests").glob("*.py"), *(ROOT / "benchmarks").glob("*.py")]
    # split at "\n" only: str.splitlines also breaks at \x0b, \x0c and \x1c-\x1e, which would hide them
    bad = [f"{p.relative_to(ROOT)}:{i}" for p in files for i, line in enumerate(p.read_text(encoding="utf-8").split("\n"), 1)
           if control.search(line)]
    assert not bad, bad
