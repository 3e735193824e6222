#!/usr/bin/env bash
# The test command: dependencies, then five build and test stages, each timed, every one
# run every time (a failing stage fails the command after the others have run):
#   scripts/test.sh              everything CI runs: (1) the release build and every test
#                                labelled release, (2) Open MPI 5 and MPICH 5's standard ABI
#                                (installed by scripts/install_mpi.sh) with the cases labelled
#                                other_mpis, (3) a TSan build with those labelled tsan,
#                                (4) bounded fuzzing of the parsers, (5) an ASan+UBSan build
#                                with those labelled asan (tests/labels.md)
#   scripts/test.sh --quick      stage 1 only
#   scripts/test.sh --other-mpis stage 2 only
#   scripts/test.sh --sanitize thread (or address,undefined): stage 3 (or 5) only
#   scripts/test.sh --fuzz       stage 4 only
#   CB_MPI=openmpi5|mpich5|mpich5-abi scripts/test.sh --quick: the release build
#                                (build-$CB_MPI/) and every release test against that MPI
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
jobs=$(nproc)

# Every stage runs, every time: a stage that fails (or cannot run) fails the whole command,
# after the others have run too; only tests that need missing hardware (GPU, RDMA) skip,
# each with its reason. Each stage's tests are chosen by label (tests/labels.md), and
# ctest prints each case's time and a per-label summary; the end lists every stage's time.
failed=()
times=()
stage() {  # stage NAME COMMAND...: runs it, prints its duration, records a failure
  local name=$1 start=$SECONDS rc=0
  shift
  echo "== test.sh: $name"
  "$@" || rc=$?
  times+=("$(printf '%5d s  %s' $((SECONDS - start)) "$name")")
  if ((rc)); then
    echo "== test.sh: $name FAILED (exit $rc) after $((SECONDS - start)) s" >&2
    failed+=("$name")
  else
    echo "== test.sh: $name passed in $((SECONDS - start)) s"
  fi
}
finish() {
  echo "== test.sh: stage times"
  printf '%s\n' "${times[@]}"
  echo "== test.sh: total $SECONDS s"
  if ((${#failed[@]})); then
    echo "== test.sh: FAILED stages: ${failed[*]}" >&2
    exit 1
  fi
}

# Stage functions run under `stage ... || rc=$?`, where bash ignores `set -e`: every
# command that can fail says so with `|| return`.
release() {
  local build
  build=$(source scripts/mpi_select.sh && cb_mpi_build_dir build) || return
  bash scripts/build.sh "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLLBENCH_BUILD_TESTS=ON || return
  ctest --test-dir "$build" --output-on-failure -j"$jobs" -L '^release$'
}

# Other MPIs: Open MPI 5.0.11 and MPICH 5.0.2 through the MPI 5.0 standard ABI, from the
# package registry (scripts/install_mpi.sh, no root), each in build-$CB_MPI/ with only what
# the cases labelled other_mpis run (no CUDA/NCCL, no unit tests: those do not depend on the
# MPI): a subset of the integration cases that covers every layer, and every preload case.
OTHER_MPIS=${CB_TEST_MPIS:-openmpi5 mpich5-abi}
OTHER_MPI_TARGETS="cb_benchmarks cb_engine_preload cb_preload_app cb_legal_programs cb_record_app cb_record_app_c"
other_mpis() {
  local mpi build rc=0
  for mpi in $OTHER_MPIS; do
    build=build-$mpi
    echo "== test.sh: other MPIs: $mpi in $build/"
    if CB_MPI=$mpi CB_BUILD_TARGETS="$OTHER_MPI_TARGETS" bash scripts/build.sh "$build" \
        -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLLBENCH_BUILD_TESTS=ON -DCOLLBENCH_CUDA=OFF \
        -DCOLLBENCH_NCCL=OFF; then
      # mpi4py for this MPI: PyPI's wheel covers MPICH's and Open MPI's ABI (nothing to do);
      # for the standard ABI it is built from source with mpicc_abi (~30 s).
      MPI4PY_INSTALL=only CB_PRELOAD_LIB="$build/libcb_engine_preload.so" \
        bash scripts/preload_mpi4py_tests.sh || rc=1
      ctest --test-dir "$build" --output-on-failure -L '^other_mpis$' || rc=1
    else
      echo "== test.sh: other MPIs: $mpi: the build failed" >&2
      rc=1
    fi
  done
  return $rc
}

# Sanitizer builds leave out CUDA and NCCL (no GPU here: their tests skip anyway) and
# optimise lightly (-O1) to keep the build short. Which tests run under each is their
# label (asan, tsan): see tests/labels.md for what is left to the release stage and why.
SANITIZER_TARGETS_THREAD="cb_benchmarks node_shm_check cb_engine_preload cb_legal_programs"
sanitized() {  # sanitized address,undefined|thread
  local san=$1 build="build-${1//,/-}"
  # MPICH and UCX keep allocations until exit; leaks of the libraries are not ours.
  export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
  export TSAN_OPTIONS=${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1}
  # UCX's memory hooks (libucm) intercept madvise in exiting threads after TSan's state
  # for them is gone: a SIGSEGV in __tsan::MutexPreReadLock from ucm_madvise. Off for all.
  export UCX_MEM_EVENTS=${UCX_MEM_EVENTS:-no}
  local cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1"
                    -DCOLLBENCH_BUILD_TESTS=ON -DCOLLBENCH_SANITIZE="$san"
                    -DCOLLBENCH_CUDA=OFF -DCOLLBENCH_NCCL=OFF)
  if [ "$san" = thread ]; then
    CB_BUILD_TARGETS=$SANITIZER_TARGETS_THREAD bash scripts/build.sh "$build" "${cmake_args[@]}" \
      || return
    ctest --test-dir "$build" --output-on-failure -j"$jobs" -L '^tsan$'
  else
    bash scripts/build.sh "$build" "${cmake_args[@]}" || return
    ctest --test-dir "$build" --output-on-failure -j"$jobs" -L '^asan$'
  fi
}

# Across hosts: 2 hosts on this machine (scripts/cluster.sh: namespaces with an sshd each,
# 1 Gbit/s links), a short cross-host subset and the faults (crash, cut link, link cut for
# 3 s, sshd down) on MPICH 4 (build/) and Open MPI 5 (build-openmpi5/, stage 2), one of the
# preload's legal programs, the recorder and cb_replay on Open MPI, then taken down
# (docs/cluster.md); where namespaces cannot be made (not root, no ip netns or unshare) it
# fails, saying why. About 90 s.
cluster() { python3 scripts/cluster_check.py --mpis mpich4,openmpi5 --faults; }

case "${1:-}" in
  --quick) stage "release build and tests" release ;;
  --sanitize) stage "$2 build and tests" sanitized "${2:?--sanitize needs address,undefined or thread}" ;;
  --fuzz) stage "bounded fuzzing" bash scripts/fuzz.sh --ci ;;
  --other-mpis) stage "other MPIs: build and MPI integration cases" other_mpis ;;
  "")
    stage "release build and tests" release
    stage "other MPIs: build and MPI integration cases" other_mpis
    stage "across hosts: a 2-host cluster on this machine" cluster
    stage "thread build and tests" sanitized thread
    stage "bounded fuzzing" bash scripts/fuzz.sh --ci
    stage "address,undefined build and tests" sanitized address,undefined
    ;;
  *) echo "test.sh: unknown argument '$1' (--quick, --sanitize SAN, --fuzz, --other-mpis)" >&2; exit 2 ;;
esac
finish
