#!/usr/bin/env bash
# Configures and builds collbench: scripts/build.sh BUILD_DIR [extra cmake arguments].
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
args=(-DCOLLBENCH_WERROR=ON)
# nvcc is not always on PATH; the toolkit lives under /usr/local/cuda.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  args+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
fi
# ccache, when installed, lets build directories of one checkout share objects.
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build" "${args[@]}" "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
