#!/usr/bin/env bash
# Real MPI programs that nobody here wrote, run on plain MPICH and under
# libcb_engine_preload.so (issue 39, "Real applications"; docs/preload.md): per application
# whether its output is identical (bit for bit, after removing timings), the preload's
# per-function engine / passed-through counts (CB_PRELOAD_VERBOSE, summed over ranks and
# runs), and its time plain vs preloaded (interleaved pairs, median ratio with the sign
# test's interval, scripts/cbstats.py).
#
#   scripts/preload_apps.sh [OUTDIR]      (default /tmp/cb_preload_apps)
#
# Applications (APPS, in this order by default):
#   mpi4py     mpi4py 4.1.2's whole test suite (every test_* module, one launch per module
#              and run) through scripts/preload_mpi4py_tests.sh, plus each rank's unittest -v
#              output compared line for line (the "Ran N tests in X s" time removed)
#   hdf5       ph5example, HDF5 1.10.8's parallel example (libhdf5-doc), built with Debian's
#              MPICH HDF5 (h5pcc.mpich): independent and collective writes and reads of
#              hyperslabs through MPI-IO; each rank's output compared, and the two HDF5
#              files it writes compared as h5dump prints them (the files carry object
#              modification times, so not byte for byte)
#   scalapack  ScaLAPACK 2.2.1's MPICH test programs (scalapack-mpi-test: LU, QR, Cholesky,
#              inverse in real and complex, PBLAS level 3; BLACS grids = row and column
#              communicators, derived datatypes for matrix blocks) with their own inputs;
#              output compared with the numbers printed as times and rates (F8.2 fields)
#              masked, and gfortran's note at STOP on which IEEE flags the rank raised
#              compared apart (a verdict "identical (apart from ...)": which rank does
#              which part of a reduction's arithmetic is the library's choice). Grids larger than the rank count are skipped by the programs
#              themselves, alike in both runs.
# What they need: scripts/install_deps.sh --apps (Debian's libhdf5-mpich-dev, libhdf5-doc,
# hdf5-tools, scalapack-mpi-test) and, for mpi4py, what install_deps.sh installs anyway.
#
# Environment:
#   APPS            applications to run (default "mpi4py hdf5 scalapack")
#   NPS             rank counts of the correctness runs (default "2 4"; mpi4py: MPI4PY_NPS,
#                   default "2 3"); above 2 ranks (a 2-core VM) the preload runs with
#                   CB_PRELOAD_WAIT=yield. Plain MPICH (ch4:ucx) has no yield mode
#   SCALAPACK_NPS   rank counts for scalapack (default 2: its 4-rank grids take minutes with
#                   4 busy-polling plain MPICH ranks on 2 cores)
#   SCALAPACK_TESTS the programs (default "xdlu xzlu xdqr xdllt xdinv xzinv PBLAS/dpb3tst")
#   MPI4PY_PATTERN  modules (default ^test_); MPI4PY_TIMED the modules timed (default
#                   "test_cco_buf test_cco_vec")
#   REPS            timed pairs per application (default 7; 6 or more give an interval, 0
#                   skips timing); timed at 2 ranks, each pair's order alternating
#   MPI4PY_SUITE    a folder of a finished scripts/preload_mpi4py_tests.sh run over the whole
#                   suite, used instead of running it again (it takes about N minutes)
#   T               seconds per run, counted once the MPI lock is held (default 300)
#   CB_PRELOAD_LIB  the library (default build/libcb_engine_preload.so)
#   MPIRUN          the launcher (default /usr/bin/mpirun.mpich, MPICH's hydra)
#   CB_APPS_LOCKS   0: take no lock (default: correctness runs under flock /tmp/cb_mpi.lock,
#                   timings under flock -x /tmp/cb_quiet.lock and the MPI lock)
# Writes OUTDIR/apps.json (per application and rank count: runs, identical, engine counts,
# timing; from every application's records in OUTDIR, also those of earlier runs with other
# APPS) and OUTDIR/summary.md (scripts/preload_apps_report.py), logs under OUTDIR/<app>/, and
# OUTDIR/bytes-share.{json,md}: the share of the routed collective bytes the engine took
# (scripts/preload_bytes_share.py over every preloaded run's CB_PRELOAD_VERBOSE log).
# Exit status 0 when every application ran identically under the preload, 1 otherwise, 2
# when the library or an application is missing.
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-/tmp/cb_preload_apps}
apps=${APPS:-mpi4py hdf5 scalapack}
nps=${NPS:-2 4}
reps=${REPS:-7}
T=${T:-300}
lib=${CB_PRELOAD_LIB:-$repo/build/libcb_engine_preload.so}
mpirun=${MPIRUN:-/usr/bin/mpirun.mpich}  # Debian's mpirun may be Open MPI's (install_deps.sh)
command -v "$mpirun" >/dev/null || mpirun=mpirun
[ -f "$lib" ] || { echo "no $lib: build the target cb_engine_preload first" >&2; exit 2; }
lib=$(cd "$(dirname "$lib")" && pwd)/$(basename "$lib")
mkdir -p "$out"
out=$(cd "$out" && pwd)
# OUTDIR/<app>/records.jsonl: one JSON object per finding, from which apps.json is made;
# an application's are replaced when it runs again, the others' kept (APPS=hdf5 reruns it alone)
status=0

