#!/usr/bin/env bash
# The engine against every MPI library installed (issue 26), 2 ranks on this machine:
#   scripts/compare_mpis.sh OUTDIR [more cb_<coll> options]
#   CB_SIZES=1K:4K CB_PASSES=1 scripts/compare_mpis.sh /tmp/smoke -i 5 -x 1  (a smoke run)
# For each MPI in CB_MPIS (default "mpich4 mpich5 openmpi5"; scripts/mpi_select.sh names
# them, scripts/install_mpi.sh installs the registry's), a Release build in
# build-release[-MPI]/ (Debian's MPICH: build-release/), then one interleaved run: for each
# collective (CB_COLLS, default allreduce bcast alltoall allgather reduce_scatter), pass by
# size range (a chunk) and pass (CB_PASSES, default 3), every MPI's own collectives
# (--backend mpi, built against it), then the engine (--backend engine on its own buffers,
# and --alloc plain; built against CB_ENGINE_MPIS, default the first MPI: its shared-memory
# paths do not go through MPI) and the engine under an unmodified program (cb_<coll>
# --backend mpi with LD_PRELOAD=libcb_engine_preload.so) on every MPI. The chunks
# (CB_CHUNKS, default "4:16K 32K:1M 2M:64M"; alltoall, per peer, CB_CHUNKS_ALLTOALL,
# default "4:16K 32K:1M 2M:16M"; CB_SIZES: one chunk) keep the series of one comparison
# seconds apart: this VM's speed drifts over minutes (README, "Comparing backends"), so
# compare_mpis.py takes each ratio within a pass. -c; CB_ITERS_LARGE (default 50)
# iterations above 8 KiB.
# Writes OUTDIR/<coll>.<series>.<pass>.c<chunk>.json (and .txt), copy_bw.json, and with
# scripts/compare_mpis.py OUTDIR/comparison.md (a table per collective: each series'
# average latency and engine time / the fastest library's) and OUTDIR/plots/<coll>.*
# (matplotlib: every series, with the copy bound). Timings need a quiet machine.
# CB_COMPARE_REUSE=1: use the build folders the tests use (build/, build-$CB_MPI/) as they
# are configured, building only the benchmarks and the preload there (for a smoke run).
# CB_COMPARE_TARGETS: what to build (default "cb_benchmarks cb_engine_preload"; naming
# only cb_<coll> of CB_COLLS, cb_copybw and cb_engine_preload saves most of the build).
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:?usage: scripts/compare_mpis.sh OUTDIR [cb options]}
shift
extra=("$@")
mpis=${CB_MPIS:-mpich4 mpich5 openmpi5}
colls=${CB_COLLS:-allreduce bcast alltoall allgather reduce_scatter}
passes=${CB_PASSES:-3}
engine_mpis=${CB_ENGINE_MPIS:-${mpis%% *}}
targets=${CB_COMPARE_TARGETS:-cb_benchmarks cb_engine_preload}
mkdir -p "$out"
out=$(cd "$out" && pwd)

declare -A BUILD RUN REAL
for mpi in $mpis; do
  # shellcheck source=scripts/mpi_select.sh
  (source scripts/mpi_select.sh && CB_MPI=$mpi cb_mpi_select) >/dev/null || {
    echo "compare_mpis: cannot select $mpi" >&2
    exit 2
  }
  if [ "${CB_COMPARE_REUSE:-0}" = 1 ]; then
    build=$(source scripts/mpi_select.sh && CB_MPI=$mpi cb_mpi_build_dir build)
    [ -f "$build/CMakeCache.txt" ] || { echo "compare_mpis: no $build/ to reuse" >&2; exit 2; }
    echo "== compare_mpis: $mpi: reusing $build/"
    # shellcheck disable=SC2086
    cmake --build "$build" -j"$(nproc)" $(printf -- '--target %s ' $targets) >/dev/null
  else
    case "$mpi" in mpich4) build=build-release ;; *) build=build-release-$mpi ;; esac
    echo "== compare_mpis: building against $mpi in $build/"
    CB_MPI=$mpi CB_BUILD_TARGETS="$targets" bash scripts/build.sh "$build" \
      -DCMAKE_BUILD_TYPE=Release -DCOLLBENCH_BUILD_TESTS=OFF
  fi
  BUILD[$mpi]=$build
  # the launcher: scripts/mpirun_compat.sh in front of the MPI's own mpirun
  REAL[$mpi]=$(source scripts/mpi_select.sh && CB_MPI=$mpi cb_mpi_select >/dev/null &&
               echo "${CB_MPIRUN_REAL:-mpirun}")
  RUN[$mpi]=$PWD/scripts/mpirun_compat.sh
done
first=${mpis%% *}
"${BUILD[$first]}/cb_copybw" -J "$out/copy_bw.json" > "$out/copy_bw.txt"

run() {  # run MPI NAME PRELOAD(0/1) BENCH ARGS...
  local mpi=$1 name=$2 preload=$3 bench=$4 build
  shift 4
  build=${BUILD[$mpi]}
  local envs=()
  [ "$preload" = 1 ] && envs=(LD_PRELOAD="$PWD/$build/libcb_engine_preload.so")
  echo "== $name: cb_$bench $*"
  if ! env CB_MPIRUN_REAL="${REAL[$mpi]}" CB_MPIRUN_AS_USERS=1 "${envs[@]}" "${RUN[$mpi]}" -n 2 "$build/cb_$bench" \
      -J "$out/$name.json" "$@" > "$out/$name.txt" 2>&1; then
    echo "compare_mpis: $name failed (see $out/$name.txt)" >&2
    tail -5 "$out/$name.txt" >&2
    return 1
  fi
}

chunks() {  # chunks COLL: the size ranges, each run by every series back to back
  if [ -n "${CB_SIZES:-}" ]; then
    echo "$CB_SIZES"
  elif [ "$1" = alltoall ]; then
    echo "${CB_CHUNKS_ALLTOALL:-4:16K 32K:1M 2M:16M}"
  else
    echo "${CB_CHUNKS:-4:16K 32K:1M 2M:64M}"
  fi
}

for coll in $colls; do
  c=0
  for sizes in $(chunks "$coll"); do
    c=$((c + 1))
    args=(-m "$sizes" -c --iterations-large "${CB_ITERS_LARGE:-50}" "${extra[@]}")
    for pass in $(seq 1 "$passes"); do
      at=$pass.c$c
      for mpi in $mpis; do
        run "$mpi" "$coll.mpi-$mpi.$at" 0 "$coll" --backend mpi "${args[@]}"
      done
      for mpi in $engine_mpis; do
        run "$mpi" "$coll.engine-$mpi.$at" 0 "$coll" --backend engine "${args[@]}"
        run "$mpi" "$coll.engine-plain-$mpi.$at" 0 "$coll" --backend engine --alloc plain "${args[@]}"
      done
      for mpi in $mpis; do
        run "$mpi" "$coll.preload-$mpi.$at" 1 "$coll" --backend mpi "${args[@]}"
      done
    done
  done
done
python3 scripts/compare_mpis.py "$out"
echo "compare_mpis: JSON, comparison.md and plots/ in $out"
