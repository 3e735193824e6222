#!/usr/bin/env bash
# mpi4py's own test suite (its source distribution's test/, collective modules test_cco_*)
# run on plain MPICH and through libcb_engine_preload.so, at 2 and 3 ranks: per module and
# run passed/failed/skipped as unittest counts them on rank 0, whether the preloaded run
# matches the plain one, and the preload's per-function engine/passed-through counts summed
# over ranks (CB_PRELOAD_VERBOSE). A second peer suite next to preload_mpich_tests.sh;
# docs/preload.md.
#
#   scripts/preload_mpi4py_tests.sh [OUTDIR] [PATTERN]
#     OUTDIR   logs and summary.txt (default /tmp/cb_preload_mpi4py)
#     PATTERN  extended regex over test module names (default ^test_cco_)
# Environment:
#   NPS            rank counts (default "2 3"); above 2 ranks (this VM has 2 cores) the preload
#                  runs with CB_PRELOAD_WAIT=yield
#   RUNS           "plain preload" (default), or one of them
#   T              seconds per module and run (default 300)
#   MPI4PY_ARGS    arguments for test/main.py before the module (default -f: failfast, mpi4py
#                  then aborts the job at the first failure, where the ranks would otherwise
#                  wait in different tests until T); add e.g. "-k Allreduce" (unittest's -k)
#   MPI4PY_VENV    the virtual environment holding mpi4py and its tests (default
#                  .venv-mpi4py/ in the repository, git-ignored)
#   MPI4PY_VERSION the version installed when it is missing (default 4.1.2)
#   MPI4PY_INSTALL 0: do not install what is missing, exit 3 instead (for the test suite);
#                  "only": install what is missing and exit (scripts/install_deps.sh)
#   CB_PRELOAD_LIB the library (default build/libcb_engine_preload.so)
#   MPIRUN         the launcher (default mpirun)
# mpi4py is built from source with the mpicc on PATH (pip install --no-binary mpi4py): the
# wheel on PyPI needs libmpi.so.12, which Debian's MPICH does not have (it has
# libmpich.so.12). About 3.5 min of CPU on this VM, once.
# Prints one line per module and run, then writes OUTDIR/summary.txt: per module the
# counts of each run, "same" or "DIFFERENT", and the preload's counts; the last line
# "N passed, N failed, N skipped" over the preloaded runs that finished, then "; N runs did
# not finish" if any crashed, aborted or timed out.
# Exit status 0 when every preloaded run counts as its plain run (and every run finished),
# 1 otherwise, 2 when the library is missing, 3 when mpi4py or its tests are missing and
# MPI4PY_INSTALL=0.
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-/tmp/cb_preload_mpi4py}
pat=${2:-^test_cco_}
nps=${NPS:-2 3}
runs=${RUNS:-plain preload}
T=${T:-300}
venv=${MPI4PY_VENV:-$repo/.venv-mpi4py}
version=${MPI4PY_VERSION:-4.1.2}
lib=${CB_PRELOAD_LIB:-$repo/build/libcb_engine_preload.so}
mpirun=${MPIRUN:-mpirun}
py=$venv/bin/python
args=${MPI4PY_ARGS--f}

# --- mpi4py, built against the MPICH that mpicc names, and its test directory -------------
have_mpi4py() {
  [ -x "$py" ] && "$py" -c 'import mpi4py.MPI as M; assert M.get_vendor()[0] == "MPICH"' \
    >/dev/null 2>&1
}
tests_dir() {
  local d
  for d in "$venv"/src/mpi4py-*/test; do [ -f "$d/main.py" ] && { echo "$d"; return; }; done
}