# A launcher that takes the MPI lock first and then counts T (a queue for the lock is no hang).
locked=$out/mpirun_locked.sh
if [ "${CB_APPS_LOCKS:-1}" = 0 ]; then
  printf '#!/bin/sh\nexec timeout -k 10 "$CB_APP_T" %s "$@"\n' "$mpirun" >"$locked"
else
  printf '#!/bin/sh\nexec flock /tmp/cb_mpi.lock timeout -k 10 "$CB_APP_T" %s "$@"\n' \
    "$mpirun" >"$locked"
fi
chmod +x "$locked"
export CB_APP_T=$T
# Each rank's output to its own file (hydra sets PMI_RANK).
wrap=$out/rank_output.sh
printf '#!/bin/sh\nlog=$1\nshift\nexec "$@" >"$log.${PMI_RANK:-0}" 2>&1\n' >"$wrap"
chmod +x "$wrap"

record() { python3 -c 'import json, sys; print(json.dumps(dict(a.split("=", 1) for a in sys.argv[1:])))' "$@" >>"$records"; }

# run LOG NP VARIANT CMD...: one launch, plain or preloaded (VARIANT), each rank's output in
# LOG.<rank>, the preload's counts in LOG.verbose; prints the seconds it took (through the
# locked launcher of the checks, the wait for the MPI lock included: the records'
# seconds_* are no timing; timed() launches inside its locks) and returns mpirun's status.
run() {
  local log=$1 np=$2 variant=$3 envs=() t0 rc
  shift 3
  rm -rf "$log".[0-9]* "$log.verbose" "$log.files"
  mkdir -p "$log.files"  # CB_FILES: where a program that writes files writes them
  if [ "$variant" = preload ]; then
    envs=(env "LD_PRELOAD=$lib" CB_PRELOAD_VERBOSE=1 "CB_PRELOAD_LOG=$log.verbose")
    [ "$np" -gt 2 ] && envs+=(CB_PRELOAD_WAIT=yield)
  else
    envs=(env)
  fi
  envs+=("CB_FILES=$log.files")
  t0=$(date +%s.%N)
  "${launcher:-$locked}" -n "$np" "$wrap" "$log" "${envs[@]}" "$@" >"$log.launcher" 2>&1
  rc=$?
  python3 -c "import sys; print(f'{float(sys.argv[2]) - float(sys.argv[1]):.3f}')" "$t0" "$(date +%s.%N)"
  return $rc
}

# same A B NP MASK: each rank's output of run A against run B after sed -E MASK; prints
# "identical" or the first differing line
same() {
  local a=$1 b=$2 np=$3 mask=$4 r d
  for r in $(seq 0 $((np - 1))); do
    d=$(diff <(sed -E "$mask" "$a.$r" 2>/dev/null) <(sed -E "$mask" "$b.$r" 2>/dev/null) | head -3 | tr '\n' ' ')
    [ -z "$d" ] || { echo "rank $r: ${d:0:300}"; return 1; }
  done
  echo identical
}

# timed NAME NP CMD...: REPS interleaved pairs under the locks, seconds per launch appended
# to the records (the order within a pair alternates: plain first in even pairs).
timed() {
  local name=$1 np=$2 k first second v t t_plain t_preload
  shift 2
  [ "$reps" -gt 0 ] || return 0
  (
    if [ "${CB_APPS_LOCKS:-1}" != 0 ]; then
      exec 8>/tmp/cb_quiet.lock 9>/tmp/cb_mpi.lock
      flock -x 8 && flock 9
    fi
    # inside the locks: launch without taking the MPI lock again
    launcher=$out/mpirun_timed.sh
    printf '#!/bin/sh\nexec 8>&- 9>&-\nexec timeout -k 10 "$CB_APP_T" %s "$@"\n' "$mpirun" >"$launcher"
    chmod +x "$launcher"
    for k in $(seq 0 $((reps - 1))); do
      if [ $((k % 2)) = 0 ]; then first=plain second=preload; else first=preload second=plain; fi
      for v in $first $second; do
        t=$(run "$out/$name/timed.np$np.$v" "$np" "$v" "$@") || t=failed
        eval "t_$v=\$t"
      done
      record kind=time "app=$name" "np=$np" "pass=$k" "plain=$t_plain" "preload=$t_preload"
      echo "  $name np=$np pass $k: plain $t_plain s, preload $t_preload s"
    done
  )
}

