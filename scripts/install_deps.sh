#!/usr/bin/env bash
# Installs the Debian packages collbench needs, and only those that are missing
# (idempotent: a second run installs nothing). CUDA and NCCL come from the toolkit
# under /usr/local/cuda when present; they are optional.
set -euo pipefail

PACKAGES=(
  cmake g++ make pkg-config git lld ccache  # ccache: build folders of one run share objects
  mpich libmpich-dev libcli11-dev nlohmann-json3-dev
  libibverbs-dev librdmacm-dev libhwloc-dev
  libgtest-dev libbenchmark-dev
  libprotobuf-dev protobuf-compiler  # Chakra ET: C++ generated from et_def.proto (cb_replay)
  python3-protobuf  # Chakra's own Python reader of the ET cb_replay writes (int_replay_chakra_reader)
  python3 python3-matplotlib python3-jsonschema  # jsonschema: tests/integration/test_schemas.py
  clang-14 libclang-rt-14-dev llvm-14  # libFuzzer, sanitizer runtimes, symbolizer (fuzz.sh)
  clang-format-14  # tests/layering/check_format.sh: sources as .clang-format says
  openssh-server iproute2  # scripts/cluster.sh: an sshd per host of the one-machine cluster
)

# --apps: what scripts/preload_apps.sh runs (issue 39), not installed by default: Debian's
# MPICH build of HDF5 (h5pcc.mpich), its parallel example (libhdf5-doc) and h5dump
# (hdf5-tools), ScaLAPACK's MPICH test programs (scalapack-mpi-test, which also pulls in Open
# MPI's openmpi-bin: its mpirun/mpicc alternatives are pinned back to MPICH below)
for arg in "$@"; do
  case $arg in
    --apps) PACKAGES+=(libhdf5-mpich-dev libhdf5-doc hdf5-tools scalapack-mpi-test) ;;
    *) echo "install_deps: unknown option $arg (known: --apps)" >&2; exit 2 ;;
  esac
done

missing=()
for p in "${PACKAGES[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

sudo=""
[ "$(id -u)" -ne 0 ] && sudo=sudo

if ((${#missing[@]})); then
  echo "install_deps: installing ${missing[*]}"
  $sudo apt-get update -qq
  # openssh-server's package scripts would start an sshd on this machine: scripts/cluster.sh
  # starts its own, one per host, so without a policy-rc.d none is started here
  policy=""
  if [ ! -e /usr/sbin/policy-rc.d ]; then
    policy=/usr/sbin/policy-rc.d
    printf '#!/bin/sh\n# scripts/install_deps.sh, removed after apt-get install\nexit 101\n' | $sudo tee "$policy" >/dev/null
    $sudo chmod 755 "$policy"
  fi
  rc=0
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null || rc=$?
  [ -z "$policy" ] || $sudo rm -f "$policy"
  [ "$rc" = 0 ] || exit "$rc"
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

# --- peer test suites: mpi4py's and MPICH's own tests (idempotent: quick once installed) ----
# For the ctest cases int_preload_mpi4py_cco_subset and int_preload_mpich_coll_subset
# (tests/integration/test_preload_mpi4py.py, test_preload.py), which skip, saying why, without
# them. Both git-ignored in the repository:
#   .venv-mpi4py/         mpi4py 4.1.2, PyPI's binary wheel (MPICH's and Open MPI's ABI), and
#                         its test/ from the source distribution (about 15 s);
#                         scripts/preload_mpi4py_tests.sh, which for the MPI 5.0 standard ABI
#                         builds it from source when asked (scripts/test.sh, other MPIs)
#   .peer/mpich-coll-tests/  MPICH 4.0.2's test/mpi/coll from Debian's source archive
#                         (about 10 s); scripts/preload_mpich_tests.sh
# A failed download stops here: CI must not turn a missing peer suite into a skipped case.
here=$(dirname "$0")
MPI4PY_INSTALL=only bash "$here/preload_mpi4py_tests.sh" ||
  { echo "install_deps: mpi4py or its tests could not be installed (see above)" >&2; exit 1; }
MPICH_TESTS_INSTALL=only bash "$here/preload_mpich_tests.sh" ||
  { echo "install_deps: MPICH's collective tests could not be fetched (see above)" >&2; exit 1; }
