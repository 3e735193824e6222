#!/usr/bin/env bash
# MPICH's own collective tests (../shared/peer/mpich-coll-tests, see its README.md) run
# through libcb_engine_preload.so: per test PASS/FAIL/SKIP as MPICH's runtests judges it,
# and how many calls the engine took (per MPI function, summed over ranks and over the
# test's testlist entries) and how many it passed through to MPI. docs/preload.md.
#
#   scripts/preload_mpich_tests.sh [OUTDIR] [REGEX]
#     OUTDIR  where the tests are built and their logs go (default /tmp/cb_preload_mpich)
#     REGEX   extended regex over test names (default: every test of the list)
# Environment:
#   MAXNP        ranks at most (default 2; the list's 4-rank entries run with MAXNP)
#   T            seconds per test (default 120)
#   CB_PRELOAD_LIB  the library (default build/libcb_engine_preload.so)
#   MPICH_TESTS  the suite (default ../shared/peer/mpich-coll-tests next to this repository)
#   NO_PRELOAD=1 run without the library (the baseline)
# Prints "PASS|FAIL|SKIP name ..." per testlist entry, then per test one line
#   "ENGINE name: <n> engine, <n> passed through [MPI_Allreduce=<n> ...]"
# and a last line "N passed, N failed, N skipped; engine took N calls, passed N through".
# Exit status 1 when a test failed, 2 when the suite or the library is missing.
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-/tmp/cb_preload_mpich}
pat=${2:-.}
suite=${MPICH_TESTS:-$repo/../shared/peer/mpich-coll-tests}
lib=${CB_PRELOAD_LIB:-$repo/build/libcb_engine_preload.so}
export MAXNP=${MAXNP:-2} T=${T:-120}
[ -x "$suite/run.sh" ] || { echo "no MPICH test suite at $suite" >&2; exit 2; }
if [ -z "${NO_PRELOAD:-}" ]; then
  [ -f "$lib" ] || { echo "no $lib: build the target cb_engine_preload first" >&2; exit 2; }
  lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)

pass=0 fail=0 skip=0 engine_total=0 passed_total=0
names=$(grep -vE '^\s*(#|@|$)' "$suite/coll/testlist" | awk '{print $1}' | awk '!seen[$0]++')
for name in $names; do
  [[ "$name" =~ $pat ]] || continue
  log="$out/$name.preload.log"
  rm -f "$log"
  if [ -n "${NO_PRELOAD:-}" ]; then
    res=$(bash "$suite/run.sh" "$out" "^$name\$")
  else
    res=$(WRAP="env LD_PRELOAD=$lib CB_PRELOAD_VERBOSE=1 CB_PRELOAD_LOG=$log" \
          bash "$suite/run.sh" "$out" "^$name\$")
  fi
  echo "$res" | grep -E '^(PASS|FAIL|SKIP) '
  summary=$(echo "$res" | tail -1)
  read -r p _ f _ s _ <<<"$summary"
  pass=$((pass + p)) fail=$((fail + f)) skip=$((skip + s))
  [ -n "${NO_PRELOAD:-}" ] && continue
  [ "$s" -gt 0 ] && [ "$p" -eq 0 ] && [ "$f" -eq 0 ] && continue  # nothing ran
  # "cb_engine_preload: rank R: MPI_X: E engine, P passed through (...)", per rank and run.
  line=$(awk '/^cb_engine_preload: rank [0-9]+: MPI_/ {
                fn = $4; sub(":", "", fn); e[fn] += $5; te += $5; tp += $7 }
              END { printf "%d engine, %d passed through", te, tp
                    for (f in e) if (e[f] > 0) printf " %s=%d", f, e[f] }' "$log" 2>/dev/null)
  [ -n "$line" ] || line="0 engine, 0 passed through (no log: the test did not finish)"
  echo "ENGINE $name: $line"
  engine_total=$((engine_total + $(echo "$line" | awk '{print $1}')))
  passed_total=$((passed_total + $(echo "$line" | awk '{print $3}')))
done
echo "$pass passed, $fail failed, $skip skipped; engine took $engine_total calls, passed $passed_total through"
[ "$fail" -eq 0 ]