# check NAME NP MASK CMD...: plain twice (the program's own run-to-run differences) and
# preloaded once, outputs compared, the preload's counts recorded
check() {
  local name=$1 np=$2 mask=$3 base=$out/${1%%-*}/$1.np$2 rc_p rc_q rc_r tp tq tr sp sq
  shift 3
  tp=$(run "$base.plain" "$np" plain "$@"); rc_p=$?
  tr=$(run "$base.plain2" "$np" plain "$@"); rc_r=$?
  tq=$(run "$base.preload" "$np" preload "$@"); rc_q=$?
  sp=$(same "$base.plain" "$base.plain2" "$np" "$mask")
  sq=$(same "$base.plain" "$base.preload" "$np" "$mask") || status=1
  [ "$rc_q" = "$rc_p" ] || { status=1; sq="exit status $rc_q, plain $rc_p; $sq"; }
  [ -n "${extra_check:-}" ] && sq=$($extra_check "$base" "$sq")
  [[ "$sq" == identical* ]] || status=1
  record kind=check "app=$name" "np=$np" "rc_plain=$rc_p" "rc_plain2=$rc_r" "rc_preload=$rc_q" \
    "plain_vs_plain=$sp" "plain_vs_preload=$sq" "seconds_plain=$tp" "seconds_plain2=$tr" \
    "seconds_preload=$tq" \
    "verbose=${base#"$out"/}.preload.verbose"
  echo "$name np=$np: plain rc=$rc_p ${tp}s, preload rc=$rc_q ${tq}s; plain vs plain: $sp; plain vs preload: $sq"
}

