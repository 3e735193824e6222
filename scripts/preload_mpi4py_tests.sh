#!/usr/bin/env bash
# mpi4py's own test suite (its source distribution's test/, collective modules test_cco_*)
# run on the plain MPI library and through libcb_engine_preload.so, at 2 and 3 ranks: per module and
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
#                  .venv-mpi4py/ in the repository, git-ignored; for the MPI 5.0 standard
#                  ABI its mpiabi/)
#   MPI4PY_VERSION the version installed when it is missing (default 4.1.2)
#   MPI4PY_INSTALL 0: do not install what is missing, exit 3 instead (for the test suite);
#                  "only": install what is missing and exit (scripts/install_deps.sh for
#                  the mpicc on PATH; for another build's MPI with CB_PRELOAD_LIB set)
#   CB_PRELOAD_LIB the library (default build/libcb_engine_preload.so); mpi4py is run with
#                  the MPI library it links (where it is missing: the one mpicc links)
#   CB_TEST_PRELOAD_FIRST  libraries LD_PRELOAD names before the library, ':' between them
#                  (a sanitizer build's runtimes: tests/integration/test_preload.py)
#   MPICC          where CB_PRELOAD_LIB is missing, the compiler wrapper whose MPI library
#                  counts (default mpicc); with the standard ABI, the one mpi4py is built
#                  with (default mpicc_abi beside the MPI library)
#   MPIRUN         the launcher (default mpirun)
# mpi4py for MPICH's ABI (Debian's MPICH 4, MPICH 5) and Open MPI's is PyPI's binary wheel
# (a few seconds); for the MPI 5.0 standard ABI, which the wheel lacks, a source build with
# mpicc_abi (about 35 s of CPU). Both from PyPI, and the tests from mpi4py's source
# distribution there.
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
args=${MPI4PY_ARGS--f}

# --- which MPI library: the one the preload library links (else the one mpicc links) --------
# mpi4py must call the same library as the preload: MPICH's ABI (libmpi.so.12; Debian's
# MPICH names it libmpich.so.12), Open MPI's (libmpi.so.40), or the MPI 5.0 standard ABI
# (libmpi_abi.so, e.g. MPICH 5 built for it, scripts/mpi_select.sh's mpich5-abi).
libmpi_of() {  # libmpi_of FILE: "NAME PATH" of the MPI library FILE links
  ldd "$1" 2>/dev/null | awk '$1 ~ /^lib(mpi|mpich|mpi_abi)\.so(\.[0-9]+)*$/ && $3 ~ /^\// {
    print $1, $3; exit }'
}
if [ -f "$lib" ]; then
  read -r libmpi_name libmpi_path <<<"$(libmpi_of "$lib")"
  probe_from=$lib
else  # before the build (scripts/install_deps.sh): the MPI of the mpicc on PATH
  probe=$(mktemp -d)
  printf '#include <mpi.h>\nint main(int c, char **v) { return MPI_Init(&c, &v); }\n' \
    >"$probe/p.c"
  "${MPICC:-mpicc}" -o "$probe/p" "$probe/p.c" >/dev/null 2>&1
  read -r libmpi_name libmpi_path <<<"$(libmpi_of "$probe/p")"
  rm -rf "$probe"
  probe_from="${MPICC:-mpicc} ($(command -v "${MPICC:-mpicc}"))"
fi
[ -n "${libmpi_path:-}" ] || { echo "no MPI library found in what $probe_from links" >&2; exit 3; }
libdir=$(dirname "$libmpi_path")
case "$libmpi_name" in
  libmpi_abi.so*) abi=mpiabi ;;
  libmpi.so.40) abi=openmpi ;;
  *) abi=mpich ;;
esac

# --- mpi4py for that ABI, and its test directory -------------------------------------------
# MPICH's and Open MPI's ABI: PyPI's binary wheel in $venv (seconds), whose extension modules
# for each (MPI.mpich.so, MPI.openmpi.so) need libmpi.so.12 and libmpi.so.40: found through
# LD_LIBRARY_PATH, for Debian's libmpich.so.12 as a link $venv/libmpi/<hash>/libmpi.so.12 to
# it; MPI4PY_MPIABI names which module to load. The wheel has no module for the standard ABI:
# there mpi4py is built from source with the MPI's mpicc_abi in its own environment
# $venv/mpiabi (at -O0: about 35 s of CPU on a 2-core VM).
run_env=(env "LD_LIBRARY_PATH=$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}")
if [ "$abi" = mpiabi ]; then
  pyenv=$venv/mpiabi
  mpicc_abi=${MPICC:-$(dirname "$libdir")/bin/mpicc_abi}
  [ -x "$mpicc_abi" ] || command -v "$mpicc_abi" >/dev/null || mpicc_abi=mpicc
else
  pyenv=$venv
  run_env+=("MPI4PY_MPIABI=$abi")
  if [ "$libmpi_name" = libmpich.so.12 ]; then
    shim=$venv/libmpi/$(echo "$libmpi_path" | md5sum | cut -c1-12)
    run_env[1]="LD_LIBRARY_PATH=$shim${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  fi
