#!/usr/bin/env bash
# Runs MPICH 4.0.2's own collective test suite (test/mpi/coll, with util/ and include/, under
# MPICH's licence: COPYRIGHT in the suite) the way MPICH's runtests judges a test: each test
# built standalone with the mpicc on PATH, exit status 0 and " No Errors" as its only output.
# The suite is not part of this repository: scripts/preload_mpich_tests.sh fetches it
# (MPICH_TESTS_INSTALL=only, run by scripts/install_deps.sh) into .peer/mpich-coll-tests/.
#   MPICH_TESTS=DIR scripts/mpich_coll_run.sh OUTDIR [PATTERN]
#     PATTERN: extended regex over test names (default: all in the testlist)
# Environment: MPIEXEC (default mpirun), WRAP (words put before the program, e.g. "env LD_PRELOAD=..."),
#   MAXNP (entries with more ranks run with MAXNP, default 4), T (seconds per test, default 120).
# Prints one line per test (PASS/FAIL/SKIP) and a last line "N passed, N failed, N skipped".
set -u
here=$(cd "${MPICH_TESTS:?MPICH_TESTS: the suite folder}" && pwd) || exit 2; out=${1:?usage: mpich_coll_run.sh OUTDIR [PATTERN]}; pat=${2:-.}
mkdir -p "$out"; MPIEXEC=${MPIEXEC:-mpirun}; MAXNP=${MAXNP:-4}; T=${T:-120}
pass=0; fail=0; skip=0
# MPICH's test utilities, compiled once per OUTDIR (each test then compiles its own file only);
# where one does not compile, each test compiles them itself as before.
util=("$here/util/mtest.c" "$here/util/mtest_common.c" "$here/util/mtest_thread.c" "$here/util/dtypes.c")
mkdir -p "$out/util"
objs=()
for src in "${util[@]}"; do
  o="$out/util/$(basename "$src" .c).o"
  [ -f "$o" ] || { mpicc -I"$here/include" -c -o "$o.tmp$$" "$src" >"$o.log" 2>&1 && mv "$o.tmp$$" "$o"; }
  [ -f "$o" ] && objs+=("$o")
done
[ ${#objs[@]} -eq ${#util[@]} ] || objs=("${util[@]}")
while read -r name np rest; do
  case "$name" in ''|'#'*|'@'*) continue;; esac
  [[ "$name" =~ $pat ]] || continue
  [ -f "$here/coll/$name.c" ] || { skip=$((skip+1)); echo "SKIP $name (no single source file)"; continue; }
  if ! [ "$np" -le "$MAXNP" ] 2>/dev/null; then   # the tests take any rank count: cap it
    np=$MAXNP; grep -q "must divide" "$here/coll/$name.c" && np=2   # these need a divisor of MAX_PROCESSES (10)
  fi
  args=$(echo "$rest" | grep -oE 'arg=[^ ]+' | sed 's/^arg=//' | tr '\n' ' ')
  env=$(echo "$rest" | grep -oE 'env=[^ ]+' | sed 's/^env=//' | tr '\n' ' ')
  bin="$out/$name"
  if [ ! -x "$bin" ]; then
    mpicc -I"$here/include" -o "$bin" "$here/coll/$name.c" "${objs[@]}" -lm -lpthread >"$bin.build.log" 2>&1 \
      || { skip=$((skip+1)); echo "SKIP $name (does not build standalone: $(grep -m1 error "$bin.build.log"))"; continue; }
  fi
  log="$out/$name.np$np.log"
  timeout "$T" env $env $MPIEXEC -n "$np" ${WRAP:-} "$bin" $args >"$log" 2>&1 </dev/null; rc=$?
  if [ $rc -eq 0 ] && [ "$(grep -v '^\s*$' "$log")" = " No Errors" ]; then pass=$((pass+1)); echo "PASS $name np=$np $args"
  else fail=$((fail+1)); echo "FAIL $name np=$np $args rc=$rc: $(grep -v '^\s*$' "$log" | head -2 | tr '\n' ' ' | cut -c1-160)"; fi
done < "$here/coll/testlist"
echo "$pass passed, $fail failed, $skip skipped"
