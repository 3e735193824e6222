#!/bin/bash
# The small-message path against the engine's next choice and MPICH at 2-16 ranks (issue 39,
# "Scale"): cb_allreduce, cb_bcast and cb_alltoall, every rank yielding (--wait yield: this
# machine has 2 cores, more busy-polling ranks only steal each other's CPU). Per pass, rank
# count and collective, one engine launch (the small algorithm and the next ones interleaved
# pass by pass inside it) and one --backend mpi launch (MPICH's non-blocking form, polled with
# sched_yield), the one first alternating. Alltoall's sizes stop where a rank's row (per-peer
# block x ranks) outgrows the 16 KiB slot. scripts/small_path_scale.py summarises OUT.
# Usage: flock -x /tmp/cb_quiet.lock scripts/small_path_scale.sh [BUILD] [OUT]
# Environment: CB_PASSES (launches per pair, default 6), CB_RANKS (default "2 4 8 16").
set -u
B=${1:-build}
OUT=${2:-results/small-path-scale}
mkdir -p "$OUT/raw"
for pass in $(seq 1 "${CB_PASSES:-6}"); do
  for np in ${CB_RANKS:-2 4 8 16}; do
    it=$((800 / np)); [ "$np" -le 2 ] && it=400
    for coll in allreduce bcast alltoall; do
      case $coll in
        allreduce) algos=small,shm_flat; sz=8:8K; sf=32 ;;
        bcast) algos=small,shm,binomial; sz=8:8K; sf=32 ;;
        alltoall)
          mx=$((16384 / np)); [ $mx -gt 4096 ] && mx=4096
          algos=small,shm; sz=8:$mx; sf=8 ;;
      esac
      common=(-m "$sz" --stepfactor $sf -i $it -x $((it / 10)) --repeat 5 --wait yield -q
              --seed $((pass * 100 + np)))
      if [ $(((pass + np) % 2)) = 0 ]; then order="eng mpi"; else order="mpi eng"; fi
      for which in $order; do
        if [ "$which" = eng ]; then a=(--backend engine --algo "$algos"); else a=(--backend mpi); fi
        f="$OUT/raw/$coll.np$np.$which.pass$pass"
        timeout 300 mpirun -n "$np" "$B/cb_$coll" "${a[@]}" "${common[@]}" -J "$f.json" > "$f.txt" 2>&1 ||
          echo "FAILED: $coll np=$np $which pass $pass (rc $?): $f.txt" >&2
      done
    done
    echo "$(date -u +%T) pass $pass, $np ranks done" >&2
  done
done
