#!/usr/bin/env bash
# Issue 28's engine/MPICH comparison for the collectives the engine gained: gather, scatter,
# gatherv, scatterv, allgatherv at 2 ranks, 4 B-16 MiB (x4), the MPI backend (Debian's
# MPICH 4.0.2) and the engine (its default choice) run back to back per collective, twice
# (interleaved), each run --repeat 3 (median pass); then compare.py per collective.
#   bash results/vm-20261125/issue28/run.sh [BUILD_DIR [OUT_DIR [COLL ...]]]
# OUT_DIR (default: this folder) receives the files; COLLs replace the five above, e.g. the
# neighborhood collectives (on -N's default cart:1:1, one neighbor each at 2 ranks):
#   bash results/vm-20261125/issue28/run.sh build results/NEW neighbor_allgather \
#     neighbor_allgatherv neighbor_alltoall neighbor_alltoallv neighbor_alltoallw
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
build=${1:-build}
out=${2:-$here}
colls=("${@:3}")
[ ${#colls[@]} -gt 0 ] || colls=(gather scatter gatherv scatterv allgatherv)
mkdir -p "$out"
for round in 1 2; do
  for coll in "${colls[@]}"; do
    for backend in mpi engine; do
      mpirun -n 2 "$build/cb_$coll" --backend "$backend" -m 4:16M --stepfactor 4 --repeat 3 -c \
        -J "$out/$coll.$backend.r$round.json" > "$out/$coll.$backend.r$round.txt"
    done
  done
done
for coll in "${colls[@]}"; do
  for round in 1 2; do  # one table per round: the two rounds show the spread
    python3 scripts/compare.py --md "$out/$coll.ratio.r$round.md" \
      "$out/$coll.mpi.r$round.json" "$out/$coll.engine.r$round.json" > /dev/null || true
  done
done
