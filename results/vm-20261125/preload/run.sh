#!/usr/bin/env bash
# Issue 14's comparison, from the repository root (2 ranks, this 2-core VM):
#   bash results/vm-20261125/preload/run.sh build results/vm-20261125/preload
# An unmodified MPI program's view: cb_allreduce, cb_bcast and cb_alltoall with
# --backend mpi (plain MPI calls on the program's own buffers), without and with
# LD_PRELOAD=libcb_engine_preload.so, interleaved (plain, preload, plain, preload) so that
# drift on this VM falls on both; each size the median of 3 passes, 1 B-64 MiB, -c.
# Then the interposition overhead at 8 B: calls passed through to PMPI (CB_ENGINE=off)
# against plain MPICH, 5 interleaved pairs of 20,000 iterations; the same for 8 B bcasts,
# which the tuning table hands to the library (passed through at once). Then ratio tables.
set -euo pipefail
build=${1:-build}
out=${2:-results/vm-20261125/preload}
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
"$build/cb_copybw" -J "$out/copy_bw.json" > "$out/copy_bw.txt"
for coll in allreduce bcast alltoall; do
  max=64M
  [ "$coll" = alltoall ] && max=16M  # per-peer block: 2 x 16 MiB per buffer
  for pass in 1 2; do
    run "$coll.mpi.$pass" 0 "" "$coll" --backend mpi -m 1:$max --repeat 3 -c
    run "$coll.preload.$pass" 1 "" "$coll" --backend mpi -m 1:$max --repeat 3 -c
  done
done
# Small sizes once more with the benchmark's untimed barrier between iterations left to
# MPICH (CB_BARRIER_ALGO=mpi): what is left of the difference once the barrier's exit
# order is MPICH's (the engine's releases its last arriver first, MPICH's rank 0).
for coll in allreduce bcast alltoall; do
  for pass in 1 2; do
    run "$coll.preload-mpibarrier.$pass" 1 "CB_BARRIER_ALGO=mpi" "$coll" --backend mpi -m 1:64K --repeat 3 -c
  done
done
for pass in 1 2 3 4 5; do
  run "overhead.mpi.$pass" 0 "" allreduce --backend mpi -m 8:8 -i 20000 -x 2000
  run "overhead.passthrough.$pass" 1 "CB_ENGINE=off" allreduce --backend mpi -m 8:8 -i 20000 -x 2000
done
# Calls the tuning table hands to the MPI library (small bcasts on private buffers): the
# preload's remembered decision against plain MPICH, 5 interleaved pairs.
for pass in 1 2 3 4 5; do
  run "tuned.mpi.$pass" 0 "" bcast --backend mpi -m 8:8 -i 20000 -x 2000
  run "tuned.preload.$pass" 1 "" bcast --backend mpi -m 8:8 -i 20000 -x 2000
  # the benchmark's untimed barrier between iterations left to MPICH as well: how much of
  # the difference is that barrier's exit order (the engine's releases its last arriver first)
  run "tuned.preload-mpibarrier.$pass" 1 "CB_BARRIER_ALGO=mpi" bcast --backend mpi -m 8:8 -i 20000 -x 2000
done
for pass in 1 2 3; do
  run "barrier.mpi.$pass" 0 "" barrier --backend mpi -i 20000 -x 2000
  run "barrier.preload.$pass" 1 "" barrier --backend mpi -i 20000 -x 2000
done
python3 "$(dirname "$0")/summarize.py" "$out"
