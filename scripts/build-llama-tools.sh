#!/usr/bin/env bash
# Build the real llama-perplexity and llama-quantize once, from the llama.cpp sources that the pinned
# llama-cpp-python source distribution vendors, so the tests compare kldcard with the very tool users
# run, built from the same ggml code as the Python binding.
#
#   scripts/build-llama-tools.sh [CACHE_DIR]        (default: <repo>/.cache/llama-tools)
#
# Prints progress on stderr; the last two stdout lines are the paths of the two binaries, in
# CACHE_DIR/llama-tools-<version>/bin/. The version comes from constraints.txt (llama_cpp_python==...),
# overridable with LLAMA_CPP_PYTHON_VERSION.
#
# Cached: a finished build holds a STAMP whose first three lines (version, CMake flags, targets) are the
# build key; a rerun with the same key does nothing. Atomic: the build runs in a temporary directory
# under CACHE_DIR and the finished folder is renamed into place, so an interrupted build leaves no
# entry that looks complete (the next run removes a killed build's temporary directory). Concurrent
# runs (pytest-xdist workers, two checkouts sharing a cache) are serialised with flock(1).
#
# Minimal on purpose (CI has 90 minutes in all): only the two targets and what they link, static
# libraries, no server/examples/tests, -j2 by default (LLAMA_TOOLS_JOBS). Measured on the 2-core dev
# machine: ~70 s to fetch the sdist with pip, ~635 s to compile; ~2.3 GB of temporary space, ~18 MB kept.
#
# GGML_NATIVE=OFF as in scripts/setup-venv.sh: the tools get the same CPU kernels as the Python
# binding (SSE4.2/AVX/AVX2/BMI2/FMA/F16C, no AVX-512), which bit-identical logits need.
set -euo pipefail

repo="$(cd "$(dirname "$0")/.." && pwd -P)"
cache_arg="${1:-$repo/.cache/llama-tools}"

version="${LLAMA_CPP_PYTHON_VERSION:-}"
if [ -z "$version" ]; then
  version="$(sed -n 's/^llama[-_]cpp[-_]python==\([^ ;]*\).*/\1/p' "$repo/constraints.txt" | head -n 1)"
fi
[ -n "$version" ] || { echo "build-llama-tools: no llama_cpp_python pin in constraints.txt" >&2; exit 3; }
jobs="${LLAMA_TOOLS_JOBS:-2}"
python="${PYTHON:-python3}"

mkdir -p "$cache_arg"
cache="$(cd "$cache_arg" && pwd -P)"
final="$cache/llama-tools-$version"
targets=(llama-perplexity llama-quantize)
flags=(
  -DCMAKE_BUILD_TYPE=Release -DGGML_NATIVE=OFF -DLLAMA_CURL=OFF -DBUILD_SHARED_LIBS=OFF
  -DLLAMA_BUILD_COMMON=ON -DLLAMA_BUILD_TOOLS=ON -DLLAMA_BUILD_TESTS=OFF -DLLAMA_BUILD_EXAMPLES=OFF
  -DLLAMA_BUILD_SERVER=OFF -DLLAMA_BUILD_APP=OFF -DLLAMA_BUILD_UI=OFF -DLLAMA_OPENSSL=OFF
  -DLLAMA_LLGUIDANCE=OFF -DLLAMA_TOOLS_INSTALL=OFF -DLLAMA_ALL_WARNINGS=OFF -DGGML_BACKEND_DL=OFF
  -DGGML_RPC=OFF
)

key() {
  printf 'llama_cpp_python==%s\n' "$version"
  printf 'cmake:'; printf ' %s' "${flags[@]}"; printf '\n'
  printf 'targets: %s\n' "${targets[*]}"
}

built() {
  local t
  for t in "${targets[@]}"; do [ -x "$final/bin/$t" ] || return 1; done
  [ -f "$final/STAMP" ] && [ "$(head -n 3 "$final/STAMP")" = "$(key)" ]
}

done_() {
  echo "build-llama-tools: $1 ($final/bin)" >&2
  local t
  for t in "${targets[@]}"; do echo "$final/bin/$t"; done
  exit 0
}

built && done_ "cached"

for tool in cmake tar; do
  command -v "$tool" >/dev/null 2>&1 || { echo "build-llama-tools: $tool is not installed (needed to build llama-perplexity)" >&2; exit 3; }
