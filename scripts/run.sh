#!/usr/bin/env bash
# The main job: dependencies, build, then the sweep, writing JSON, plots and summary.md to
# results/<host>-<date>/: by default the headline comparisons (minutes), with --full every
# benchmark on every backend this machine can run (over an hour on a 2-core VM).
#   scripts/run.sh [OUTDIR] [--full] [--quick]
# On several nodes: inside a Slurm allocation, or with CB_HOSTFILE and CB_PPN for mpirun, and
# CB_NP ranks; scripts/sweep.sh reads them (docs/cluster.md, "On a cluster").
# CB_MPI=openmpi5|mpich5|mpich5-abi: another MPI (scripts/mpi_select.sh), built in
# build-$CB_MPI/, results in results/<host>-<date>-$CB_MPI/ (docs/development.md, "Other MPIs").
set -euo pipefail
cd "$(dirname "$0")/.."
out="" opts=()
for arg in "$@"; do
  case "$arg" in
    --full | --quick) opts+=("$arg") ;;
    -*) echo "run.sh: unknown option '$arg' (--full, --quick)" >&2; exit 2 ;;
    *) out=$arg ;;
  esac
done
bash scripts/install_deps.sh
source scripts/mpi_select.sh
cb_mpi_select
build=$(cb_mpi_build_dir build)
bash scripts/build.sh "$build" -DCMAKE_BUILD_TYPE=Release
suffix=
case "${CB_MPI:-}" in "" | mpich4) ;; *) suffix=-$CB_MPI ;; esac
out=${out:-results/$(hostname -s)-$(date -u +%Y%m%d)$suffix}
bash scripts/sweep.sh "$build" "$out" "${opts[@]}"
echo "main job: JSON, tables, plots and summary.md in $out"
