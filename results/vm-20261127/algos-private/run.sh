#!/bin/bash
# Which engine algorithm is fastest on a program's own (private) buffers at 2 ranks: every
# candidate of allgather, alltoall and bcast as a series, interleaved pass by pass (8 passes,
# the median per-pass ratio to the first with its interval and verdict in each document's
# "versus"), MPICH 4.0.2 build, hydra binding each rank to a core. Run while nothing else runs.
#   bash results/vm-20261127/algos-private/run.sh BUILD_DIR OUT_DIR
set -euo pipefail
b=${1:-build-release} out=${2:-.}
run() { mpirun -np 2 -bind-to core "$@"; }
common=(--backend engine --alloc plain -m 8K:8M --repeat 8 -i 100 --iterations-large 10)
run "$b/cb_allgather" "${common[@]}" --algo ring,shm -J "$out/allgather.json"
run "$b/cb_alltoall" "${common[@]}" --algo linear,pairwise,shm -J "$out/alltoall.json"
run "$b/cb_bcast" "${common[@]}" --algo shm,cma,chain -J "$out/bcast.json"
# bcast-one-read.json: the bcast line again after shm_bcast.cpp read the root's buffer in one
# call (same options, -J "$out/bcast-one-read.json").