need() {
  if [ "${MPI4PY_INSTALL:-1}" = 0 ]; then
    echo "$1 missing in $venv (scripts/preload_mpi4py_tests.sh or CB_MPI4PY=1 scripts/install_deps.sh installs it)" >&2
    exit 3
  fi
}
if ! have_mpi4py; then
  need "mpi4py"
  command -v mpicc >/dev/null || { echo "no mpicc: install libmpich-dev" >&2; exit 3; }
  echo "installing mpi4py $version into $venv (built with $(command -v mpicc))" >&2
  start=$SECONDS
  if ! { [ -x "$py" ] || python3 -m venv "$venv"; } ||
    ! MPICC=mpicc "$venv/bin/pip" install -q --no-binary mpi4py "mpi4py==$version"; then
    echo "mpi4py install failed" >&2
    exit 3
  fi
  echo "mpi4py installed in $((SECONDS - start)) s" >&2
  have_mpi4py || { echo "mpi4py in $venv does not load MPICH" >&2; exit 3; }
fi
if [ -z "$(tests_dir)" ]; then  # the tests of the version installed
  need "mpi4py's test directory"
  installed=$("$py" -c 'import mpi4py; print(mpi4py.__version__)')
  mkdir -p "$venv/src"
  if ! "$venv/bin/pip" download -q --no-deps --no-binary mpi4py "mpi4py==$installed" \
    -d "$venv/src" || ! tar -xzf "$venv/src/mpi4py-$installed.tar.gz" -C "$venv/src"; then
    echo "cannot fetch mpi4py $installed's source distribution" >&2
    exit 3
  fi
fi
testdir=$(tests_dir)
[ "${MPI4PY_INSTALL:-1}" = only ] && { echo "mpi4py and its tests: $venv" >&2; exit 0; }
if [[ " $runs " == *" preload "* ]]; then
  [ -f "$lib" ] || { echo "no $lib: build the target cb_engine_preload first" >&2; exit 2; }
  lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
modules=$(cd "$testdir" && printf '%s\n' test_*.py | sed 's/\.py$//' | grep -E "$pat")
[ -n "$modules" ] || { echo "no module of $testdir matches $pat" >&2; exit 3; }

# Each rank's output to its own file (MPICH's launcher sets PMI_RANK).
wrap=$out/rank_output.sh
cat >"$wrap" <<'EOF'
#!/bin/sh
log=$1
shift
exec "$@" >"$log.${PMI_RANK:-0}" 2>&1
EOF
chmod +x "$wrap"

# unittest's last lines on one rank -> "passed failed skipped" (errors count as failed;
# expected failures as passed), or "died" without them.
counts() {
  [ -f "$1" ] || { echo died; return; }
  awk '/^Ran [0-9]+ tests? in/ { ran = $2; done = 1 }
       done && /^(OK|FAILED)/ {
         f = 0; s = 0; x = 0; u = 0
         while (match($0, /(failures|errors|skipped|expected failures|unexpected successes)=[0-9]+/)) {
           kv = substr($0, RSTART, RLENGTH); split(kv, a, "=")
           if (a[1] == "failures" || a[1] == "errors") f += a[2]
           else if (a[1] == "skipped") s += a[2]
           else if (a[1] == "unexpected successes") u += a[2]
           $0 = substr($0, RSTART + RLENGTH)
         }
         result = (ran - f - s - u) " " (f + u) " " s }
       END { print (result == "" ? "died" : result) }' "$1"
}

# "cb_engine_preload: rank R: MPI_X: E engine, P passed through (...)" summed over ranks.
engine_counts() {
  [ -f "$1" ] || return
  awk '/^cb_engine_preload: rank [0-9]+: MPI_/ {
         fn = $4; sub(":", "", fn); e[fn] += $5; p[fn] += $7; te += $5; tp += $7
         if (fn != "MPI_Barrier" && fn != "MPI_Ibarrier") td += $5 }
       END { printf "%d engine (%d not barriers), %d passed through;", te, td, tp
             for (fn in e) printf "\n%s=%d/%d", fn, e[fn], p[fn] }' "$1" |
    { read -r head; printf '%s' "$head"; sort | tr '\n' ' ' | sed 's/^/ /; s/ $//'; }
}

