#!/usr/bin/env bash
# The test command: dependencies, then build and test stages, each timed.
#   scripts/test.sh              everything CI runs: the release build and every test, an
#                                ASan+UBSan build with the engine, replay, importer and
#                                harness tests, a TSan build with the progress-thread and
#                                non-blocking tests, and bounded fuzzing of the parsers
#   scripts/test.sh --quick      the release build and every test only
#   scripts/test.sh --sanitize address,undefined   (or thread): that stage only
#   scripts/test.sh --fuzz       the bounded fuzzing stage only
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
jobs=$(nproc)

# CI must finish well inside its 45 minutes on 2 cores: a stage is run only when the time
# spent so far plus what it takes on a fresh 2-core machine (its estimate, seconds) fits in
# CB_TEST_BUDGET_S (default 40 minutes); otherwise it is skipped, said loudly, and listed
# at the end.
budget=${CB_TEST_BUDGET_S:-2400}
skipped=()
stage() {  # stage NAME ESTIMATE_S COMMAND...: runs it, prints its duration, stops at its failure
  local name=$1 estimate=$2 start=$SECONDS
  shift 2
  if ((SECONDS + estimate > budget)); then
    echo "== test.sh: SKIPPED $name: ${SECONDS} s spent + ~${estimate} s would pass the ${budget} s budget" >&2
    skipped+=("$name")
    return 0
  fi
  echo "== test.sh: $name"
  "$@"
  echo "== test.sh: $name passed in $((SECONDS - start)) s"
}

release() {
  bash scripts/build.sh build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCOLLBENCH_BUILD_TESTS=ON
  ctest --test-dir build --output-on-failure -j"$jobs"
}

# Sanitizer builds leave out CUDA and NCCL (no GPU here: their tests skip anyway) and
# optimise lightly (-O1) to keep the build short. GPU tests, pure-Python script tests and
# the slowest sweeps (covered by the release stage) are not repeated under sanitizers.
# Also left to the release stage: the engine matrix above 4 ranks, the fault cases
# (their timing, not memory safety, is what they check), the JSON Schema validation (the
# same documents), the engine preload and its legal-program cases (a preloaded library cannot carry a sanitizer
# runtime: sanitizer builds leave it out) and install_package (installation and packaging).
SANITIZER_SKIP='^(gpu_|int_gpu_|scripts_|int_scripts_|layering_|int_main_job_quick_sweep$|int_replay_profile_|engine_matrix_np[5-8]|engine_matrix_np4$|engine_matrix_np4_nodes_of_2_threshold$|int_faults_|int_schemas_|int_replay_models_mpi$|int_shm_hierarchical_on_virtual_nodes$|int_preload_|int_legal_|install_package$)'
# Everything that runs two threads against each other: the progress thread, non-blocking
# collectives being tested while the caller computes, the replay's overlap.
THREAD_TESTS='^(int_engine_progress_thread|int_engine_nonblocking_and_yield|int_nbc_.*|int_repeat_nonblocking_and_replay|int_replay_compute_overlap|int_reduce_every_engine_algorithm_three_ranks|int_alltoallv_patterns|int_gather_scatter_nonblocking)$'

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
    # Only what the thread tests run: the benchmarks and the engine's MPI job.
    cmake -S . -B "$build" -DCOLLBENCH_WERROR=ON "${cmake_args[@]}" >/dev/null
    cmake --build "$build" -j"$jobs" --target cb_benchmarks
    ctest --test-dir "$build" --output-on-failure -j"$jobs" -R "$THREAD_TESTS"
  else
    bash scripts/build.sh "$build" "${cmake_args[@]}"
    ctest --test-dir "$build" --output-on-failure -j"$jobs" -E "$SANITIZER_SKIP"
  fi
}

case "${1:-}" in
  --quick) stage "release build and tests" 0 release ;;
  --sanitize) stage "$2 build and tests" 0 sanitized "${2:?--sanitize needs address,undefined or thread}" ;;
  --fuzz) stage "bounded fuzzing" 0 bash scripts/fuzz.sh --ci ;;
  "")
    stage "release build and tests" 0 release
    stage "address,undefined build and tests" 1100 sanitized address,undefined
    stage "thread build and tests" 300 sanitized thread
    stage "bounded fuzzing" 360 bash scripts/fuzz.sh --ci
    if ((${#skipped[@]})); then
      echo "== test.sh: over the time budget, not run: ${skipped[*]}" >&2
    fi
    ;;
  *) echo "test.sh: unknown argument '$1' (--quick, --sanitize SAN, --fuzz)" >&2; exit 2 ;;
esac
