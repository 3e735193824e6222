#!/usr/bin/env bash
# Configures and builds collbench: scripts/build.sh BUILD_DIR [extra cmake arguments].
# CB_MPI=openmpi5|mpich5|mpich5-abi|openmpi4 builds against that MPI (scripts/mpi_select.sh;
# give each its own BUILD_DIR); CB_BUILD_TARGETS="cb_allreduce ..." builds only those.
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
shift || true
# shellcheck source=scripts/mpi_select.sh
source scripts/mpi_select.sh
cb_mpi_select
args=(-DCOLLBENCH_WERROR=ON "${CB_MPI_CMAKE[@]}")
# nvcc is not always on PATH; the toolkit lives under /usr/local/cuda.
if ! command -v nvcc >/dev/null && [ -x /usr/local/cuda/bin/nvcc ]; then
  args+=(-DCMAKE_CUDA_COMPILER=/usr/local/cuda/bin/nvcc)
fi
# ccache (scripts/install_deps.sh installs it) lets the build folders of one checkout share
# objects: paths below the checkout are hashed relative to it, and the working directory is
# left out of the hash (with -g it is in by default), so build/ and build-openmpi5/ share
# every object whose preprocessed source and flags agree (those that do not include mpi.h).
if command -v ccache >/dev/null; then
  export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
  export CCACHE_NOHASHDIR=${CCACHE_NOHASHDIR:-true}
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
cmake -S . -B "$build" "${args[@]}" "$@" >/dev/null
targets=()
for t in ${CB_BUILD_TARGETS:-}; do targets+=(--target "$t"); done
cmake --build "$build" -j"$(nproc)" "${targets[@]}"
