#!/usr/bin/env bash
# Installs the Debian packages collbench needs, and only those that are missing
# (idempotent: a second run installs nothing). CUDA and NCCL come from the toolkit
# under /usr/local/cuda when present; they are optional.
set -euo pipefail

PACKAGES=(
  cmake g++ make pkg-config git lld
  mpich libmpich-dev libcli11-dev nlohmann-json3-dev
  libibverbs-dev librdmacm-dev libhwloc-dev
  libgtest-dev libbenchmark-dev
  python3 python3-matplotlib python3-jsonschema  # jsonschema: tests/integration/test_schemas.py
  clang-14 libclang-rt-14-dev llvm-14  # libFuzzer, sanitizer runtimes, symbolizer (fuzz.sh)
  clang-format-14  # tests/layering/check_format.sh: sources as .clang-format says
)

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo

if ((${#missing[@]})); then
  echo "install_deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
else
  echo "install_deps: all packages present"
fi

# OpenMPI registers itself above MPICH in the alternatives; collbench is built and run
# with MPICH, so pin it when both are installed.
if [ -e /usr/bin/mpicc.openmpi ] && [ -e /usr/bin/mpicc.mpich ]; then
  $sudo update-alternatives --set mpi /usr/bin/mpicc.mpich >/dev/null
  $sudo update-alternatives --set mpirun /usr/bin/mpirun.mpich >/dev/null
  $sudo update-alternatives --set mpi-x86_64-linux-gnu /usr/include/x86_64-linux-gnu/mpich >/dev/null
fi

# --- mpi4py (opt-in: CB_MPI4PY=1) -------------------------------------------------------
# mpi4py built from source against this MPICH, and its test directory, in .venv-mpi4py/
# (git-ignored), for scripts/preload_mpi4py_tests.sh and the ctest case
# int_preload_mpi4py_cco_subset (skipped without them). Not by default: the source build
# takes about 3.5 min of CPU on a 2-core VM (PyPI's wheel needs libmpi.so.12, which
# Debian's MPICH lacks). Idempotent: nothing to do once installed.
if [ "${CB_MPI4PY:-0}" = 1 ]; then
  MPI4PY_INSTALL=only bash "$(dirname "$0")/preload_mpi4py_tests.sh"
fi