fi
py=$pyenv/bin/python
have_mpi4py() {  # mpi4py $version of the right kind in $pyenv, and it loads this MPI
  local site
  [ -x "$py" ] || return 1
  site=$("$py" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])') || return 1
  if [ "$abi" = mpiabi ]; then
    compgen -G "$site/mpi4py/MPI.cpython-*.so" >/dev/null || return 1
  else
    compgen -G "$site/mpi4py/MPI.$abi.*.so" >/dev/null || return 1  # the wheel, not a build
  fi
  [ "$("${run_env[@]}" "$py" -c 'import mpi4py; mpi4py.rc.initialize = False
from mpi4py import MPI
print(mpi4py.__version__)' 2>/dev/null)" = "$version" ]
}
tests_dir() {
  local d
  for d in "$venv"/src/mpi4py-"$version"/test; do [ -f "$d/main.py" ] && { echo "$d"; return; }; done
}
need() {
  if [ "${MPI4PY_INSTALL:-1}" = 0 ]; then
    local how="MPI4PY_INSTALL=only CB_PRELOAD_LIB=$lib scripts/preload_mpi4py_tests.sh"
    [ "$abi" = mpiabi ] || how="scripts/install_deps.sh, or $how,"
    echo "$1 missing in $pyenv (for $libmpi_path; $how installs it)" >&2
    exit 3
  fi
}
[ -z "${shim:-}" ] || { mkdir -p "$shim" && ln -sfn "$libmpi_path" "$shim/libmpi.so.12"; }
if ! have_mpi4py; then
  need "mpi4py $version ($abi)"
  start=$SECONDS
  if ! { [ -x "$py" ] || python3 -m venv "$pyenv"; }; then
    echo "cannot make a Python environment in $pyenv" >&2
    exit 3
  fi
  if [ "$abi" = mpiabi ]; then
    echo "installing mpi4py $version into $pyenv, built with $mpicc_abi (the MPI 5.0 standard ABI)" >&2
    # (--no-cache-dir: not a wheel pip built earlier, for another MPI)
    MPICC=$mpicc_abi CFLAGS=-O0 "$pyenv/bin/pip" install -q --disable-pip-version-check \
      --no-cache-dir --force-reinstall --no-binary mpi4py "mpi4py==$version" >&2
  else
    echo "installing mpi4py $version into $pyenv (PyPI's wheel)" >&2
    "$pyenv/bin/pip" install -q --disable-pip-version-check --force-reinstall \
      --only-binary mpi4py "mpi4py==$version" >&2
  fi || { echo "mpi4py install failed" >&2; exit 3; }
  echo "mpi4py installed in $((SECONDS - start)) s" >&2
  have_mpi4py || { echo "mpi4py in $pyenv does not load $libmpi_path" >&2; exit 3; }
fi
if [ -z "$(tests_dir)" ]; then  # test/ of the source distribution, unpacked alone
  need "mpi4py $version's test directory"
  mkdir -p "$venv/src"
  sdist=$venv/src/mpi4py-$version.tar.gz
  # The file PyPI lists for the version, checked against its SHA-256 (pip download would
  # prepare the package's metadata: a build environment, 15 s).
  "$py" - "$version" "$sdist" <<'PY' >&2 ||
import hashlib, json, sys, urllib.request
version, path = sys.argv[1:]
with urllib.request.urlopen("https://pypi.org/pypi/mpi4py/json", timeout=60) as r:
    sdist = next(u for u in json.load(r)["releases"][version] if u["packagetype"] == "sdist")
with urllib.request.urlopen(sdist["url"], timeout=120) as r:
    data = r.read()
if hashlib.sha256(data).hexdigest() != sdist["digests"]["sha256"]:
    sys.exit(f"{sdist['url']}: SHA-256 does not match PyPI's")
open(path, "wb").write(data)
PY
    "$pyenv/bin/pip" download -q --disable-pip-version-check --no-deps --no-binary mpi4py \
      "mpi4py==$version" -d "$venv/src" >&2
  if ! [ -f "$sdist" ] || ! tar -xzf "$sdist" -C "$venv/src" "mpi4py-$version/test"; then
    echo "cannot fetch mpi4py $version's source distribution" >&2
    exit 3
  fi
  rm -f "$sdist"
fi
testdir=$(tests_dir)
[ "${MPI4PY_INSTALL:-1}" = only ] && {
  echo "mpi4py $version ($abi, for $libmpi_path) and its tests: $pyenv" >&2
  exit 0
}
if [[ " $runs " == *" preload "* ]]; then
  [ -f "$lib" ] || { echo "no $lib: build the target cb_engine_preload first" >&2; exit 2; }
  lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
modules=$(cd "$testdir" && printf '%s\n' test_*.py | sed 's/\.py$//' | grep -E "$pat")
[ -n "$modules" ] || { echo "no module of $testdir matches $pat" >&2; exit 3; }

# Each rank's output to its own file (MPICH's launcher sets PMI_RANK, Open MPI's
# OMPI_COMM_WORLD_RANK).
wrap=$out/rank_output.sh
cat >"$wrap" <<'EOF'
#!/bin/sh
log=$1
shift
exec "$@" >"$log.${PMI_RANK:-${OMPI_COMM_WORLD_RANK:-${PMIX_RANK:-0}}}" 2>&1
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
  echo "# mpi4py $version ($pyenv) tests ($testdir)"
  echo "# $("${run_env[@]}" "$py" -c 'import mpi4py; mpi4py.rc.initialize = False
from mpi4py import MPI; print(MPI.Get_library_version().replace("\0", "").splitlines()[0])') ($libmpi_path)"
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
        envs=(env "LD_PRELOAD=${CB_TEST_PRELOAD_FIRST:+$CB_TEST_PRELOAD_FIRST:}$lib"
              CB_PRELOAD_VERBOSE=1 "CB_PRELOAD_LOG=$log.verbose")
        [ "$np" -gt 2 ] && envs+=(CB_PRELOAD_WAIT=yield)
      fi
      start=$SECONDS
      # shellcheck disable=SC2086  # $args: words
      timeout -k 10 "$T" "$mpirun" -n "$np" "$wrap" "$log" "${run_env[@]}" "${envs[@]}" "$py" \
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