summary=$out/summary.txt
{
  echo "# mpi4py $("$py" -c 'import mpi4py; print(mpi4py.__version__)') tests ($testdir)"
  echo "# $("$py" -c 'from mpi4py import MPI; print(MPI.Get_library_version().splitlines()[0])')"
  echo "# modules matching $pat, ranks: $nps, runs: $runs, main.py -v $args"
  echo "# per run: passed failed skipped (rank 0; failed = failures + errors); preload counts:"
  echo "# FUNCTION=engine/passed-through summed over ranks"
} >"$summary"
status=0 tp=0 tf=0 ts=0 died=0
for np in $nps; do
  for mod in $modules; do
    line="$mod np=$np:"
    declare -A got=()
    for run in $runs; do
      log=$out/$mod.np$np.$run
      rm -f "$log".* "$log.verbose"
      envs=()
      if [ "$run" = preload ]; then
        envs=(env "LD_PRELOAD=$lib" CB_PRELOAD_VERBOSE=1 "CB_PRELOAD_LOG=$log.verbose")
        [ "$np" -gt 2 ] && envs+=(CB_PRELOAD_WAIT=yield)
      fi
      start=$SECONDS
      # shellcheck disable=SC2086  # $args: words
      timeout -k 10 "$T" "$mpirun" -n "$np" "$wrap" "$log" "${envs[@]}" "$py" \
        "$testdir/main.py" -v $args "$mod" >"$log.launcher" 2>&1
      rc=$?
      c=$(counts "$log.0")
      for r in $(seq 1 $((np - 1))); do  # every rank runs the same tests
        [ "$(counts "$log.$r")" = "$c" ] || c="$c (rank $r: $(counts "$log.$r"))"
      done
      [ $rc -eq 124 ] && c="$c TIMEOUT"
      got[$run]=$c
      line="$line $run $c rc=$rc $((SECONDS - start))s;"
      echo "$mod np=$np $run: $c (rc=$rc, $((SECONDS - start)) s)"
      if ! [[ "$c" =~ ^[0-9]+\ [0-9]+\ [0-9]+$ ]]; then  # crashed, aborted or timed out
        status=1 died=$((died + 1))
        for r in $(seq 0 $((np - 1))); do  # where each rank was
          echo "  rank $r's last line: $(tail -n 1 "$log.$r" 2>/dev/null | cut -c1-200)"
        done
      fi
      for r in $(seq 0 $((np - 1))); do  # the tests that failed, as unittest's -v says
        grep -E ' \.\.\. (FAIL|ERROR)$|^[A-Za-z.]*(Error|Exception): ' "$log.$r" 2>/dev/null |
          head -6 | sed "s/^/  rank $r: /"
      done
      if [ "$run" = preload ]; then
        read -r p f s <<<"$c"
        [[ "$c" =~ ^[0-9]+\ [0-9]+\ [0-9]+$ ]] && tp=$((tp + p)) tf=$((tf + f)) ts=$((ts + s))
        e=$(engine_counts "$log.verbose")
        echo "  ENGINE ${e:-no counts (the run did not reach MPI_Finalize)}"
        line="$line ENGINE ${e:-none}"
      fi
    done
    if [ -n "${got[plain]:-}" ] && [ -n "${got[preload]:-}" ]; then
      if [ "${got[plain]}" = "${got[preload]}" ]; then
        line="$line same"
      else
        line="$line DIFFERENT"
        status=1
      fi
    fi
    echo "$line" >>"$summary"
    unset got
  done
done
last="$tp passed, $tf failed, $ts skipped"
[[ " $runs " == *" preload "* ]] || last="no preloaded run"
[ "$died" -gt 0 ] && last="$last; $died runs did not finish (crash, abort or timeout)"
echo "$last" | tee -a "$summary"
echo "summary: $summary" >&2
exit $status
