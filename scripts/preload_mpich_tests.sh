#!/usr/bin/env bash
# MPICH's own collective tests (MPICH 4.0.2's test/mpi/coll with util/ and include/) run
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
#   MPICH_TESTS  the suite (default .peer/mpich-coll-tests/ in the repository, git-ignored,
#                else ../shared/peer/mpich-coll-tests next to it)
#   NO_PRELOAD=1 run without the library (the baseline)
#   MPICH_TESTS_INSTALL=only  fetch the suite into .peer/mpich-coll-tests/ when it is not
#                there, and exit (scripts/install_deps.sh; idempotent, about 10 s): MPICH's
#                source as Debian's archive has it (mpich_4.0.2.orig.tar.xz, 22 MB, checked
#                against its SHA-256), of which only test/mpi/{coll,util,include} and COPYRIGHT
#                are unpacked; include/mpitestconf.h and an empty include/mtest_mpix.h replace
#                what MPICH's configure would generate, coll/testlist is testlist.in without
#                its configure-only (@...@) lines. The tests run with scripts/mpich_coll_run.sh.
#   CB_TEST_PRELOAD_FIRST  libraries LD_PRELOAD names before it, ':' between them (a
#                   sanitizer build's runtimes: tests/integration/test_preload.py)
# Prints "PASS|FAIL|SKIP name ..." per testlist entry, then per test one line
#   "ENGINE name: <n> engine, <n> passed through [MPI_Allreduce=<n> ...]"
# and a last line "N passed, N failed, N skipped; engine took N calls, passed N through".
# Exit status 1 when a test failed, 2 when the suite or the library is missing.
set -u
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-/tmp/cb_preload_mpich}
pat=${2:-.}
fetched=$repo/.peer/mpich-coll-tests
suite=${MPICH_TESTS:-}
if [ -z "$suite" ]; then
  suite=$fetched
  [ -f "$suite/coll/testlist" ] || [ ! -f "$repo/../shared/peer/mpich-coll-tests/coll/testlist" ] ||
    suite=$repo/../shared/peer/mpich-coll-tests
fi
lib=${CB_PRELOAD_LIB:-$repo/build/libcb_engine_preload.so}
export MAXNP=${MAXNP:-2} T=${T:-120}

# --- the suite, fetched from Debian's archive (MPICH_TESTS_INSTALL=only) ---------------------
SRC_URL=${MPICH_SRC_URL:-http://deb.debian.org/debian/pool/main/m/mpich/mpich_4.0.2.orig.tar.xz}
SRC_SHA256=b27039f964afeb6b8a3e009c56b441cbe368c26d6d6476ad3bb7190996875860
fetch_suite() {  # into $fetched, atomically (a folder beside it, renamed when complete)
  local tmp top=mpich-4.0.2 start=$SECONDS
  mkdir -p "$(dirname "$fetched")"
  tmp=$(mktemp -d "$fetched.XXXXXX") || return 1
  echo "fetching MPICH 4.0.2's collective tests from $SRC_URL" >&2
  if ! python3 - "$SRC_URL" "$tmp/src.tar.xz" "$SRC_SHA256" <<'PY'
import hashlib, sys, urllib.request
url, path, sha = sys.argv[1:]
with urllib.request.urlopen(url, timeout=120) as r, open(path, "wb") as f:
    f.write(r.read())
got = hashlib.sha256(open(path, "rb").read()).hexdigest()
if got != sha:
    sys.exit(f"{url}: SHA-256 {got}, expected {sha}")
PY
  then
    rm -rf "$tmp"
    return 1
  fi
  if ! tar -xJf "$tmp/src.tar.xz" -C "$tmp" "$top/COPYRIGHT" "$top/test/mpi/coll" \
      "$top/test/mpi/util" "$top/test/mpi/include"; then
    rm -rf "$tmp"
    return 1
  fi
  mkdir -p "$tmp/suite"
  mv "$tmp/$top/COPYRIGHT" "$tmp/$top/test/mpi/coll" "$tmp/$top/test/mpi/util" \
    "$tmp/$top/test/mpi/include" "$tmp/suite/"
  # What MPICH's configure would generate for this suite (a POSIX system with pthreads),
  # and the test list without the entries configure enables (@largetest@ ...).
  printf '#define %s\n' "HAVE_STDLIB_H 1" "HAVE_STRING_H 1" "HAVE_UNISTD_H 1" \
    "HAVE_SYS_TIME_H 1" "HAVE_SYS_RESOURCE_H 1" "HAVE_LONG_DOUBLE 1" "HAVE_LONG_LONG 1" \
    "POINTERINT_t int" "THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX" "THREAD_PACKAGE_POSIX 1" \
    "HAVE_STDARG_H 1" >"$tmp/suite/include/mpitestconf.h"
  : >"$tmp/suite/include/mtest_mpix.h"  # MPICH's MPIX_ names, which other MPIs lack
  grep -v '^@' "$tmp/suite/coll/testlist.in" >"$tmp/suite/coll/testlist"
  printf '%s\n' "MPICH 4.0.2's test/mpi/coll, test/mpi/util and test/mpi/include, under MPICH's" \
    "licence (COPYRIGHT), from $SRC_URL (SHA-256 $SRC_SHA256)," \
    "fetched by scripts/preload_mpich_tests.sh; include/mpitestconf.h, include/mtest_mpix.h" \
    "(empty) and coll/testlist are ours. Run them with scripts/mpich_coll_run.sh or" \
    "scripts/preload_mpich_tests.sh." >"$tmp/suite/README.md"
  rm -rf "$fetched"
  mv "$tmp/suite" "$fetched" && rm -rf "$tmp"
  echo "MPICH's collective tests in $fetched ($((SECONDS - start)) s)" >&2
}
if [ "${MPICH_TESTS_INSTALL:-}" = only ]; then
  if [ -f "$fetched/coll/testlist" ]; then
    echo "MPICH's collective tests already in $fetched" >&2
    exit 0
  fi
  fetch_suite || { echo "cannot fetch MPICH's collective tests from $SRC_URL" >&2; exit 2; }
  exit 0
fi
[ -f "$suite/coll/testlist" ] || {
  echo "no MPICH test suite at $suite (MPICH_TESTS_INSTALL=only scripts/preload_mpich_tests.sh, or scripts/install_deps.sh, fetches it)" >&2
  exit 2
}
suite=$(cd "$suite" && pwd)
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
    res=$(MPICH_TESTS=$suite bash "$repo/scripts/mpich_coll_run.sh" "$out" "^$name\$")
  else
    res=$(WRAP="env LD_PRELOAD=${CB_TEST_PRELOAD_FIRST:+$CB_TEST_PRELOAD_FIRST:}$lib CB_PRELOAD_VERBOSE=1 CB_PRELOAD_LOG=$log" \
          MPICH_TESTS=$suite bash "$repo/scripts/mpich_coll_run.sh" "$out" "^$name\$")
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