done
if ! command -v c++ >/dev/null 2>&1 && ! command -v g++ >/dev/null 2>&1 && ! command -v clang++ >/dev/null 2>&1; then
  echo "build-llama-tools: no C++ compiler (c++, g++ or clang++) found (needed to build llama-perplexity)" >&2
  exit 3
fi

exec 9>"$cache/.llama-tools.lock"
if command -v flock >/dev/null 2>&1; then
  flock -n 9 || { echo "build-llama-tools: another build holds the lock; waiting for it" >&2; flock 9; }
  built && done_ "built by a concurrent run"
  # With the lock held no other build runs: every temporary directory left is from a killed run.
  find "$cache" -maxdepth 1 -name '.tmp-build.*' -type d -exec rm -rf {} + 2>/dev/null || true
fi

tmp="$(mktemp -d "$cache/.tmp-build.XXXXXX")"
trap 'rm -rf "$tmp"' EXIT
trap 'exit 130' INT TERM HUP
t0=$(date +%s)

# 1. The source distribution, kept in the cache (a rebuild with other flags reuses it).
sdist="$cache/sdist/llama_cpp_python-$version.tar.gz"
if [ ! -s "$sdist" ]; then
  echo "build-llama-tools: [1/4] pip download llama_cpp_python==$version (source distribution)" >&2
  "$python" -m pip download --quiet --no-deps --no-binary :all: "llama_cpp_python==$version" -d "$tmp/dl" >&2
  got="$(find "$tmp/dl" -maxdepth 1 -name "llama_cpp_python-$version.tar.gz" -print -quit)"
  [ -n "$got" ] || { echo "build-llama-tools: pip gave no llama_cpp_python-$version.tar.gz" >&2; exit 1; }
  mkdir -p "$cache/sdist"
  mv -f "$got" "$sdist.part.$$" && mv -f "$sdist.part.$$" "$sdist"
fi

# 2. Only vendor/llama.cpp from it.
echo "build-llama-tools: [2/4] extracting vendor/llama.cpp" >&2
mkdir -p "$tmp/src"
tar -xzf "$sdist" -C "$tmp/src" --strip-components=3 "llama_cpp_python-$version/vendor/llama.cpp"
[ -f "$tmp/src/tools/perplexity/perplexity.cpp" ] || { echo "build-llama-tools: the sdist has no tools/perplexity" >&2; exit 1; }

# 3. Configure and build the two targets.
generator=()
command -v ninja >/dev/null 2>&1 && generator=(-G Ninja)
echo "build-llama-tools: [3/4] cmake configure" >&2
cmake -S "$tmp/src" -B "$tmp/build" "${generator[@]}" "${flags[@]}" >"$tmp/configure.log" 2>&1 \
  || { tail -n 40 "$tmp/configure.log" >&2; exit 1; }
echo "build-llama-tools: [4/4] compiling ${targets[*]} with -j$jobs (about 10 minutes on 2 cores)" >&2
t1=$(date +%s)
cmake --build "$tmp/build" --target "${targets[@]}" -j "$jobs" >"$tmp/build.log" 2>&1 \
  || { tail -n 60 "$tmp/build.log" >&2; exit 1; }
t2=$(date +%s)

out="$tmp/out"
mkdir -p "$out/bin"
for t in "${targets[@]}"; do install -m 0755 "$tmp/build/bin/$t" "$out/bin/$t"; done
"$out/bin/llama-perplexity" --version >"$out/version.txt" 2>&1 || true
cp "$tmp/configure.log" "$tmp/build.log" "$out/"
{
  key
  printf 'sdist_sha256: %s\n' "$(sha256sum "$sdist" | cut -d' ' -f1)"
  printf 'compile_seconds: %s\n' "$((t2 - t1))"
  printf 'total_seconds: %s\n' "$(($(date +%s) - t0))"
  printf 'built: %s on %s\n' "$(date -u +%Y-%m-%dT%H:%M:%SZ)" "$(uname -m)"
} >"$out/STAMP"
[ -e "$final" ] && mv -T "$final" "$tmp/stale"
mv -T "$out" "$final"
done_ "built in $(($(date +%s) - t0)) s (compile $((t2 - t1)) s)"
