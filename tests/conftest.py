"""Session fixtures: real tokenizers (npm) and tiny models built from seeded weights.

Artefacts are cached under ``$KLDCARD_TEST_CACHE`` (default ``<repo>/.cache/test-models``), keyed
by a hash of the builder's code and parameters, so a rerun reuses them and a fresh machine (or a
changed builder) builds everything: nothing is downloaded from a model hub. Building the Qwen3
family (HF dir, F32 GGUF, Q8_0 and Q4_K_M quantizations) takes ~15 s on 2 CPU cores.
"""

from __future__ import annotations

import os
import re
import shutil
import time
from pathlib import Path

import pytest

from kldcard.demo.tiny_models import (
    ARCHS,
    LM_PARAMS,
    TinyParams,
    build_tiny_models,
    fetch_tokenizer,
    params_key,
)

REPO = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session")
def test_cache() -> Path:
    root = Path(os.environ.get("KLDCARD_TEST_CACHE") or REPO / ".cache" / "test-models")
    root.mkdir(parents=True, exist_ok=True)
    return root


def _tiny(cache: Path, arch: str, p: TinyParams | None = None) -> dict:
    p = p or TinyParams()
    kind = arch if p.weights == "random" else f"{arch}-{p.weights}"
    target = cache / f"{kind}-{params_key(arch, p)}"
    for stale in cache.glob(f"{kind}-*"):
        # Builds of an older builder or other parameters (of this kind only: ``qwen3-*`` must not
        # match ``qwen3-bigram-*``); an hour's grace for a concurrent run (e.g. the benchmark) still using one.
        if not re.fullmatch(rf"{re.escape(kind)}-[0-9a-f]{{16}}", stale.name):
            continue
        if stale != target and stale.is_dir() and time.time() - stale.stat().st_mtime > 3600:
            shutil.rmtree(stale, ignore_errors=True)
    return build_tiny_models(target, arch, params=p, cache_dir=cache)


@pytest.fixture(scope="session")
def tiny_qwen3(test_cache: Path) -> dict:
    """Qwen3 architecture, real Qwen3 tokenizer (vocab 151,936): ``hf`` dir (BF16), ``gguf_f32``,
    ``gguf_q8_0``, ``gguf_q4`` (Q4_K_M) from the same seeded weights."""
    return _tiny(test_cache, "qwen3")


@pytest.fixture(scope="session")
def tiny_qwen3_lm(test_cache: Path) -> dict:
    """The tiny Qwen3 that predicts the demo text (``LM_PARAMS``: a bigram model of it in the embedding
    and an untied output head); same keys as ``tiny_qwen3``. What ``kldcard demo`` evaluates."""
    return _tiny(test_cache, "qwen3", LM_PARAMS)


@pytest.fixture(scope="session")
def tiny_llama(test_cache: Path) -> dict:
    """Llama architecture, real Llama 3 tokenizer (vocab 128,256); same keys as ``tiny_qwen3``."""
    return _tiny(test_cache, "llama")


@pytest.fixture(scope="session", params=sorted(ARCHS))
def tiny_model(request: pytest.FixtureRequest) -> dict:
    """Each architecture in turn."""
    return request.getfixturevalue(f"tiny_{request.param}")


@pytest.fixture(scope="session")
def qwen3_tokenizer_dir(test_cache: Path) -> Path:
    return fetch_tokenizer("qwen3", test_cache)


@pytest.fixture(scope="session")
def llama3_tokenizer_dir(test_cache: Path) -> Path:
    return fetch_tokenizer("llama3", test_cache)


@pytest.fixture(scope="session")
def gemma3_tokenizer_dir(test_cache: Path) -> Path:
    return fetch_tokenizer("gemma3", test_cache)


@pytest.fixture(scope="session")
def engines_text() -> Path:
    """A short English text (272 Qwen3 tokens, 265 Llama 3 tokens) for engine tests."""
    return REPO / "tests" / "data" / "engines" / "lighthouse.txt"


@pytest.fixture(scope="session")
def llama_tools(request: pytest.FixtureRequest) -> dict[str, Path]:
    """The real ``llama-perplexity`` and ``llama-quantize``, built by ``scripts/build-llama-tools.sh``
    from the llama.cpp vendored in the pinned llama-cpp-python sdist and cached under
    ``<repo>/.cache/llama-tools`` (first build ~12 min on 2 cores: ~70 s pip download, ~635 s compile;
    then instant). The script's progress lines are shown live, past pytest's output capture."""
    import contextlib
    import subprocess
    import sys

    cache = Path(os.environ.get("KLDCARD_LLAMA_TOOLS_CACHE") or REPO / ".cache" / "llama-tools")
    capman = request.config.pluginmanager.getplugin("capturemanager")
    live = capman.global_and_fixture_disabled() if capman else contextlib.nullcontext()
    t0 = time.time()
    lines: list[str] = []
    # The venv's python fetches the sdist (its pip resolves the pinned version from the same index).
    with live, subprocess.Popen(["bash", str(REPO / "scripts" / "build-llama-tools.sh"), str(cache)],
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                env={**os.environ, "PYTHON": sys.executable}) as proc:
        assert proc.stderr is not None and proc.stdout is not None
        for line in proc.stderr:
            lines.append(line.rstrip())
            if line.startswith("build-llama-tools:"):
                sys.stderr.write(f"\n{line.rstrip()} [{time.time() - t0:.0f} s]\n")
                sys.stderr.flush()
        out = proc.stdout.read()
    if proc.returncode != 0:
        pytest.fail(f"cannot build llama-perplexity (scripts/build-llama-tools.sh exit {proc.returncode}): "
                    f"{(lines or ['no output'])[-1]}", pytrace=False)
    return {p.name: p for p in (Path(x) for x in out.split()[-2:])}
