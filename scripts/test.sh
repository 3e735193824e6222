#!/usr/bin/env bash
# The test command: dependencies, configure, build, ctest.
#   scripts/test.sh                       release build in build/
#   scripts/test.sh --sanitize address,undefined   (or thread) in build-<sanitizer>/
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh

build=build
extra=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLLBENCH_BUILD_TESTS=ON)
if [ "${1:-}" = "--sanitize" ]; then
  san=${2:?"--sanitize needs address,undefined or thread"}
  build="build-${san//,/-}"
  extra+=(-DCOLLBENCH_SANITIZE="$san")
  # MPICH and UCX keep allocations until exit; leaks of the libraries are not ours.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1}
fi
bash scripts/build.sh "$build" "${extra[@]}"
ctest --test-dir "$build" --output-on-failure -j"$(nproc)"
