#!/usr/bin/env bash
# Issue 25's check that keeping MPI's promises cost no speed, from the repository root
# (2 ranks, this 2-core VM):
#   bash results/vm-20261125/preload-issue25/run.sh build results/vm-20261125/preload-issue25
# cb_allreduce, cb_bcast and cb_alltoall --backend mpi (an unmodified program's calls on
# its own buffers) without and with LD_PRELOAD=libcb_engine_preload.so, one interleaved
# pair at 1-64 MiB (alltoall 1-16 MiB per peer), each size the median of 3 passes, -c; then
# the interposition cost at 8 B (CB_ENGINE=off: every call passed through, now with
# BlockedProgress around it), 3 interleaved pairs. The same method as ../preload/run.sh,
# whose ratios are the baseline; summarize.py there writes the tables.
set -euo pipefail
build=${1:-build}
out=${2:-results/vm-20261125/preload-issue25}
lib=$(cd "$build" && pwd)/libcb_engine_preload.so
mkdir -p "$out"
run() {  # run NAME PRELOAD(0/1) ENV BENCH ARGS...
  local name=$1 preload=$2 env=$3 bench=$4
  shift 4
  local pre=()
  [ "$preload" = 1 ] && pre=(-genv LD_PRELOAD "$lib")
  [ -n "$env" ] && pre+=(-genv "${env%%=*}" "${env#*=}")
  echo "== $name: cb_$bench $*"
  mpirun -n 2 "${pre[@]}" "$build/cb_$bench" -J "$out/$name.json" "$@" > "$out/$name.txt"
}
for coll in allreduce bcast alltoall; do
  max=64M
  [ "$coll" = alltoall ] && max=16M
  run "$coll.mpi.1" 0 "" "$coll" --backend mpi -m 1M:$max --repeat 3 -c
  run "$coll.preload.1" 1 "" "$coll" --backend mpi -m 1M:$max --repeat 3 -c
done
for pass in 1 2 3; do
  run "overhead.mpi.$pass" 0 "" allreduce --backend mpi -m 8:8 -i 20000 -x 2000
  run "overhead.passthrough.$pass" 1 "CB_ENGINE=off" allreduce --backend mpi -m 8:8 -i 20000 -x 2000
done