for app in $apps; do
  mkdir -p "$out/$app"
  records=$out/$app/records.jsonl
  : >"$records"
  case $app in
  mpi4py)
    # the whole suite through the mpi4py peer script, one launch per module and run (or a
    # finished run of it, MPI4PY_SUITE=DIR)
    if [ -n "${MPI4PY_SUITE:-}" ]; then
      [ -f "$MPI4PY_SUITE/summary.txt" ] || { echo "no $MPI4PY_SUITE/summary.txt" >&2; exit 2; }
      rm -rf "$out/mpi4py/suite"
      cp -r "$MPI4PY_SUITE" "$out/mpi4py/suite"
    else
      # (T: the peer script's own limit counts the wait for the lock; $locked counts T)
      MPIRUN=$locked T=86400 NPS=${MPI4PY_NPS:-2 3} MPI4PY_INSTALL=0 CB_PRELOAD_LIB=$lib \
        bash "$repo/scripts/preload_mpi4py_tests.sh" "$out/mpi4py/suite" "${MPI4PY_PATTERN:-^test_}" \
        | tee "$out/mpi4py/suite.out"
      rc=${PIPESTATUS[0]}
      [ "$rc" = 3 ] && { echo "mpi4py or its tests missing: scripts/install_deps.sh" >&2; exit 2; }
      [ "$rc" = 0 ] || status=1
    fi
    record kind=suite app=mpi4py summary=mpi4py/suite/summary.txt
    # each rank's -v output, module by module (test names, results, skip reasons)
    for f in "$out"/mpi4py/suite/*.preload.0; do
      [ -f "$f" ] || continue
      b=${f%.preload.0}
      np=${b##*.np}
      s=$(same "$b.plain" "$b.preload" "$np" 's/^(Ran [0-9]+ tests?) in [0-9.]+s$/\1/')
      record kind=output app=mpi4py "module=$(basename "${b%.np*}")" "np=$np" "plain_vs_preload=$s"
    done
    py=$repo/.venv-mpi4py/bin/python
    testdir=$(ls -d "$repo"/.venv-mpi4py/src/mpi4py-*/test | head -1)
    libdir=$repo/.venv-mpi4py/libmpi/$(ls "$repo/.venv-mpi4py/libmpi" | head -1)
    # shellcheck disable=SC2086  # module names: words
    timed mpi4py 2 env "LD_LIBRARY_PATH=$libdir" MPI4PY_MPIABI=mpich "$py" "$testdir/main.py" \
      ${MPI4PY_TIMED:-test_cco_buf test_cco_vec}
    ;;
  hdf5)
    src=/usr/share/doc/libhdf5-doc/examples/ph5example.c.gz
    command -v h5pcc.mpich >/dev/null && [ -f "$src" ] && command -v h5dump >/dev/null || {
      echo "HDF5 (MPICH) or its example missing: scripts/install_deps.sh --apps" >&2
      exit 2
    }
    gunzip -c "$src" >"$out/hdf5/ph5example.c"
    # In its own folder: h5pcc leaves ph5example.o in the working directory.
    (cd "$out/hdf5" && h5pcc.mpich -O2 -o ph5example ph5example.c) 2>"$out/hdf5/build.log" ||
      { echo "ph5example does not build: $out/hdf5/build.log" >&2; exit 2; }
    h5files() {  # the files of the run whose logs are $1.*: h5dump's text, compared
      local base=$1 verdict=$2 f d
      for f in ParaEg0 ParaEg1; do
        d=$(diff <(h5dump "$base.plain.files/$f.h5" 2>&1 | sed 1d) \
                 <(h5dump "$base.preload.files/$f.h5" 2>&1 | sed 1d) | head -2 | tr '\n' ' ')
        [ -f "$base.preload.files/$f.h5" ] || d="no $f.h5 under the preload"
        [ -z "$d" ] || { echo "$verdict; $f.h5 differs: ${d:0:200}"; return; }
      done
      echo "$verdict"
    }
    for np in $nps; do
      # each run writes its own files (-c: kept) into CB_FILES; the folder name differs
      # per run, so it is masked in the output
      extra_check=h5files
      check hdf5 "$np" 's#/hdf5\.np[0-9]+\.(plain2?|preload)\.files#/FILES#' \
        sh -c 'exec "$0" -c -f "$CB_FILES"' "$out/hdf5/ph5example"
      extra_check=
    done
    timed hdf5 2 sh -c 'exec "$0" -c -f "$CB_FILES"' "$out/hdf5/ph5example"
    ;;
  scalapack)
    sdir=/usr/lib/x86_64-linux-gnu/scalapack/mpich-tests
    [ -x "$sdir/xdlu" ] || { echo "no $sdir/xdlu: scripts/install_deps.sh --apps" >&2; exit 2; }
    rm -rf "$out/scalapack/tests"
    cp -rL "$sdir" "$out/scalapack/tests"  # the programs read their .dat from the folder
    # times and rates: F8.2-like fields (residuals have other formats), with their padding;
    # gfortran's note at STOP on the IEEE flags a rank raised is compared apart (ieee_note)
    mask='s/ +-?[0-9]+\.[0-9]{2}\b/ T/g; /^Note: The following floating-point exceptions are signalling/d'
    ieee_note() {  # the note's lines plain and preloaded, where they differ
      local base=$1 verdict=$2 a b
      a=$(cat "$base".plain.[0-9]* 2>/dev/null | grep -c '^Note: The following floating-point')
      b=$(cat "$base".preload.[0-9]* 2>/dev/null | grep -c '^Note: The following floating-point')
      if [ "$a" = "$b" ]; then echo "$verdict"; else
        echo "$verdict (apart from gfortran's note on the IEEE flags a rank raised: $a lines plain, $b preloaded)"
      fi
    }
    for t in ${SCALAPACK_TESTS:-xdlu xzlu xdqr xdllt xdinv xzinv PBLAS/dpb3tst}; do
      for np in ${SCALAPACK_NPS:-2}; do
        ( cd "$out/scalapack/tests/$(dirname "$t")" && extra_check=ieee_note &&
          check "scalapack-$(basename "$t")" "$np" "$mask" "./$(basename "$t")" )
      done
    done
    # (one program per launch: a second MPI_Init in the ranks' processes is refused)
    ( cd "$out/scalapack/tests" && timed scalapack 2 ./xdlu )
    # (check's status is the subshell's: the report's exit status counts every check)
    ;;
  *)
    echo "unknown application $app (mpi4py, hdf5, scalapack)" >&2
    exit 2
    ;;
  esac
done
python3 "$repo/scripts/preload_apps_report.py" "$out" || status=1
# The share of the routed collective bytes the engine took, per application whose preloaded
# runs left CB_PRELOAD_VERBOSE logs: OUTDIR/bytes-share.json and .md (scripts/preload_bytes_share.py)
shares=()
for app in mpi4py hdf5 scalapack; do
  [ -n "$(find "$out/$app" -name '*.verbose' 2>/dev/null | head -1)" ] && shares+=("$app=$out/$app")
done
[ ${#shares[@]} -gt 0 ] && echo &&
  python3 "$repo/scripts/preload_bytes_share.py" --json "$out/bytes-share.json" \
    --md "$out/bytes-share.md" "${shares[@]}"
exit $status
