#!/usr/bin/env bash
# The main job: dependencies, build, then the default sweep of every benchmark on every
# backend this machine can run, writing JSON (and plots) to results/<host>-<date>/.
#   scripts/run.sh [OUTDIR]
# On several nodes: inside a Slurm allocation, or with CB_HOSTFILE and CB_PPN for mpirun, and
# CB_NP ranks; scripts/sweep.sh reads them (README, "On a cluster").
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/install_deps.sh
bash scripts/build.sh build -DCMAKE_BUILD_TYPE=Release
out=${1:-results/$(hostname -s)-$(date -u +%Y%m%d)}
bash scripts/sweep.sh build "$out"
echo "main job: JSON, tables, plots and summary.md in $out"
