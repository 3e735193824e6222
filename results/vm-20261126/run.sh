#!/usr/bin/env bash
# The measurements of 2026-11-26 on the 2-core VM, quiet machine (no build running):
#  1. issues 26 and 30: collbench's allreduce, bcast, reduce_scatter and alltoall on MPICH
#     4.0.2, MPICH 5.0.2 and Open MPI 5.0.11 (--backend mpi, each built against its
#     library), the engine (--backend engine, its buffers and --alloc plain) and the engine
#     preload under each library, 2 ranks, 4 B-64 MiB (alltoall: 4 B-16 MiB per peer), each
#     size the median of 3 passes, -c; comparison.md: engine time / the fastest library's.
#  2. issue 29: collbench against OMB's timing method (tests/fidelity/omb_loop.c) at small
#     sizes, best of 5 interleaved rounds.
set -euo pipefail
cd "$(dirname "$0")/../.."
out=results/vm-20261126
export CB_MPIS="mpich4 mpich5 openmpi5"
targets="cb_allreduce cb_bcast cb_alltoall cb_reduce_scatter cb_copybw cb_engine_preload"
CB_COMPARE_TARGETS=$targets CB_COLLS="allreduce bcast reduce_scatter" CB_SIZES=4:64M \
  bash scripts/compare_mpis.sh "$out/mpis"
CB_COMPARE_TARGETS=$targets CB_COLLS=alltoall CB_SIZES=4:16M \
  bash scripts/compare_mpis.sh "$out/mpis-alltoall"
bash scripts/omb_fidelity.sh --bindir build --out "$out/omb-fidelity"
# 3. issue 28: the engine's neighborhood exchange against MPICH 4.0.2 (cart:1:1: one
#    neighbor at 2 ranks), 4 B-16 MiB, two interleaved rounds.
bash results/vm-20261125/issue28/run.sh build "$out/neighbor" neighbor_alltoall neighbor_allgather
# 4. issues 26 and 30, second stop of the day (4 B-64 MiB, every series of a size range back
#    to back, 3 passes, each ratio within a pass: scripts/compare_mpis.sh's defaults):
#    mpis-s2 before, mpis-s3 after the preload's remembered routes and the pipelined bcast.
targets="cb_allreduce cb_bcast cb_alltoall cb_allgather cb_reduce_scatter cb_copybw cb_engine_preload"
CB_COMPARE_TARGETS=$targets bash scripts/compare_mpis.sh "$out/mpis-s3"
# 5. issue 30: every engine algorithm back to back per size, 2 ranks, plain buffers (the
#    small path's limits in the tuning table).
for c in allreduce bcast alltoall allgather reduce_scatter reduce; do
  mpirun -n 2 build-release/cb_$c --backend engine --alloc plain --algo all -m 4:64K --repeat 3 -q \
    -J "$out/small-path/$c.algo-all.plain.json" > "$out/small-path/$c.algo-all.plain.txt"
done
mpirun -n 2 build-release/cb_barrier --backend engine --algo all --repeat 3 -q \
  -J "$out/small-path/barrier.algo-all.json" > "$out/small-path/barrier.algo-all.txt"
