#!/usr/bin/env bash
# cb_info's floors on this VM beside the engine and MPICH 4.0.2 (issue 40, first part):
#   bash results/vm-20261127/floors/run.sh [BUILD_DIR]     (default build/)
# With the quiet lock held (nothing else running): cb_info --floors long, then interleaved
# runs (--backend mpi,engine: each pass runs both series in a shuffled order, the median
# pass reported with its 95 % interval) of allreduce, bcast and barrier at 8 B and allreduce
# at 1-64 MiB, 2 ranks bound to cores 0 and 1 (the pair the floors measure). Then
# scripts/cbfloors.py writes floors.json and floors.md (the fraction of the floor each
# reaches).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
build=${1:-$repo/build}
run=(mpirun -n 2 -bind-to core)
git -C "$repo" describe --always --dirty --abbrev=12 >"$here/tree_revision.txt"
"$build/cb_info" --floors long -J "$here/info.json" >"$here/info.txt"
small=(-m 8:8 --repeat 21 -i 2000 -x 200)
"${run[@]}" "$build/cb_allreduce" --backend mpi,engine "${small[@]}" -J "$here/allreduce.8.json" >"$here/allreduce.8.txt"
"${run[@]}" "$build/cb_bcast" --backend mpi,engine "${small[@]}" -J "$here/bcast.8.json" >"$here/bcast.8.txt"
"${run[@]}" "$build/cb_barrier" --backend mpi,engine --repeat 21 -i 2000 -x 200 -J "$here/barrier.json" >"$here/barrier.txt"
"${run[@]}" "$build/cb_allreduce" --backend mpi,engine -m 1M:64M --repeat 7 -i 20 -x 3 -J "$here/allreduce.large.json" >"$here/allreduce.large.txt"
python3 "$repo/scripts/cbfloors.py" "$here/info.json" "$here"/allreduce.8.json "$here"/bcast.8.json \
  "$here"/barrier.json "$here"/allreduce.large.json --json "$here/floors.json" --md "$here/floors.md"
