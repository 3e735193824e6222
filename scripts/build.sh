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
cmake -S . -B "$build" "${args[@]}" "$@" >/dev/null
cmake --build "$build" -j"$(nproc)"
