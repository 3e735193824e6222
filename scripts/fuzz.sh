#!/usr/bin/env bash
# Fuzzes collbench's input parsers with libFuzzer (tests/fuzz): configures a clang build
# with ASan + UBSan, builds only the harnesses (and the libraries they link), replays every
# seed and past finding (ctest), then fuzzes each target for a bounded time. Inputs that
# crash, hang, leak or run out of memory are saved to tests/fuzz/regressions/<target>/
# (replayed by ctest from then on) and make the script exit non-zero.
#   scripts/fuzz.sh [SECONDS_PER_TARGET (60)] [BUILD_DIR (build-fuzz)]
#   scripts/fuzz.sh --ci                                # CI: 20 s per target
#   FUZZ_TARGETS="trace tuning" scripts/fuzz.sh 300     # some targets only
# Needs clang and its libFuzzer/sanitizer runtimes (Debian: clang-14 libclang-rt-14-dev).
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "${1:-}" = "--ci" ]; then
  shift
  set -- "${1:-20}" "${@:2}"
fi
seconds=${1:-60}
build=${2:-build-fuzz}
targets=${FUZZ_TARGETS:-"trace options sizes tuning"}
jobs=$(nproc)
start=$SECONDS

for tool in clang clang++; do
  command -v $tool >/dev/null || { echo "fuzz.sh: $tool not found (apt-get install clang-14 libclang-rt-14-dev)" >&2; exit 2; }
done
rt=$(clang -print-file-name=libclang_rt.fuzzer-x86_64.a 2>/dev/null || true)
if [ ! -f "$rt" ] && [ "$(uname -m)" = x86_64 ]; then
  echo "fuzz.sh: clang's libFuzzer runtime is missing (apt-get install libclang-rt-14-dev)" >&2
  exit 2
fi

# -O1 -g1 as the sanitizer builds of scripts/test.sh: a third shorter to build than -O2,
# line numbers still in every report.
cmake -S . -B "$build" -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo "-DCMAKE_CXX_FLAGS_RELWITHDEBINFO=-O1 -g1" \
  -DCOLLBENCH_FUZZ=ON -DCOLLBENCH_BUILD_TESTS=ON \
  -DCOLLBENCH_WERROR=ON -DCOLLBENCH_CUDA=OFF -DCOLLBENCH_NCCL=OFF -DCOLLBENCH_VERBS=OFF >/dev/null
# Only the harnesses and what they link: not the benchmarks, tests or micro-benchmarks.
cmake --build "$build" -j"$jobs" --target fuzz_harnesses
built=$SECONDS
echo "fuzz.sh: configure + build $((built - start)) s"

# UBSan aborts (libFuzzer then saves the input); leaks of the parsers are findings too.
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:allocator_may_return_null=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
ctest --test-dir "$build" --output-on-failure -R "^fuzz_replay_($(echo $targets | tr ' ' '|'))\$"

status=0
for t in $targets; do
  corpus=tests/fuzz/corpus/$t
  regressions=tests/fuzz/regressions/$t
  work=$build/fuzz/$t  # what fuzzing adds to the corpus stays in the build directory
  mkdir -p "$work" "$regressions"
  echo "fuzz.sh: fuzzing $t for ${seconds} s"
  # -max_len: the seeds are at most a few KB; longer inputs only slow the search down.
  # -timeout: one input running for 25 s is a hang (the slowest legitimate inputs, a CSV
  # table of 2^20 calls, take a few seconds); -rss_limit_mb/-malloc_limit_mb: a blow-up.
  if ! "$build/tests/fuzz/fuzz_$t" "$work" "$corpus" -dict="tests/fuzz/$t.dict" \
      -max_total_time="$seconds" -max_len=4096 -timeout=25 -rss_limit_mb=2560 \
      -malloc_limit_mb=2048 -artifact_prefix="$regressions/" -print_final_stats=1 \
      2>"$work.log"; then
    status=1
    tail -n 40 "$work.log" >&2
    echo "fuzz.sh: FINDING in $t: input saved under $regressions/ (add the fix and keep the file)" >&2
  else
    # The last status line (cov: edges, ft: features, corp: corpus) and the run counts.
    grep -E '^#[0-9]+' "$work.log" | tail -n 1 || true
    grep -E '^stat::(number_of_executed_units|average_exec_per_sec|peak_rss_mb)' "$work.log" || true
  fi
done
echo "fuzz.sh: total $((SECONDS - start)) s (build $((built - start)) s, replay + fuzzing $((SECONDS - built)) s)"
exit $status
